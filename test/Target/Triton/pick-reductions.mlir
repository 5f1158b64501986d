// RUN: dyno-opt %s -split-input-file --dyno-convert-kernels-to-triton-level -canonicalize -cse | FileCheck %s
// RUN: dyno-opt %s -split-input-file --dyno-convert-kernels-to-triton-level="persistent-rnumel=4" -canonicalize -cse | FileCheck %s --check-prefix=LOOPED

// Reductions whose accumulators pick one element per row (PickReduction in
// ReductionKinds.h), as torch-mlir writes argmax, max with indices and max pooling's
// indices.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// max.dim: the value is combined with maximumf (NaN-propagating), so only elements
// before a row's first NaN can be picked; the strict `>` picks the first maximum.
// CHECK-LABEL: func.func @kernel$max_dim
// CHECK-NOT:     scf.for
// CHECK:         %[[X:.*]] = tl.load
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]]
// CHECK:         %[[FIRSTNAN:.*]] = tl.reduce "minsi"
// CHECK:         %[[ALL:.*]] = tl.reduce "max"
// CHECK:         %[[ORD:.*]] = arith.cmpf ord, %[[X]], %[[X]]
// CHECK:         arith.cmpi slt, %{{.*}}, %[[FIRSTNAN]]
// CHECK:         arith.cmpf ogt, %[[X]]
// CHECK:         %[[PICKED:.*]], %[[POS:.*]] = tl.pick_reduce "max" first
// CHECK:         arith.cmpf ogt, %[[PICKED]]
// The index payload is the picked position: no reduction gathers it.
// CHECK-NOT:     tl.reduce "or"
// CHECK:         arith.maximumf %[[ALL]]
// CHECK-COUNT-2: tl.store
// LOOPED-LABEL: func.func @kernel$max_dim
// LOOPED:         scf.for {{.*}} iter_args
// LOOPED:           arith.minsi
// LOOPED:           arith.maximumf
// LOOPED:         scf.for {{.*}} iter_args
// LOOPED:           arith.cmpf ogt
// LOOPED:           scf.yield
// LOOPED:         tl.pick_reduce "max" first
func.func @kernel$max_dim(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %fm = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %fi = linalg.fill ins(%zero : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%fm, %fi : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %nm = arith.maximumf %a, %m : f32
    %gt = arith.cmpf ogt, %a, %m : f32
    %ni = arith.select %gt, %jj, %i : i64
    linalg.yield %nm, %ni : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The running value selected like a payload (adaptive max pooling): NaN never wins,
// and no first-NaN pass is needed; a non-strict `<=` picks the last minimum.
// CHECK-LABEL: func.func @kernel$selected_min_last
// CHECK-NOT:     arith.cmpf uno
// CHECK:         arith.cmpf ole
// CHECK:         tl.pick_reduce "min" %{{.*}}, %{{.*}} along 1
// CHECK:         tl.reduce "max"
// CHECK:         tl.store
func.func @kernel$selected_min_last(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %inf = arith.constant 0x7F800000 : f32
  %e = tensor.empty() : tensor<4xf32>
  %fm = linalg.fill ins(%inf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%fm : tensor<4xf32>) {
  ^bb0(%a: f32, %m: f32):
    %le = arith.cmpf ole, %a, %m : f32
    %nm = arith.select %le, %a, %m : f32
    linalg.yield %nm : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Find-first (max pooling's indices): the first element matching the row's maximum,
// while the accumulator is still at its marker (-1; the fill is the marker, so the
// check against the initial value folds away).
// CHECK-LABEL: func.func @kernel$find_first
// CHECK:         arith.cmpf oeq
// CHECK:         arith.cmpi ne, %{{.*}}, %{{.*}} : tensor<?x?xi64>
// CHECK:         tl.reduce "minsi"
// CHECK-NOT:     tl.reduce "or"
// CHECK:         tl.store
// LOOPED-LABEL: func.func @kernel$find_first
// LOOPED:         scf.for {{.*}} iter_args
// LOOPED:           arith.cmpi eq
// LOOPED:           scf.yield
// LOOPED:         tl.reduce "minsi"
func.func @kernel$find_first(%x: tensor<4x8xf32>, %max: tensor<4xf32>) -> tensor<4xi64> {
  %unset = arith.constant -1 : i64
  %ei = tensor.empty() : tensor<4xi64>
  %fi = linalg.fill ins(%unset : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%fi : tensor<4xi64>) {
  ^bb0(%a: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %eq = arith.cmpf oeq, %a, %m : f32
    %sel = arith.select %eq, %jj, %i : i64
    %isunset = arith.cmpi eq, %i, %unset : i64
    %ni = arith.select %isunset, %sel, %i : i64
    linalg.yield %ni : i64
  } -> tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An element that is never NaN (NaN replaced by -inf, as Dyno's max.dim decomposition
// writes it) needs no pass for the first NaN: one loop over the row.
// CHECK-LABEL: func.func @kernel$never_nan
// CHECK-NOT:     arith.cmpf uno
// CHECK:         tl.pick_reduce "max" first
// LOOPED-LABEL: func.func @kernel$never_nan
// LOOPED:         scf.for
// LOOPED-NOT:     scf.for
// LOOPED:         tl.store
func.func @kernel$never_nan(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %fm = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %fi = linalg.fill ins(%zero : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%fm, %fi : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %m: f32, %i: i64):
    %isnan = arith.cmpf une, %a, %a : f32
    %clean = arith.select %isnan, %ninf, %a : f32
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %nm = arith.maximumf %clean, %m : f32
    %gt = arith.cmpf ogt, %clean, %m : f32
    %ni = arith.select %gt, %jj, %i : i64
    linalg.yield %nm, %ni : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi64>
}
