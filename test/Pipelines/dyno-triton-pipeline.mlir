// RUN: dyno-opt %s --dyno-triton-pipeline | FileCheck %s
// RUN: dyno-opt %s --dyno-triton-pipeline | dyno-translate --mlir-to-triton | FileCheck %s --check-prefix=PY

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A tanh feeding a row sum and a matmul: kernel formation keeps the matmul a library
// call; each kernel becomes a Triton-level program; tanh is printed as the prelude's
// helper (upstream's expansion lost all relative accuracy near 0).
// CHECK-LABEL: func.func @main
// CHECK:         %[[T:.*]] = dyno.launch @kernels::@kernel_1(%arg0)
// CHECK:         %[[S:.*]] = dyno.launch @kernels::@kernel_0(%[[T]])
// CHECK:         dyno.contraction "matmul"(%[[T]], %arg1)
// CHECK:       module @kernels
// CHECK:         func.func @kernel_0(%{{.*}}: !tl.ptr<f32>, %{{.*}}: !tl.ptr<f32>)
// CHECK-NOT:       linalg.generic
// CHECK:           tl.reduce "sum"
// CHECK:         func.func @kernel_1(%{{.*}}: !tl.ptr<f32>, %{{.*}}: !tl.ptr<f32>)
// CHECK:           math.tanh
// PY: def kernel_0(arg0, arg1, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
// PY:   tl.reduce({{.*}}, 1, _dyno_sum, keep_dims=True)
// PY: def kernel_1(arg0, arg1, XBLOCK: tl.constexpr):
// PY:   _dyno_tanh(
// PY: KERNELS = {
// PY:   "kernel_0": {"args": ["float32", "float32"], "xnumel": 64, "rnumel": 128,
// PY:   "kernel_1": {"args": ["float32", "float32"], "xnumel": 8192, "rnumel": 1,
func.func @main(%x: tensor<64x128xf32>, %w: tensor<128x32xf32>) -> (tensor<64x32xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  %e1 = tensor.empty() : tensor<64xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%t : tensor<64x128xf32>) outs(%f1 : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %m = linalg.matmul ins(%t, %w : tensor<64x128xf32>, tensor<128x32xf32>) outs(%f2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %m, %s : tensor<64x32xf32>, tensor<64xf32>
}
