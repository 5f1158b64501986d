// The blocks of these tests are 4096 loop iterations (the default is 1024).
// RUN: dyno-opt %s --dyno-tile-kernels="block-iterations=4096" | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// The row sum is fused into the division's row blocks: one parallel loop, nothing left
// outside it.
// CHECK-LABEL: func.func @tile$row_pipeline
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%[[I:.*]]) = (0) to (256) step (4)
// CHECK:           linalg.fill
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}}["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:           %[[DIV:.*]] = linalg.generic {{.*}}["parallel", "parallel"]{{.*}} ins(%{{.*}}, %[[SUM]] : tensor<4x1024xf32>, tensor<4xf32>)
// CHECK:           tensor.parallel_insert_slice %[[DIV]] into %{{.*}}[%[[I]], 0] [4, 1024]
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @tile$row_pipeline(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<256x1024xf32>) outs(%f : tensor<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<256xf32>
  %e = tensor.empty() : tensor<256x1024xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<256x1024xf32>, tensor<256xf32>) outs(%e : tensor<256x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<256x1024xf32>
  return %d : tensor<256x1024xf32>
}

// Each row block would need the whole column sum: it is a root of its own, tiled over
// columns, and the division reads it whole.
// CHECK-LABEL: func.func @tile$column_reduction_is_not_fused
// CHECK:         %[[COLS:.*]] = scf.forall (%{{.*}}) = (0) to (1024) step (16)
// CHECK:           linalg.generic {{.*}}["reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<16xf32>)
// CHECK:         scf.forall (%{{.*}}) = (0) to (256) step (4)
// CHECK-NOT:       ["reduction", "parallel"]
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[COLS]] : tensor<4x1024xf32>, tensor<1024xf32>)
func.func @tile$column_reduction_is_not_fused(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1024xf32>) -> tensor<1024xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<256x1024xf32>) outs(%f : tensor<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<1024xf32>
  %e = tensor.empty() : tensor<256x1024xf32>
  %d = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<256x1024xf32>, tensor<1024xf32>) outs(%e : tensor<256x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<256x1024xf32>
  return %d : tensor<256x1024xf32>
}

// Too little work for a parallel loop.
// CHECK-LABEL: func.func @tile$small_kernels_stay_sequential
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic
func.func @tile$small_kernels_stay_sequential(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.negf %a : f32
    linalg.yield %q : f32
  } -> tensor<4x16xf32>
  return %d : tensor<4x16xf32>
}

// A dynamic row count is tiled whatever its size, with blocks sized for the static row
// length (4096 iterations / 1024 per row): small inputs run as one block.
// CHECK-LABEL: func.func @tile$dynamic_rows
// CHECK:         scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (4)
func.func @tile$dynamic_rows(%x: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x1024xf32>
  %e = tensor.empty(%d) : tensor<?x1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x1024xf32>) outs(%e : tensor<?x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<?x1024xf32>
  return %r : tensor<?x1024xf32>
}

// No iterations (a zero-size dimension), nothing to tile: this divided by zero (SIGFPE)
// when the row length was 0.
// CHECK-LABEL: func.func @tile$empty_iteration_space
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic
func.func @tile$empty_iteration_space(%x: tensor<4096x0xf32>) -> tensor<4096x0xf32> {
  %e = tensor.empty() : tensor<4096x0xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4096x0xf32>) outs(%e : tensor<4096x0xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.negf %a : f32
    linalg.yield %q : f32
  } -> tensor<4096x0xf32>
  return %r : tensor<4096x0xf32>
}

// A transpose reads its input down the columns along the tiled loop: blocks of 16 rows
// (a cache line of floats) instead of 4, so each line read is used whole.
// CHECK-LABEL: func.func @tile$transpose_rows_of_a_cache_line
// CHECK:         scf.forall (%{{.*}}) = (0) to (1024) step (16)
func.func @tile$transpose_rows_of_a_cache_line(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %e = tensor.empty() : tensor<1024x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

// A read through a mod (a rotation) is not monotonic: upstream would slice its operand
// by the map's values at a tile's ends, the wrong rows. Such an op is computed whole.
// CHECK-LABEL: func.func @tile$rotated_read_is_not_tiled
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic {{.*}}ins(%arg0 : tensor<256x1024xf32>)
// CHECK-NOT:     scf.forall
// CHECK:         return
#rot = affine_map<(d0, d1) -> ((d0 + 3) mod 256, d1)>
func.func @tile$rotated_read_is_not_tiled(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %e = tensor.empty() : tensor<256x1024xf32>
  %r = linalg.generic {indexing_maps = [#rot, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<256x1024xf32>) outs(%e : tensor<256x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}
