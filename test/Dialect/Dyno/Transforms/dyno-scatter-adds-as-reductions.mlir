// RUN: dyno-opt %s --split-input-file --dyno-scatter-adds-as-reductions | FileCheck %s
// RUN: dyno-opt %s --split-input-file \
// RUN:   --dyno-scatter-adds-as-reductions="max-destination-elements=3" \
// RUN:   | FileCheck %s --check-prefix=SMALL

// torch.histc(bins=4): ones added at each element's bin, the overflow bin sliced away.
// The slice's rows are the reduction's; row d adds the updates whose index is d.
// CHECK-DAG:   #[[UPD:.+]] = affine_map<(d0, d1) -> (d1, 0)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @histc
// CHECK-NOT:     dyno.scatter
// CHECK:         %[[INIT:.+]] = tensor.extract_slice %{{.+}}[0] [4] [1] : tensor<5xf32> to tensor<4xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[UPD]], #[[UPD]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      outs(%[[INIT]] : tensor<4xf32>)
// CHECK:         ^bb0(%[[U:.+]]: f32, %[[I:.+]]: i64, %[[ACC:.+]]: f32):
// CHECK:           %[[D:.+]] = linalg.index 0 : index
// CHECK:           %[[IDX:.+]] = arith.index_cast %[[I]] : i64 to index
// CHECK:           %[[HIT:.+]] = arith.cmpi eq, %[[IDX]], %[[D]] : index
// CHECK:           %[[TERM:.+]] = arith.select %[[HIT]], %[[U]], %cst{{.*}} : f32
// CHECK:           %[[SUM:.+]] = arith.addf %[[ACC]], %[[TERM]] : f32
// CHECK:           linalg.yield %[[SUM]] : f32
// CHECK:         } -> tensor<4xf32>
// SMALL-LABEL: func.func @histc
// SMALL:         dyno.scatter
func.func @histc(%bins: tensor<4096x1xi64>) -> tensor<4xf32> {
  %ones = arith.constant dense<1.000000e+00> : tensor<4096x1xf32>
  %zeros = arith.constant dense<0.000000e+00> : tensor<5xf32>
  %h = dyno.scatter dimension_map([0]) unique_indices(false) ins(%ones, %bins : tensor<4096x1xf32>, tensor<4096x1xi64>) outs(%zeros : tensor<5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %s = arith.addf %o, %u : f32
    dyno.yield %s : f32
  } -> tensor<5xf32>
  %r = tensor.extract_slice %h[0] [4] [1] : tensor<5xf32> to tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A slice from row 1: row d of the result is destination element d + 1. The region's
// f(update) (a doubling) is computed per update; integers add 0 where the index misses.
// CHECK-LABEL: func.func @offset_slice_integers
// CHECK:         linalg.generic
// CHECK:           %[[U2:.+]] = arith.muli %{{.+}}, %{{.+}} : i32
// CHECK:           %[[D:.+]] = linalg.index 0 : index
// CHECK:           %[[ROW:.+]] = arith.addi %[[D]], %c1 : index
// CHECK:           arith.cmpi eq, %{{.+}}, %[[ROW]] : index
// CHECK:           %[[TERM:.+]] = arith.select %{{.+}}, %[[U2]], %c0_i32 : i32
// CHECK:           arith.addi %{{.+}}, %[[TERM]] : i32
// CHECK:         } -> tensor<3xi32>
func.func @offset_slice_integers(%u: tensor<100xi32>, %i: tensor<100x1xi64>, %o: tensor<8xi32>) -> tensor<3xi32> {
  %h = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<100xi32>, tensor<100x1xi64>) outs(%o : tensor<8xi32>) {
  ^bb0(%a: i32, %b: i32):
    %c2 = arith.constant 2 : i32
    %t = arith.muli %a, %c2 : i32
    %s = arith.addi %t, %b : i32
    dyno.yield %s : i32
  } -> tensor<8xi32>
  %r = tensor.extract_slice %h[1] [3] [1] : tensor<8xi32> to tensor<3xi32>
  return %r : tensor<3xi32>
}

// -----

// Left alone: a destination of 100 elements (over the limit), a scatter that reads the
// element it lands on besides adding (max), bf16 (its running sum would round), rows of
// updates (a window of 4 elements), and an overwrite.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-5: dyno.scatter
// CHECK-NOT:     linalg.generic
func.func @left_alone(%u: tensor<64xf32>, %i: tensor<64x1xi64>, %big: tensor<100xf32>,
                      %small: tensor<8xf32>, %ub: tensor<64xbf16>, %sb: tensor<8xbf16>,
                      %rows: tensor<64x4xf32>, %wide: tensor<8x4xf32>)
    -> (tensor<100xf32>, tensor<8xf32>, tensor<8xbf16>, tensor<8x4xf32>, tensor<8xf32>) {
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<64xf32>, tensor<64x1xi64>) outs(%big : tensor<100xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    dyno.yield %s : f32
  } -> tensor<100xf32>
  %1 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<64xf32>, tensor<64x1xi64>) outs(%small : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.maximumf %b, %a : f32
    dyno.yield %s : f32
  } -> tensor<8xf32>
  %2 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%ub, %i : tensor<64xbf16>, tensor<64x1xi64>) outs(%sb : tensor<8xbf16>) {
  ^bb0(%a: bf16, %b: bf16):
    %s = arith.addf %b, %a : bf16
    dyno.yield %s : bf16
  } -> tensor<8xbf16>
  %3 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%rows, %i : tensor<64x4xf32>, tensor<64x1xi64>) outs(%wide : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    dyno.yield %s : f32
  } -> tensor<8x4xf32>
  %4 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<64xf32>, tensor<64x1xi64>) outs(%small : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<8xf32>
  return %0, %1, %2, %3, %4 : tensor<100xf32>, tensor<8xf32>, tensor<8xbf16>, tensor<8x4xf32>, tensor<8xf32>
}
