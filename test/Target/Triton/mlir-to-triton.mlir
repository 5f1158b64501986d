// RUN: dyno-translate --mlir-to-triton %s | FileCheck %s
// RUN: dyno-opt %s --dyno-triton-lowering-pipeline -o %t.mlir
// RUN: dyno-translate --mlir-to-triton %t.mlir | FileCheck %s --check-prefix=LOWERED

// The printer turns tl kernels into @triton.jit functions, one statement per op.
// CHECK:       import triton.language as tl
// CHECK:       def _dyno_max(a, b):
// CHECK-LABEL: def kernel_0(arg0, arg1, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
// CHECK-NEXT:    v0 = tl.program_id(0)
// CHECK-NEXT:    v1 = XBLOCK
// CHECK-NEXT:    v2 = tl.arange(0, XBLOCK)[:, None]
// CHECK-NEXT:    v3 = tl.arange(0, RBLOCK)[None, :]
// CHECK-NEXT:    v4 = (v0 * v1)
// CHECK-NEXT:    v5 = (v4 + v2)
// CHECK-NEXT:    v6 = (v5 * 64)
// CHECK-NEXT:    v7 = (v6 + v3)
// CHECK-NEXT:    v8 = (v3 < 64)
// CHECK-NEXT:    v9 = tl.load(arg0 + v7, mask=v8, other=0)
// CHECK-NEXT:    v10 = tl.where(v8, v9, float("-inf"))
// CHECK-NEXT:    v11 = tl.reduce(v10, 1, _dyno_max, keep_dims=True)
// CHECK-NEXT:    v12 = tl.erf(v11)
// A constant is never NaN: only the variable operand of an unordered compare is tested.
// CHECK-NEXT:    v13 = ((v12 > 0.5) | (v12 != v12))
// CHECK-NEXT:    v14 = tl.cast(v13, tl.float32)
// CHECK-NEXT:    tl.store(arg1 + v5, v14)
// A loop over the reduced extent carries its accumulator in a variable.
// CHECK-LABEL: def kernel_1(arg0, arg1, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
// CHECK:         v[[STEP:[0-9]+]] = RBLOCK
// CHECK-NEXT:    v[[INIT:[0-9]+]] = tl.full([XBLOCK, RBLOCK], 0.0, tl.float32)
// CHECK-NEXT:    v[[ACC:[0-9]+]] = v[[INIT]]
// CHECK-NEXT:    for v[[R:[0-9]+]] in range(0, 100000, v[[STEP]]):
// CHECK-NEXT:        v{{[0-9]+}} = tl.arange(0, RBLOCK)[None, :]
// CHECK:             v[[NEXT:[0-9]+]] = (v[[ACC]] + v{{[0-9]+}})
// CHECK-NEXT:        v[[ACC]] = v[[NEXT]]
// CHECK:         tl.reduce(v[[ACC]], 1, _dyno_sum, keep_dims=True)
//
// A floored quotient is correctly rounded: tl.math.div_rn for f32 (Triton's f32 `/` is
// approximate); f64's `/` already is, and div_rn rejects f64.
// CHECK-LABEL: def kernel_3(
// CHECK:         = tl.math.div_rn(v{{[0-9]+}}, v{{[0-9]+}})
// CHECK:         v{{[0-9]+}} = (v{{[0-9]+}} / v{{[0-9]+}})
// Rounding, hyperbolic functions and copysign call exact or careful helpers of the
// prelude (upstream's expansions round 0.49999997 to 1 and lose asinh's sign).
// CHECK:         v[[EVEN:[0-9]+]] = _dyno_roundeven(v[[X:[0-9]+]])
// CHECK-NEXT:    v[[ASINH:[0-9]+]] = _dyno_asinh(v[[EVEN]])
// CHECK-NEXT:    v{{[0-9]+}} = _dyno_copysign(v[[ASINH]], v[[X]])
// CHECK-NOT:     div_rn
//
// The launch table: sizes and configurations, the heuristic's first.
// CHECK:       KERNELS = {
// CHECK-NEXT:    "kernel_0": {"args": ["float32", "float32"], "xnumel": 8, "rnumel": 64,
// CHECK-NEXT:        "configs": [{"RBLOCK": 64, "XBLOCK": 2, "num_warps": 1}, {"RBLOCK": 64, "XBLOCK": 4, "num_warps": 1}]},
// CHECK-NEXT:    "kernel_1"
// CHECK:         "kernel_4": {"args": ["bfloat16", "float16", "bool", None, "int64",
// CHECK-SAME:        "float64", "int"],

// The whole lowering of a linalg kernel prints too.
// LOWERED: def kernel_2(arg0, arg1, XBLOCK: tl.constexpr):
// LOWERED:   tl.exp(
// LOWERED:   tl.store(arg1 +

module {
  func.func @kernel_0(%in: !tl.ptr<f32>, %out: !tl.ptr<f32>) attributes {
      tl.configs = [{XBLOCK = 2 : i64, RBLOCK = 64 : i64, num_warps = 1 : i64},
                    {XBLOCK = 4 : i64, RBLOCK = 64 : i64, num_warps = 1 : i64}],
      tl.xnumel = 8 : i64, tl.rnumel = 64 : i64, tl.index_bits = 32 : i64} {
    %c64 = arith.constant 64 : index
    %ninf = arith.constant 0xFF800000 : f32
    %half = arith.constant 0.5 : f32
    %pid = tl.program_id 0
    %xblock = tl.block_size "XBLOCK"
    %xs = tl.range "XBLOCK" along 0 : tensor<?x?xindex>
    %rs = tl.range "RBLOCK" along 1 : tensor<?x?xindex>
    %base = arith.muli %pid, %xblock : index
    %base_block = tl.splat %base : index -> tensor<?x?xindex>
    %rows = arith.addi %base_block, %xs : tensor<?x?xindex>
    %width = tl.splat %c64 : index -> tensor<?x?xindex>
    %row_offsets = arith.muli %rows, %width : tensor<?x?xindex>
    %offsets = arith.addi %row_offsets, %rs : tensor<?x?xindex>
    %mask = arith.cmpi slt, %rs, %width : tensor<?x?xindex>
    %v = tl.load %in[%offsets] mask %mask : !tl.ptr<f32>, tensor<?x?xindex>, tensor<?x?xi1> -> tensor<?x?xf32>
    %ninf_block = tl.splat %ninf : f32 -> tensor<?x?xf32>
    %masked = arith.select %mask, %v, %ninf_block : tensor<?x?xi1>, tensor<?x?xf32>
    %max = tl.reduce "max" %masked along 1 : tensor<?x?xf32>
    %e = math.erf %max : tensor<?x?xf32>
    %half_block = tl.splat %half : f32 -> tensor<?x?xf32>
    %gt = arith.cmpf ugt, %e, %half_block : tensor<?x?xf32>
    %f = arith.uitofp %gt : tensor<?x?xi1> to tensor<?x?xf32>
    tl.store %f, %out[%rows] : tensor<?x?xf32>, !tl.ptr<f32>, tensor<?x?xindex>
    return
  }
  func.func @kernel_1(%in: !tl.ptr<f32>, %out: !tl.ptr<f32>) attributes {
      tl.configs = [{XBLOCK = 1 : i64, RBLOCK = 1024 : i64, num_warps = 4 : i64}],
      tl.xnumel = 1 : i64, tl.rnumel = 100000 : i64, tl.index_bits = 32 : i64} {
    %c0 = arith.constant 0 : index
    %c100000 = arith.constant 100000 : index
    %zero = arith.constant 0.0 : f32
    %step = tl.block_size "RBLOCK"
    %acc0 = tl.full %zero ["XBLOCK", "RBLOCK"] : f32 -> tensor<?x?xf32>
    %acc = scf.for %r = %c0 to %c100000 step %step iter_args(%a = %acc0) -> (tensor<?x?xf32>) {
      %rs = tl.range "RBLOCK" along 1 : tensor<?x?xindex>
      %r_block = tl.splat %r : index -> tensor<?x?xindex>
      %offsets = arith.addi %r_block, %rs : tensor<?x?xindex>
      %v = tl.load %in[%offsets] : !tl.ptr<f32>, tensor<?x?xindex> -> tensor<?x?xf32>
      %n = arith.addf %a, %v : tensor<?x?xf32>
      scf.yield %n : tensor<?x?xf32>
    }
    %sum = tl.reduce "sum" %acc along 1 : tensor<?x?xf32>
    %at = tl.full %c0 ["XBLOCK", "1"] : index -> tensor<?x?xindex>
    tl.store %sum, %out[%at] : tensor<?x?xf32>, !tl.ptr<f32>, tensor<?x?xindex>
    return
  }
  func.func @kernel_3(%a: !tl.ptr<f32>, %b: !tl.ptr<f64>, %out32: !tl.ptr<f32>,
                      %out64: !tl.ptr<f64>) attributes {
      tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}],
      tl.xnumel = 4 : i64, tl.rnumel = 1 : i64, tl.index_bits = 32 : i64} {
    %xs = tl.range "XBLOCK" along 0 : tensor<?x?xindex>
    %x = tl.load %a[%xs] : !tl.ptr<f32>, tensor<?x?xindex> -> tensor<?x?xf32>
    %q = arith.divf %x, %x : tensor<?x?xf32>
    %fq = math.floor %q : tensor<?x?xf32>
    tl.store %fq, %out32[%xs] : tensor<?x?xf32>, !tl.ptr<f32>, tensor<?x?xindex>
    %y = tl.load %b[%xs] : !tl.ptr<f64>, tensor<?x?xindex> -> tensor<?x?xf64>
    %r = arith.divf %y, %y : tensor<?x?xf64>
    %fr = math.floor %r : tensor<?x?xf64>
    tl.store %fr, %out64[%xs] : tensor<?x?xf64>, !tl.ptr<f64>, tensor<?x?xindex>
    %even = math.roundeven %x : tensor<?x?xf32>
    %asinh = math.asinh %even : tensor<?x?xf32>
    %signed = math.copysign %asinh, %x : tensor<?x?xf32>
    tl.store %signed, %out32[%xs] : tensor<?x?xf32>, !tl.ptr<f32>, tensor<?x?xindex>
    return
  }
  // Each argument's launch-table type: the torch dtype a pointer points to, "int" for a
  // size, None for a signless i8 (int8 or uint8).
  func.func @kernel_4(%b: !tl.ptr<bf16>, %h: !tl.ptr<f16>, %m: !tl.ptr<i1>, %c: !tl.ptr<i8>,
                      %l: !tl.ptr<i64>, %d: !tl.ptr<f64>, %n: index) attributes {
      tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}],
      tl.xnumel = 4 : i64, tl.rnumel = 1 : i64, tl.index_bits = 32 : i64} {
    return
  }
  module @kernels {
    func.func @kernel_2(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %e = tensor.empty() : tensor<4x8xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
      ^bb0(%a: f32, %o: f32):
        %n = math.exp %a : f32
        linalg.yield %n : f32
      } -> tensor<4x8xf32>
      return %r : tensor<4x8xf32>
    }
  }
}
