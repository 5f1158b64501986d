// RUN: dyno-opt %s --dyno-fuse-elementwise --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @recompute$cheap_shared_producer
// CHECK:         %[[VAR:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0, %arg1
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%arg0, %arg1, %[[VAR]]
// CHECK:           arith.subf
// CHECK-NOT:     linalg.generic
// Cheap all-parallel producer with two users: recomputed in both.
func.func @recompute$cheap_shared_producer(%x: tensor<4x16xf32>, %m: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %c = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %v = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%c : tensor<4x16xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    %t = arith.addf %s, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %v : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.mulf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x16xf32>
  return %v, %n : tensor<4xf32>, tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @recompute$transcendental_shared_producer
// CHECK:         %[[EXP:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] :
// CHECK-NOT:       math.exp
// CHECK:         linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] :
// CHECK-NOT:       math.exp
// exp has two users: computed once, not in each consumer.
func.func @recompute$transcendental_shared_producer(%x: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = math.exp %a : f32
    linalg.yield %d : f32
  } -> tensor<4x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x16xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %s : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<4x16xf32>
  return %s, %d : tensor<4xf32>, tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @recompute$no_transcendental_broadcast
// CHECK:         %[[RSQRT:.*]] = linalg.generic
// CHECK:           math.rsqrt
// CHECK:         linalg.generic {{.*}} ins(%arg0, %[[RSQRT]] :
// CHECK-NOT:       math.rsqrt
// A per-row rsqrt read with broadcasting is not recomputed per element.
func.func @recompute$no_transcendental_broadcast(%x: tensor<4x16xf32>, %v: tensor<4xf32>) -> tensor<4x16xf32> {
  %e1 = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = math.rsqrt %a : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %r : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.mulf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @generalize$transpose
// CHECK-NOT:     linalg.transpose ins(%arg0
// CHECK:         %[[NEG:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x4xf32>)
// CHECK:           arith.negf
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%arg1
// CHECK:         linalg.matmul ins(%[[NEG]], %[[WT]] :
// A transpose feeding an elementwise op folds into its indexing map; one feeding a
// matmul stays a transpose (the library takes the strided view).
func.func @generalize$transpose(%x: tensor<8x4xf32>, %w: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.negf %a : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e2 : tensor<8x16xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%r, %wt : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r, %m : tensor<4x8xf32>, tensor<4x16xf32>
}

// -----

// A reshape feeding a matmul is not propagated through it (that would turn the matmul
// into a linalg.generic contraction no library call matches).
// CHECK-LABEL: func.func @reshape$into_matmul
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %arg0
// CHECK:         linalg.matmul ins(%[[FLAT]], %arg1
// CHECK-NOT:     linalg.generic
func.func @reshape$into_matmul(%x: tensor<4x8x16xf32>, %w: tensor<16x32xf32>) -> tensor<32x32xf32> {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %m = linalg.matmul ins(%flat, %w : tensor<32x16xf32>, tensor<16x32xf32>) outs(%f : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %m : tensor<32x32xf32>
}

// -----

// An embedding lookup feeding a sum of squares (RMSNorm's variance): the gather reads
// its table with tensor.extract, so only the token ids are its inputs. The reduction
// gains an input that carries the gathered rows' shape (its block argument unused), and
// the lookup and the squares fuse into it: no tensor of squares is written.
#ids = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @gather_into_reduction
// CHECK-SAME: (%[[IDS:.*]]: tensor<8xi64>, %[[TABLE:.*]]: tensor<32x16xf32>)
// CHECK: %[[SHAPE:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[IDS]], %[[SHAPE]] : tensor<8xi64>, tensor<8x16xf32>)
// CHECK: tensor.extract %[[TABLE]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[SUM]]
func.func @gather_into_reduction(%ids: tensor<8xi64>, %table: tensor<32x16xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %rows = linalg.generic {indexing_maps = [#ids, #all], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%id: i64, %out: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %id : i64 to index
    %v = tensor.extract %table[%row, %col] : tensor<32x16xf32>
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %squares = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel"]}
      ins(%rows : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.mulf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %acc0 = tensor.empty() : tensor<8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#all, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%squares : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%s: f32, %a: f32):
    %r = arith.addf %s, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

// A reduction whose body yields its init unchanged (a bounds check whose condition
// folded to true) computes nothing: its result is its init.
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @reduction_yielding_its_init
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK-NOT: linalg.generic
// CHECK: return %[[FILL]]
func.func @reduction_yielding_its_init(%x: tensor<12xi64>) -> tensor<i1> {
  %true = arith.constant true
  %e = tensor.empty() : tensor<i1>
  %init = linalg.fill ins(%true : i1) outs(%e : tensor<i1>) -> tensor<i1>
  %r = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]}
      ins(%x : tensor<12xi64>) outs(%init : tensor<i1>) {
  ^bb0(%in: i64, %out: i1):
    linalg.yield %out : i1
  } -> tensor<i1>
  return %r : tensor<i1>
}

// -----

// CHECK-LABEL: func.func @transpose$around_library_call
// CHECK:         %[[Q:.*]] = linalg.transpose ins(%arg0
// CHECK:         %[[O:.*]] = dyno.library_call "aten.scaled_dot_product_attention.default"(%[[Q]], %[[Q]], %[[Q]])
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[O]]
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[T]]
// CHECK:         linalg.matmul ins(%[[C]]
// CHECK-NOT:     linalg.generic
// Attention's operands and its transposed output, collapsed into a matmul's rows, stay
// views (the host permutes them): generalized, each transpose would be a copy kernel.
func.func @transpose$around_library_call(%x: tensor<2x8x4x16xf32>, %w: tensor<64x32xf32>, %acc: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %q = linalg.transpose ins(%x : tensor<2x8x4x16xf32>) outs(%e : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %o = dyno.library_call "aten.scaled_dot_product_attention.default"(%q, %q, %q) {arguments = [unit, unit, unit, none, 0.0 : f64, true, none, false]} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %e2 = tensor.empty() : tensor<2x8x4x16xf32>
  %t = linalg.transpose ins(%o : tensor<2x4x8x16xf32>) outs(%e2 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %c = tensor.collapse_shape %t [[0, 1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<16x64xf32>
  %m = linalg.matmul ins(%c, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %m : tensor<16x32xf32>
}

// -----

// CHECK-LABEL: func.func @transpose$into_collective
// CHECK:         linalg.generic
// CHECK:         dyno.library_call "_c10d_functional.all_reduce.default"
// A collective is handed a dense tensor: the transpose is computed.
func.func @transpose$into_collective(%x: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %r = dyno.library_call "_c10d_functional.all_reduce.default"(%t) {arguments = [unit, "sum", "0"]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row4 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>

// CHECK-LABEL: func.func @concat$rotate_half
// CHECK-NOT:     tensor.concat
// CHECK-DAG:     %[[X1:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 8, 4, 8]
// CHECK-DAG:     %[[X2:.*]] = tensor.extract_slice %arg0[0, 0, 0, 8] [2, 8, 4, 8]
// CHECK:         %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME:      ins(%{{.*}}, %{{.*}}, %[[X2]], %[[X1]], %{{.*}} : tensor<2x8x4x2x8xf32>, tensor<8x2x8xf32>, tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>, tensor<8x2x8xf32>)
// CHECK:           %[[K:.*]] = linalg.index 3 : index
// CHECK:           %[[NEG:.*]] = arith.negf
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %c0
// CHECK:           arith.select %[[FIRST]], %[[NEG]]
// CHECK:         tensor.collapse_shape %[[R]] {{\[}}[0], [1], [2], [3, 4]]
// CHECK-NOT:     linalg.generic
// Rotary embeddings, x * cos + cat(-x2, x1) * sin with x a transposed projection: one
// generic, the concatenation a selection between its two equal halves, the halves the
// transpose's slices recomputed from the projection.
func.func @concat$rotate_half(%p: tensor<2x8x4x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>) -> tensor<2x4x8x16xf32> {
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %x = linalg.transpose ins(%p : tensor<2x8x4x16xf32>) outs(%e : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %eh = tensor.empty() : tensor<2x4x8x8xf32>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x2 : tensor<2x4x8x8xf32>) outs(%eh : tensor<2x4x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<2x4x8x8xf32>
  %r = tensor.concat dim(3) %n, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %y = linalg.generic {indexing_maps = [#id4, #row4, #id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos, %r, %sin : tensor<2x4x8x16xf32>, tensor<8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<2x4x8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %o: f32):
    %u = arith.mulf %a, %c : f32
    %v = arith.mulf %b, %s : f32
    %w = arith.addf %u, %v : f32
    linalg.yield %w : f32
  } -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @concat$unequal_pieces
// CHECK:         tensor.concat
// Pieces of different sizes stay a concatenation.
func.func @concat$unequal_pieces(%a: tensor<4x8xf32>, %b: tensor<4x4xf32>) -> tensor<4x12xf32> {
  %r = tensor.concat dim(1) %a, %b : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  return %r : tensor<4x12xf32>
}

// -----

// CHECK-LABEL: func.func @concat$pieces_of_dynamic_sizes
// CHECK:         tensor.concat
// roll(x, 1, -1): two pieces of one type whose sizes (1 and 6) are known only at run
// time stay a concatenation.
func.func @concat$pieces_of_dynamic_sizes(%x: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %a = tensor.extract_slice %x[0, 6] [5, 1] [1, 1] : tensor<5x7xf32> to tensor<5x1xf32>
  %b = tensor.extract_slice %x[0, 0] [5, 6] [1, 1] : tensor<5x7xf32> to tensor<5x6xf32>
  %ca = tensor.cast %a : tensor<5x1xf32> to tensor<5x?xf32>
  %cb = tensor.cast %b : tensor<5x6xf32> to tensor<5x?xf32>
  %r = tensor.concat dim(1) %ca, %cb : (tensor<5x?xf32>, tensor<5x?xf32>) -> tensor<5x7xf32>
  return %r : tensor<5x7xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @transpose$of_a_kernel_into_matmul_rows
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic
// CHECK:         linalg.matmul
// A transpose of what a kernel computes, collapsed into a matmul's rows, is generalized:
// the kernel writes the transposed layout, where a host view would be copied by the
// host's reshape after it (Swin's windows).
func.func @transpose$of_a_kernel_into_matmul_rows(%x: tensor<4x8x16xf32>, %w: tensor<64x8xf32>, %acc: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<4x8x16xf32>
  %n = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x8x16xf32>) outs(%e : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8x16xf32>
  %e2 = tensor.empty() : tensor<8x4x16xf32>
  %t = linalg.transpose ins(%n : tensor<4x8x16xf32>) outs(%e2 : tensor<8x4x16xf32>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<8x4x16xf32> into tensor<8x64xf32>
  %m = linalg.matmul ins(%c, %w : tensor<8x64xf32>, tensor<64x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @slice$of_a_generic_read_through_floordiv
// CHECK:         %[[G:.*]] = linalg.generic
// CHECK:         tensor.extract_slice %[[G]][1] [2] [1]
// A slice of a generic whose input map is not a projected permutation (each element of
// %x read twice) stays a slice of it: the operands' slices would be computed as if the
// map were linear ([-x0, -x0] where [-x0, -x1] is meant).
func.func @slice$of_a_generic_read_through_floordiv(%x: tensor<4xf32>) -> tensor<2xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0 floordiv 2)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %s = tensor.extract_slice %t[1] [2] [1] : tensor<8xf32> to tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

// A row mean read through two equal expand_shapes (a layer norm's statistics, read in
// the order of Swin's windows by the variance and by the normalization): the expansions
// are one, the mean has one user, and reshape propagation computes it in the expanded
// shape, so that the norm needs no reshape of a computed tensor (one Triton index space).
// CHECK-LABEL: func.func @equal_expansions_of_a_reduction_are_one
// CHECK:         tensor.expand_shape %arg0 {{\[}}[0, 1], [2]]
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NOT:     tensor.expand_shape %[[MEAN]]
// CHECK:         linalg.generic {{.*}}ins(%{{.*}}, %[[MEAN]]
#r3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#r3row = affine_map<(d0, d1, d2) -> (d0, d1)>
#r2 = affine_map<(d0, d1) -> (d0, d1)>
#r2row = affine_map<(d0, d1) -> (d0)>
#r3tr = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#r3rowtr = affine_map<(d0, d1, d2) -> (d1, d0)>
func.func @equal_expansions_of_a_reduction_are_one(%x: tensor<8x16xf32>, %xw: tensor<4x2x16xf32>) -> (tensor<4x2x16xf32>, tensor<4x2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %mean = linalg.generic {indexing_maps = [#r2, #r2row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x16xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %m1 = tensor.expand_shape %mean [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %m2 = tensor.expand_shape %mean [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %e3 = tensor.empty() : tensor<4x2x16xf32>
  %c = linalg.generic {indexing_maps = [#r3, #r3rowtr, #r3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xw, %m1 : tensor<4x2x16xf32>, tensor<2x4xf32>) outs(%e3 : tensor<4x2x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %s = arith.mulf %d, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x2x16xf32>
  %n = linalg.generic {indexing_maps = [#r3, #r3rowtr, #r3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xw, %m2 : tensor<4x2x16xf32>, tensor<2x4xf32>) outs(%e3 : tensor<4x2x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x2x16xf32>
  return %c, %n : tensor<4x2x16xf32>, tensor<4x2x16xf32>
}

// -----

// Swin's shifted-window regions: a generic of its indices alone (10 ops, above the
// recompute limit of 8 for producers that load), read through two different
// expansions by one consumer. Each expansion gets a copy, expanded and fused into the
// reader, where it is recomputed from indices: no generic is left to store the regions.
// CHECK-LABEL: func.func @index_only_generic_read_through_two_expansions
// CHECK-NOT:     tensor.expand_shape
// CHECK:         %[[R:.*]] = linalg.generic {{.*}}"parallel"]} outs(%{{.*}} : tensor<2x4x4x2xf32>)
// CHECK-COUNT-4: linalg.index
// CHECK:         arith.subf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]
func.func @index_only_generic_read_through_two_expansions() -> tensor<2x4x4x2xf32> {
  %c6 = arith.constant 6 : i64
  %c4 = arith.constant 4 : i64
  %e = tensor.empty() : tensor<8xi64>
  %regions = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<8xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %j = arith.index_cast %i : index to i64
    %a = arith.cmpi sge, %j, %c6 : i64
    %b = arith.extui %a : i1 to i64
    %c = arith.cmpi sge, %j, %c4 : i64
    %d = arith.extui %c : i1 to i64
    %s = arith.addi %d, %b : i64
    %m = arith.muli %s, %s : i64
    %t = arith.addi %m, %s : i64
    linalg.yield %t : i64
  } -> tensor<8xi64>
  %rows = tensor.expand_shape %regions [[0, 1]] output_shape [2, 4] : tensor<8xi64> into tensor<2x4xi64>
  %columns = tensor.expand_shape %regions [[0, 1]] output_shape [4, 2] : tensor<8xi64> into tensor<4x2xi64>
  %o = tensor.empty() : tensor<2x4x4x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rows, %columns : tensor<2x4xi64>, tensor<4x2xi64>) outs(%o : tensor<2x4x4x2xf32>) {
  ^bb0(%x: i64, %y: i64, %out: f32):
    %fx = arith.sitofp %x : i64 to f32
    %fy = arith.sitofp %y : i64 to f32
    %d = arith.subf %fx, %fy : f32
    linalg.yield %d : f32
  } -> tensor<2x4x4x2xf32>
  return %r : tensor<2x4x4x2xf32>
}

// -----

// A generic with no inputs that gathers from a table inside its body reads memory: it
// keeps the limit of producers that load (8 ops; this one has 10) and is not copied
// per reshape.
// CHECK-LABEL: func.func @gather_without_inputs_is_not_recomputed
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xi64>)
// CHECK:           tensor.extract
// CHECK-COUNT-2: tensor.expand_shape %[[G]]
func.func @gather_without_inputs_is_not_recomputed(%table: tensor<16xi64>) -> tensor<2x4x4x2xf32> {
  %c6 = arith.constant 6 : i64
  %c4 = arith.constant 4 : i64
  %e = tensor.empty() : tensor<8xi64>
  %regions = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<8xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %v = tensor.extract %table[%i] : tensor<16xi64>
    %a = arith.cmpi sge, %v, %c6 : i64
    %b = arith.extui %a : i1 to i64
    %c = arith.cmpi sge, %v, %c4 : i64
    %d = arith.extui %c : i1 to i64
    %s = arith.addi %d, %b : i64
    %m = arith.muli %s, %s : i64
    %t = arith.addi %m, %s : i64
    linalg.yield %t : i64
  } -> tensor<8xi64>
  %rows = tensor.expand_shape %regions [[0, 1]] output_shape [2, 4] : tensor<8xi64> into tensor<2x4xi64>
  %columns = tensor.expand_shape %regions [[0, 1]] output_shape [4, 2] : tensor<8xi64> into tensor<4x2xi64>
  %o = tensor.empty() : tensor<2x4x4x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rows, %columns : tensor<2x4xi64>, tensor<4x2xi64>) outs(%o : tensor<2x4x4x2xf32>) {
  ^bb0(%x: i64, %y: i64, %out: f32):
    %fx = arith.sitofp %x : i64 to f32
    %fy = arith.sitofp %y : i64 to f32
    %d = arith.subf %fx, %fy : f32
    linalg.yield %d : f32
  } -> tensor<2x4x4x2xf32>
  return %r : tensor<2x4x4x2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A gather whose index checks stay in the kernel (dyno.check, on GPUs): the checks and
// their compares do not count toward its cost, so it is recomputed in both readers, as
// the same gather without checks is (10 body ops, 4 of them computing values).
// CHECK-LABEL: func.func @recompute$checked_gather
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0,
// CHECK:           dyno.check
// CHECK:           tensor.extract %arg1
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%arg0, %[[SUM]]
// CHECK:           dyno.check
// CHECK:           tensor.extract %arg1
// CHECK-NOT:     linalg.generic
func.func @recompute$checked_gather(%idx: tensor<4xi64>, %w: tensor<10x16xf32>) -> (tensor<4xf32>, tensor<4x16xf32>) {
  %c10 = arith.constant 10 : index
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4x16xf32>
  %g = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<4xi64>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %r = arith.index_cast %i : i64 to index
    %lt = arith.cmpi slt, %r, %c10 : index
    %ge = arith.cmpi sge, %r, %c0 : index
    %both = arith.andi %lt, %ge : i1
    %c1 = dyno.check %r if %lt, "index must be smaller than dim size" : index
    %c2 = dyno.check %c1 if %ge, "index must be larger or equal to 0" : index
    %c3 = dyno.check %c2 if %both, "index out of range" : index
    %v = tensor.extract %w[%c3, %col] : tensor<10x16xf32>
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%g : tensor<4x16xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %s : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.mulf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x16xf32>
  return %s, %n : tensor<4xf32>, tensor<4x16xf32>
}

// -----

// A residual add in windows' order (one operand read through the window reversal's
// transpose), read by a layer norm's passes through the tokens' collapse and directly by
// the next residual add: each reader of the collapse is expanded to the add's shape and
// the add is recomputed in every reader, so it is never written (Swin: one kernel fewer
// per block). No generic keeps the add alone, and no reader reads the collapse.
// CHECK-LABEL: func.func @recompute$collapsed_producer_with_several_readers
// CHECK-NOT:     ins(%collapsed
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%arg0, %arg1
// CHECK:           arith.addf
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%arg0, %arg1
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]{{.*}} ins(%arg0, %arg1, %arg2
// CHECK-NOT:     linalg.generic
// CHECK:         return
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#swap4 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @recompute$collapsed_producer_with_several_readers(%shortcut: tensor<2x4x4x8xf32>, %attention: tensor<2x4x4x8xf32>, %mlp: tensor<2x4x4x8xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x4x4x8xf32>) {
  %e = tensor.empty() : tensor<2x4x4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #swap4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%shortcut, %attention : tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>) outs(%e : tensor<2x4x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4x8xf32>
  %tokens = tensor.collapse_shape %sum [[0], [1, 2], [3]] : tensor<2x4x4x8xf32> into tensor<2x16x8xf32>
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%re : tensor<2x16xf32>) -> tensor<2x16xf32>
  %mean = linalg.generic {indexing_maps = [#id3, #rows3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%tokens : tensor<2x16x8xf32>) outs(%init : tensor<2x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x16xf32>
  %squares = linalg.generic {indexing_maps = [#id3, #rows3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%tokens : tensor<2x16x8xf32>) outs(%init : tensor<2x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x16xf32>
  %next = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum, %mlp : tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>) outs(%e : tensor<2x4x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4x8xf32>
  return %mean, %squares, %next : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x4x4x8xf32>
}

// -----

// The same with a unit dimension in the add's shape: expanding the readers would bring
// it back into the reductions (which the Triton target then splits into several
// kernels), so the add stays a generic of its own and the reductions read its collapse.
// CHECK-LABEL: func.func @recompute$collapsed_producer_with_a_unit_dimension
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]{{.*}} ins(%arg0, %arg1
// CHECK:         %[[TOKENS:.*]] = tensor.collapse_shape %[[SUM]]
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[TOKENS]]
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[TOKENS]]
#id4u = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#swap4u = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id3u = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows3u = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @recompute$collapsed_producer_with_a_unit_dimension(%shortcut: tensor<2x1x4x8xf32>, %attention: tensor<2x4x1x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x1x4x8xf32>) {
  %e = tensor.empty() : tensor<2x1x4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id4u, #swap4u, #id4u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%shortcut, %attention : tensor<2x1x4x8xf32>, tensor<2x4x1x8xf32>) outs(%e : tensor<2x1x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x1x4x8xf32>
  %tokens = tensor.collapse_shape %sum [[0], [1, 2], [3]] : tensor<2x1x4x8xf32> into tensor<2x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%re : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mean = linalg.generic {indexing_maps = [#id3u, #rows3u], iterator_types = ["parallel", "parallel", "reduction"]} ins(%tokens : tensor<2x4x8xf32>) outs(%init : tensor<2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %squares = linalg.generic {indexing_maps = [#id3u, #rows3u], iterator_types = ["parallel", "parallel", "reduction"]} ins(%tokens : tensor<2x4x8xf32>) outs(%init : tensor<2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  return %mean, %squares, %sum : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x1x4x8xf32>
}

// -----

// A bf16 residual add of three tensors, as dyno-widen-low-precision-floats writes it
// (each operand widened, each sum rounded): 11 ops, 5 without the widenings, which
// cost one shift each. It is recomputed in its two readers as the float32 add (3 ops) is,
// not written and read back.
// CHECK-LABEL: func.func @recompute$bf16_add_counts_no_widenings
// CHECK-COUNT-2: linalg.generic {{.*}} ins(%arg0, %arg1, %arg2
// CHECK-NOT:     linalg.generic
// CHECK:         return
#id2b = affine_map<(d0, d1) -> (d0, d1)>
func.func @recompute$bf16_add_counts_no_widenings(%a: tensor<4x8xbf16>, %b: tensor<4x8xbf16>, %c: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xbf16>
  %sum = linalg.generic {indexing_maps = [#id2b, #id2b, #id2b, #id2b], iterator_types = ["parallel", "parallel"]} ins(%a, %b, %c : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %z: bf16, %o: bf16):
    %xw = arith.extf %x : bf16 to f32
    %yw = arith.extf %y : bf16 to f32
    %s1 = arith.addf %xw, %yw : f32
    %r1 = arith.truncf %s1 : f32 to bf16
    %r1w = arith.extf %r1 : bf16 to f32
    %zw = arith.extf %z : bf16 to f32
    %s2 = arith.addf %r1w, %zw : f32
    %r2 = arith.truncf %s2 : f32 to bf16
    %r2w = arith.extf %r2 : bf16 to f32
    %s3 = arith.addf %r2w, %zw : f32
    %r3 = arith.truncf %s3 : f32 to bf16
    linalg.yield %r3 : bf16
  } -> tensor<4x8xbf16>
  %f = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#id2b, #id2b], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<4x8xbf16>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    %q = arith.mulf %w, %w : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  %neg = linalg.generic {indexing_maps = [#id2b, #id2b], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<4x8xbf16>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    %n = arith.negf %w : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  return %sq, %neg : tensor<4x8xf32>, tensor<4x8xf32>
}
