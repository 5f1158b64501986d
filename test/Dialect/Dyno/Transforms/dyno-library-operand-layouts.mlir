// RUN: dyno-opt %s --split-input-file --dyno-library-operand-layouts | FileCheck %s

#bshd = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pos = affine_map<(d0, d1, d2, d3) -> (d2, d3)>

// q = rope(projection viewed [b, s, h, d], transposed to [b, h, s, d]), read by attention
// only: the kernel iterates [b, s, h, d], reading and writing rows of the projection, and
// attention reads a transposed view; the cosines' map and linalg.index (the head, now
// loop 2) follow the loops.
// CHECK-LABEL: func.func @attention_query
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[POS:map[0-9]*]], #[[ID]]]
// CHECK-SAME:      outs(%{{.*}} : tensor<2x8x4x16xf32>)
// CHECK:           linalg.index 2 : index
// CHECK:         %[[Q:.*]] = linalg.transpose ins(%[[R]] : tensor<2x8x4x16xf32>) outs(%{{.*}} : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
// CHECK:         dyno.library_call "aten.scaled_dot_product_attention.default"(%[[Q]], %[[Q]], %[[Q]])
func.func @attention_query(%p: tensor<2x8x4x16xf32>, %cos: tensor<8x16xf32>) -> tensor<2x4x8x16xf32> {
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %q = linalg.generic {indexing_maps = [#bshd, #pos, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p, %cos : tensor<2x8x4x16xf32>, tensor<8x16xf32>) outs(%e : tensor<2x4x8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %h = linalg.index 1 : index
    %hi = arith.index_cast %h : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %m, %hf : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x16xf32>
  %o = dyno.library_call "aten.scaled_dot_product_attention.default"(%q, %q, %q) {arguments = [unit, unit, unit, none, 0.0 : f64, true, none, false]} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

#kv = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

// Grouped-query heads repeated ([b, kv heads, repeats, s, d] from [b, s, kv heads, d]),
// collapsed into attention's heads: the repeats' loop (not read) follows the kv heads',
// so that the collapse of the transposed view is still a view.
// CHECK-LABEL: func.func @repeated_kv_heads
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      outs(%{{.*}} : tensor<2x8x2x3x16xf32>)
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[R]] : tensor<2x8x2x3x16xf32>) outs(%{{.*}} : tensor<2x2x3x8x16xf32>) permutation = [0, 2, 3, 1, 4]
// CHECK:         tensor.collapse_shape %[[T]]
func.func @repeated_kv_heads(%p: tensor<2x8x2x16xf32>, %q: tensor<2x6x8x16xf32>) -> tensor<2x6x8x16xf32> {
  %e = tensor.empty() : tensor<2x2x3x8x16xf32>
  %k = linalg.generic {indexing_maps = [#kv, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<2x8x2x16xf32>) outs(%e : tensor<2x2x3x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x2x3x8x16xf32>
  %heads = tensor.collapse_shape %k [[0], [1, 2], [3], [4]] : tensor<2x2x3x8x16xf32> into tensor<2x6x8x16xf32>
  %o = dyno.library_call "aten.scaled_dot_product_attention.default"(%q, %heads, %heads) {arguments = [unit, unit, unit, none, 0.0 : f64, true, none, false]} : (tensor<2x6x8x16xf32>, tensor<2x6x8x16xf32>, tensor<2x6x8x16xf32>) -> tensor<2x6x8x16xf32>
  return %o : tensor<2x6x8x16xf32>
}

// -----

#tr = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A kernel result that a kernel also reads, or that a collective reads, keeps its layout.
// CHECK-LABEL: func.func @other_readers
// CHECK-NOT:     linalg.transpose
func.func @other_readers(%x: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %r = dyno.library_call "_c10d_functional.all_reduce.default"(%t) {arguments = [unit, "sum", "0"]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %l = dyno.library_call "aten.linalg_inv_ex.default"(%u) {arguments = [unit, false]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%u : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  return %r, %w : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#same = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// Collapsed [b, h * s, d] for the call: h and s are not neighbours in the read order
// [b, s, h, d], so the collapse of the transposed view would be a copy; the layout stays.
// CHECK-LABEL: func.func @collapse_across_the_order
// CHECK-NOT:     linalg.transpose
func.func @collapse_across_the_order(%p: tensor<2x8x4x16xf32>) -> tensor<2x32x16xf32> {
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %q = linalg.generic {indexing_maps = [#perm, #same], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<2x8x4x16xf32>) outs(%e : tensor<2x4x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<2x4x8x16xf32>
  %c = tensor.collapse_shape %q [[0], [1, 2], [3]] : tensor<2x4x8x16xf32> into tensor<2x32x16xf32>
  %r = dyno.library_call "aten._fft_c2c.default"(%c) {arguments = [unit, array<i64: 2>, 0 : i64, true]} : (tensor<2x32x16xf32>) -> tensor<2x32x16xf32>
  return %r : tensor<2x32x16xf32>
}

// -----

#tr2 = affine_map<(d0, d1) -> (d1, d0)>
#id2b = affine_map<(d0, d1) -> (d0, d1)>

// A body that reads its init (the output's previous value) keeps its layout: the new,
// reordered generic would start from an empty tensor.
// CHECK-LABEL: func.func @body_reads_its_init
// CHECK-NOT:     linalg.transpose
func.func @body_reads_its_init(%x: tensor<8x4xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %t = linalg.generic {indexing_maps = [#tr2, #id2b], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%y : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.addf %a, %o : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %l = dyno.library_call "aten.linalg_inv_ex.default"(%t) {arguments = [unit, false]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %l : tensor<4x8xf32>
}

// -----

#tr3 = affine_map<(d0, d1) -> (d1, d0)>
#id3b = affine_map<(d0, d1) -> (d0, d1)>

// Reading its input in the order that would put the result's last dimension first: the
// library's last dimension stays dense, the layout stays.
// CHECK-LABEL: func.func @innermost_stays_innermost
// CHECK-NOT:     linalg.transpose
func.func @innermost_stays_innermost(%x: tensor<16x8xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %t = linalg.generic {indexing_maps = [#tr3, #id3b], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8x16xf32>
  %l = dyno.library_call "aten.linalg_inv_ex.default"(%t) {arguments = [unit, false]} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %l : tensor<8x16xf32>
}
