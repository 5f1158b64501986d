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
