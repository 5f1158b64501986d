// RUN: rm -rf %t && split-file %s %t
// RUN: dyno-opt %t/graph.mlir --pass-pipeline="builtin.module(dyno-triton-pipeline,dyno-write-triton{file=%t/kernels.py})" -o %t/lowered.mlir
// RUN: FileCheck %s < %t/kernels.py
// RUN: dyno-translate --mlir-to-triton %t/lowered.mlir | diff - %t/kernels.py
// RUN: FileCheck %s --check-prefix=IR < %t/lowered.mlir
// RUN: not dyno-opt %t/atan.mlir --pass-pipeline="builtin.module(dyno-write-triton{file=%t/none.py})" 2>&1 | FileCheck %s --check-prefix=UNPRINTABLE
// RUN: not test -e %t/none.py
// RUN: not dyno-opt %t/graph.mlir --pass-pipeline="builtin.module(dyno-write-triton)" 2>&1 | FileCheck %s --check-prefix=NONAME

// The kernels of one dyno-opt run, as dyno-translate --mlir-to-triton prints them from
// the run's output; the pass leaves the IR as it was.
// CHECK:   import triton
// CHECK:   def kernel_0(arg0, arg1, XBLOCK: tl.constexpr):
// CHECK:     _dyno_tanh(
// CHECK:   KERNELS = {
// CHECK:     "kernel_0": {"args": ["float32", "float32"], "xnumel": 512, "rnumel": 1,
// IR:      dyno.launch @kernels::@kernel_0
// IR:      func.func @kernel_0({{.*}}: !tl.ptr<f32>

// An op with no Triton spelling (math.atan, which the Triton pipeline would have
// approximated first) is the translation's diagnostic, and no file is written.
// UNPRINTABLE: error: 'math.atan' op cannot be printed as Triton
// NONAME: error: dyno-write-triton needs a file

//--- graph.mlir
func.func @main(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %e = tensor.empty() : tensor<4x128xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x128xf32>) outs(%e : tensor<4x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<4x128xf32>
  return %t : tensor<4x128xf32>
}

//--- atan.mlir
func.func @kernel$atan(%p: !tl.ptr<f32>) attributes {tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}], tl.xnumel = 4 : i64, tl.rnumel = 1 : i64} {
  %r = tl.range "XBLOCK" along 0 : tensor<?xindex>
  %v = tl.load %p[%r] : !tl.ptr<f32>, tensor<?xindex> -> tensor<?xf32>
  %t = math.atan %v : tensor<?xf32>
  tl.store %t, %p[%r] : tensor<?xf32>, !tl.ptr<f32>, tensor<?xindex>
  return
}
