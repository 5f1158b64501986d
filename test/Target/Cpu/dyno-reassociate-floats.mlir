// RUN: dyno-opt %s --dyno-reassociate-floats | FileCheck %s

// Outside reduction updates: `contract`, and `arcp` on divisions only.
// CHECK-LABEL: func.func @arith$flags
func.func @arith$flags(%a: f32, %b: f32) -> (f32, f32, f32, f32, i32) {
  // CHECK: arith.addf %arg0, %arg1 fastmath<contract> : f32
  %0 = arith.addf %a, %b : f32
  // Flags already present are kept; none that change NaN/Inf semantics are added.
  // A multiplication gets no `arcp`: LLVM would sink x * (1 / y) into x / y.
  // CHECK: arith.mulf %arg0, %arg1 fastmath<contract,afn> : f32
  %1 = arith.mulf %a, %b fastmath<afn> : f32
  // CHECK: arith.maximumf %arg0, %arg1 fastmath<contract> : f32
  %2 = arith.maximumf %a, %b : f32
  // CHECK: arith.divf %arg0, %arg1 fastmath<arcp,contract> : f32
  %3 = arith.divf %a, %b : f32
  // CHECK: arith.fptosi %arg0 : f32 to i32
  %4 = arith.fptosi %a : f32 to i32
  return %0, %1, %2, %3, %4 : f32, f32, f32, f32, i32
}

// A reduction's update (loaded from and stored back to the same element) gets
// `reassoc`, so that LLVM vectorizes the reduction; sums and products alike.
// CHECK-LABEL: func.func @reduction$updates
func.func @reduction$updates(%x: memref<8xf32>, %sum: memref<1xf32>, %product: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %s = memref.load %sum[%c0] : memref<1xf32>
    // CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
    %s2 = arith.addf %v, %s : f32
    memref.store %s2, %sum[%c0] : memref<1xf32>
    %p = memref.load %product[%c0] : memref<1xf32>
    // CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
    %p2 = arith.mulf %v, %p : f32
    memref.store %p2, %product[%c0] : memref<1xf32>
  }
  return
}

// A quotient that is floored, truncated or compared stays correctly rounded: under
// `arcp`, LLVM divides by a constant as x * (1 / c), and trunc(1083 * 0.3 / 0.3) was
// 1082 in f32.
// CHECK-LABEL: func.func @division$exact_when_rounded
func.func @division$exact_when_rounded(%a: f32) -> (f32, i1) {
  %c = arith.constant 3.000000e-01 : f32
  // CHECK: %[[Q:.*]] = arith.divf %arg0, %{{.*}} fastmath<contract> : f32
  %q = arith.divf %a, %c : f32
  // CHECK: math.trunc %[[Q]]
  %t = math.trunc %q : f32
  // CHECK: %[[R:.*]] = arith.divf %arg0, %{{.*}} fastmath<contract> : f32
  %r = arith.divf %a, %c : f32
  %n = arith.negf %r : f32
  // CHECK: arith.cmpf
  %k = arith.cmpf olt, %n, %c : f32
  return %t, %k : f32, i1
}

// No reciprocal approximation around square roots: LLVM turned 1 / sqrt(x) into x86's
// rsqrt estimate (NaN for 0 and infinity), also through a negation with `arcp`.
// CHECK-LABEL: func.func @sqrt$exact_reciprocal
func.func @sqrt$exact_reciprocal(%a: f32, %b: f32) -> (f32, f32, f32, f32) {
  // CHECK: %[[S:.*]] = math.sqrt %arg0 fastmath<contract> : f32
  %0 = math.sqrt %a : f32
  // CHECK: arith.divf %arg1, %[[S]] fastmath<contract> : f32
  %1 = arith.divf %b, %0 : f32
  // CHECK: math.rsqrt %arg0 fastmath<contract> : f32
  %2 = math.rsqrt %a : f32
  // CHECK: arith.negf %{{.*}} fastmath<contract> : f32
  %3 = arith.negf %2 : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// Roundings to bf16 and back get no flags: with `contract` on both, the canonicalizer
// folds extf(truncf(x)) to x, and x.to(bfloat16).float() computed x (a miscompile).
// CHECK-LABEL: func.func @rounding$kept
func.func @rounding$kept(%a: f32) -> f32 {
  // CHECK: %[[R:.*]] = arith.truncf %arg0 : f32 to bf16
  // CHECK: arith.extf %[[R]] : bf16 to f32
  // CHECK-NOT: fastmath
  %0 = arith.truncf %a : f32 to bf16
  %1 = arith.extf %0 : bf16 to f32
  return %1 : f32
}
