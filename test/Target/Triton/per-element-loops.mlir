// RUN: dyno-opt %s --dyno-triton-lowering-pipeline -o %t.mlir
// RUN: FileCheck %s --check-prefix=LEVEL < %t.mlir
// RUN: dyno-translate --mlir-to-triton %t.mlir | FileCheck %s

// A per-element loop (an scf.while in an elementwise body, as Dyno's lowering of the
// orthogonal polynomials emits): x^n by repeated multiplication, n per element. The
// block loops while any lane's condition holds (tl.any); a lane whose condition fails
// keeps its values (select on the lane mask); loop-carried values start as full blocks.
// LEVEL-LABEL: func.func @kernel_0(
// LEVEL:         %[[K0:.*]] = tl.full
// LEVEL:         %[[R:.*]]:3 = scf.while (%[[K:.*]] = %[[K0]], %{{.*}} = %{{.*}})
// LEVEL:           %[[LANES:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<?xi1>
// LEVEL:           %[[ANY:.*]] = tl.any %[[LANES]] : tensor<?xi1>
// LEVEL:           scf.condition(%[[ANY]]) %{{.*}}, %{{.*}}, %[[LANES]]
// LEVEL:         } do {
// LEVEL:           arith.select
// LEVEL:           scf.yield

// The condition block runs before the loop and again, into the same variables, at the
// end of each iteration.
// CHECK-LABEL: def kernel_0(arg0, arg1, arg2, XBLOCK: tl.constexpr):
// CHECK:         tl.full([XBLOCK],
// CHECK:         [[K:v[0-9]+]] = v{{[0-9]+}}
// CHECK-NEXT:    [[P:v[0-9]+]] = v{{[0-9]+}}
// CHECK:         [[LANES:v[0-9]+]] = (v{{[0-9]+}} & v{{[0-9]+}})
// CHECK-NEXT:    [[GO:v[0-9]+]] = (tl.reduce([[LANES]].to(tl.int32), 0, _dyno_or) != 0)
// CHECK-NEXT:    while [[GO]]:
// CHECK:             tl.where([[LANES]],
// CHECK:             [[K]], [[P]] = v{{[0-9]+}}, v{{[0-9]+}}
// CHECK:             [[LANES]] = (v{{[0-9]+}} & v{{[0-9]+}})
// CHECK-NEXT:        [[GO]] = (tl.reduce([[LANES]].to(tl.int32), 0, _dyno_or) != 0)
// CHECK-NEXT:    tl.store(arg2 + v{{[0-9]+}}, [[P]], mask=
func.func @main(%x: tensor<37xf32>, %n: tensor<37xi64>) -> tensor<37xf32> {
  %r = dyno.launch @kernels::@kernel_0(%x, %n) : (tensor<37xf32>, tensor<37xi64>) -> tensor<37xf32>
  return %r : tensor<37xf32>
}
module @kernels {
  func.func @kernel_0(%x: tensor<37xf32>, %n: tensor<37xi64>) -> tensor<37xf32> {
    %e = tensor.empty() : tensor<37xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %n : tensor<37xf32>, tensor<37xi64>) outs(%e : tensor<37xf32>) {
    ^bb0(%a: f32, %m: i64, %o: f32):
      %zero = arith.constant 0 : i64
      %one = arith.constant 1 : i64
      %fone = arith.constant 1.0 : f32
      %w:2 = scf.while (%k = %zero, %p = %fone) : (i64, f32) -> (i64, f32) {
        %go = arith.cmpi slt, %k, %m : i64
        scf.condition(%go) %k, %p : i64, f32
      } do {
      ^bb0(%k2: i64, %p2: f32):
        %k3 = arith.addi %k2, %one : i64
        %p3 = arith.mulf %p2, %a : f32
        scf.yield %k3, %p3 : i64, f32
      }
      linalg.yield %w#1 : f32
    } -> tensor<37xf32>
    return %r : tensor<37xf32>
  }
}
