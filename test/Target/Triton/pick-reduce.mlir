// RUN: dyno-translate --mlir-to-triton %s | FileCheck %s

// tl.pick_reduce prints as one tl.reduce over a (values, positions) tuple with the
// prelude's pair combiner; both results are bound at once.
// CHECK:       def _dyno_pick_max_first(v1, p1, v2, p2):
// CHECK-NEXT:      second = (v2 > v1) | ((v2 == v1) & (p2 < p1))
// CHECK:       def _dyno_pick_min_last(v1, p1, v2, p2):
// CHECK-NEXT:      second = (v2 < v1) | ((v2 == v1) & (p2 > p1))
// CHECK-LABEL: def kernel_0(
// CHECK:         [[V:v[0-9]+]], [[P:v[0-9]+]] = tl.reduce(([[X:v[0-9]+]], [[I:v[0-9]+]]), 1, _dyno_pick_max_first, keep_dims=True)
// CHECK:         [[W:v[0-9]+]], [[Q:v[0-9]+]] = tl.reduce(([[X]], [[I]]), 1, _dyno_pick_min_last, keep_dims=True)
// CHECK:         tl.store(arg1 + v{{[0-9]+}}, [[P]])
// CHECK:         tl.store(arg1 + v{{[0-9]+}}, [[Q]])
module {
  func.func @kernel_0(%in: !tl.ptr<f32>, %out: !tl.ptr<i64>) attributes {
      tl.configs = [{XBLOCK = 1 : i64, RBLOCK = 64 : i64, num_warps = 1 : i64}],
      tl.xnumel = 8 : i64, tl.rnumel = 64 : i64, tl.index_bits = 32 : i64} {
    %c64 = arith.constant 64 : index
    %pid = tl.program_id 0
    %rs = tl.range "RBLOCK" along 1 : tensor<?x?xindex>
    %row = tl.splat %pid : index -> tensor<?x?xindex>
    %width = tl.splat %c64 : index -> tensor<?x?xindex>
    %base = arith.muli %row, %width : tensor<?x?xindex>
    %offsets = arith.addi %base, %rs : tensor<?x?xindex>
    %x = tl.load %in[%offsets] : !tl.ptr<f32>, tensor<?x?xindex> -> tensor<?x?xf32>
    %i = arith.index_cast %rs : tensor<?x?xindex> to tensor<?x?xi64>
    %v, %p = tl.pick_reduce "max" first %x, %i along 1 : tensor<?x?xf32>, tensor<?x?xi64>
    %w, %q = tl.pick_reduce "min" %x, %i along 1 : tensor<?x?xf32>, tensor<?x?xi64>
    tl.store %p, %out[%row] : tensor<?x?xi64>, !tl.ptr<i64>, tensor<?x?xindex>
    tl.store %q, %out[%row] : tensor<?x?xi64>, !tl.ptr<i64>, tensor<?x?xindex>
    return
  }
}
