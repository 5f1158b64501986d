// RUN: dyno-opt %s --split-input-file --dyno-hoist-kernel-assertions | FileCheck %s

// An embedding's index checks (torch-mlir): one reduction over the loop the index
// tensor spans (not the row length, which only the output has), asserted on the host
// before the gather runs; the gather keeps no assertion.
// CHECK-LABEL: func.func @embedding_index_checks
// CHECK:         %[[TRUE:.*]] = linalg.fill
// CHECK:         %[[ALL:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction"]} ins(%arg0 : tensor<3xi64>) outs(%[[TRUE]] : tensor<i1>)
// CHECK:           %[[LT:.*]] = arith.cmpi slt
// CHECK:           %[[GE:.*]] = arith.cmpi sge
// CHECK:           %[[BOTH:.*]] = arith.andi %[[LT]], %[[GE]]
// CHECK:           %[[ALL_SO_FAR:.*]] = arith.andi %{{.*}}, %[[BOTH]]
// CHECK:           linalg.yield %[[ALL_SO_FAR]]
// CHECK:         %[[HOLDS:.*]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK:         cf.assert %[[HOLDS]], "index must be smaller than dim size; index must be larger or equal to 0"
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-NOT:       cf.assert
// CHECK:           tensor.extract %arg1
// CHECK:         return %[[R]]
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

// A condition on the output stays in the body.
// CHECK-LABEL: func.func @condition_on_the_output
// CHECK-NOT:     tensor.extract
// CHECK:         linalg.generic
// CHECK:           cf.assert
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
