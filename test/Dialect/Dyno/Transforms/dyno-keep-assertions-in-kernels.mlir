// RUN: dyno-opt %s --split-input-file --dyno-keep-assertions-in-kernels | FileCheck %s --implicit-check-not=cf.assert
// RUN: dyno-opt %s --split-input-file --dyno-keep-assertions-in-kernels --canonicalize | FileCheck %s --check-prefix=FOLD

// An embedding's index checks (torch-mlir's): both become checks of the row index the
// gather reads through, in the same body; no assertion is left (--implicit-check-not).
// CHECK-LABEL: func.func @embedding_index_checks
// CHECK-NOT:     cf.assert
// CHECK:         linalg.generic
// CHECK:           %[[ROW:.*]] = arith.index_cast
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[ROW]]
// CHECK:           %[[GE:.*]] = arith.cmpi sge
// CHECK:           %[[C1:.*]] = dyno.check %[[ROW]] if %[[LT]], "index must be smaller than dim size" : index
// CHECK:           %[[C2:.*]] = dyno.check %[[C1]] if %[[GE]], "index must be larger or equal to 0" : index
// CHECK:           tensor.extract %arg1[%[[C2]], %{{.*}}] : tensor<10x4xf32>
// CHECK-NOT:     cf.assert
func.func @embedding_index_checks(%idx: tensor<3xi64>, %w: tensor<10x4xf32>) -> tensor<3x4xf32> {
  %c10 = arith.constant 10 : index
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<3xi64>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %i : i64 to index
    %lt = arith.cmpi slt, %row, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %i, %c0 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %w[%row, %col] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// The check guards the index it shares a data-dependent value with: the column here
// (the row is the loop's own index, which no check reads).
// CHECK-LABEL: func.func @guards_the_checked_index
// CHECK:           %[[COLUMN:.*]] = arith.index_cast
// CHECK:           %[[OK:.*]] = arith.cmpi slt, %[[COLUMN]]
// CHECK:           %[[CHECKED:.*]] = dyno.check %[[COLUMN]] if %[[OK]], "column out of range" : index
// CHECK:           tensor.extract %arg1[%{{.*}}, %[[CHECKED]]]
func.func @guards_the_checked_index(%idx: tensor<3xi64>, %w: tensor<3x5xf32>) -> tensor<3xf32> {
  %c5 = arith.constant 5 : index
  %e = tensor.empty() : tensor<3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%idx : tensor<3xi64>) outs(%e : tensor<3xf32>) {
  ^bb0(%i: i64, %o: f32):
    %row = linalg.index 0 : index
    %column = arith.index_cast %i : i64 to index
    %ok = arith.cmpi slt, %column, %c5 : index
    cf.assert %ok, "column out of range"
    %v = tensor.extract %w[%row, %column] : tensor<3x5xf32>
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// No read to guard (a condition on the output): the assertion stays for the host pass.
// CHECK-LABEL: func.func @condition_on_the_output
// CHECK:           cf.assert
// CHECK-NOT:       dyno.check
// CHECK:           linalg.yield
func.func @condition_on_the_output(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %ok = arith.cmpf oge, %o, %zero : f32
    cf.assert %ok, "accumulator must be non-negative"
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A check is pure: a gather nobody reads goes with its check, and a check whose
// condition folds to true folds to its index (canonicalization).
// FOLD-LABEL: func.func @checks_fold_and_die
// FOLD-NEXT:    return %arg0 : index
func.func @checks_fold_and_die(%i: index, %w: tensor<10xf32>, %ok: i1) -> index {
  %true = arith.constant true
  %c = dyno.check %i if %true, "always in range" : index
  %dead = dyno.check %i if %ok, "index out of range" : index
  %unread = tensor.extract %w[%dead] : tensor<10xf32>
  return %c : index
}

// -----

// The read right after the assertion is another one (a column at the loop index): the
// assertion does not reach past it to a later read; it stays for the host pass.
// CHECK-LABEL: func.func @guards_only_the_next_read
// CHECK:           cf.assert %{{.*}}, "row out of range"
// CHECK-NOT:       dyno.check
// CHECK:           linalg.yield
func.func @guards_only_the_next_read(%idx: tensor<3xi64>, %w: tensor<10x3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  %c10 = arith.constant 10 : index
  %e = tensor.empty() : tensor<3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%idx : tensor<3xi64>) outs(%e : tensor<3xf32>) {
  ^bb0(%i: i64, %o: f32):
    %j = linalg.index 0 : index
    %row = arith.index_cast %i : i64 to index
    %ok = arith.cmpi slt, %row, %c10 : index
    cf.assert %ok, "row out of range"
    %a = tensor.extract %v[%j] : tensor<3xf32>
    %b = tensor.extract %w[%row, %j] : tensor<10x3xf32>
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}
