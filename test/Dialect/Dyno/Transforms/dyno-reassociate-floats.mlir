// RUN: dyno-opt %s --dyno-reassociate-floats | FileCheck %s

// CHECK-LABEL: func.func @arith$flags
func.func @arith$flags(%a: f32, %b: f32) -> (f32, f32, f32, i32) {
  // CHECK: arith.addf %arg0, %arg1 fastmath<reassoc,arcp,contract> : f32
  %0 = arith.addf %a, %b : f32
  // Flags already present are kept; none that change NaN/Inf semantics are added.
  // CHECK: arith.mulf %arg0, %arg1 fastmath<reassoc,arcp,contract,afn> : f32
  %1 = arith.mulf %a, %b fastmath<afn> : f32
  // CHECK: arith.maximumf %arg0, %arg1 fastmath<reassoc,arcp,contract> : f32
  %2 = arith.maximumf %a, %b : f32
  // CHECK: arith.fptosi %arg0 : f32 to i32
  %3 = arith.fptosi %a : f32 to i32
  return %0, %1, %2, %3 : f32, f32, f32, i32
}

// No reciprocal approximation around square roots: LLVM turned 1 / sqrt(x) into x86's
// rsqrt estimate (NaN for 0 and infinity).
// CHECK-LABEL: func.func @sqrt$exact_reciprocal
func.func @sqrt$exact_reciprocal(%a: f32, %b: f32) -> (f32, f32, f32) {
  // CHECK: %[[S:.*]] = math.sqrt %arg0 fastmath<reassoc,contract> : f32
  %0 = math.sqrt %a : f32
  // CHECK: arith.divf %arg1, %[[S]] fastmath<reassoc,contract> : f32
  %1 = arith.divf %b, %0 : f32
  // CHECK: math.rsqrt %arg0 fastmath<reassoc,contract> : f32
  %2 = math.rsqrt %a : f32
  return %0, %1, %2 : f32, f32, f32
}
