// RUN: dyno-opt %s --split-input-file --dyno-lower-scans-scatters-sorts | FileCheck %s

// A float32 cumsum accumulates in f64 (as eager's CPU kernel) and rounds each output;
// the first element is the input's, the accumulator gets the last value. Rows are
// independent: one scf.forall iteration (an OpenMP thread's share) per row.
// CHECK-LABEL: func.func @cumsum
// CHECK:         scf.forall (%[[ROW:[a-z0-9_]+]]) in (%c3) shared_outs(%[[OUT:[a-z0-9_]+]] = %arg1, %[[ACC:[a-z0-9_]+]] = %arg2)
// CHECK:           %[[LINE:[a-z0-9_]+]] = tensor.extract_slice %[[OUT]][%[[ROW]], 0] [1, 5] [1, 1] : tensor<3x5xf32> to tensor<5xf32>
// CHECK:           %[[POINT:[a-z0-9_]+]] = tensor.extract_slice %[[ACC]][%[[ROW]]] [1] [1] : tensor<3xf32> to tensor<f32>
// CHECK:           %[[INIT:[a-z0-9_]+]] = arith.extf
// CHECK:           scf.for %[[K:[a-z0-9_]+]] = {{.*}} iter_args(%[[O:[a-z0-9_]+]] = %[[LINE]], %[[CARRY:[a-z0-9_]+]] = %[[INIT]], %{{.*}} = %[[INIT]])
// CHECK:             %[[X:[a-z0-9_]+]] = tensor.extract %arg0[%[[ROW]], %[[K]]]
// CHECK:             %[[XW:[a-z0-9_]+]] = arith.extf %[[X]] : f32 to f64
// CHECK:             %[[FIRST:[a-z0-9_]+]] = arith.cmpi eq, %[[K]]
// CHECK:             %[[SUM:[a-z0-9_]+]] = arith.addf %[[CARRY]], %[[XW]] : f64
// CHECK:             %[[V:[a-z0-9_]+]] = arith.select %[[FIRST]], %[[XW]], %[[SUM]]
// CHECK:             %[[R:[a-z0-9_]+]] = arith.truncf %[[V]] : f64 to f32
// CHECK:             tensor.insert %[[R]] into %[[O]][%[[K]]]
// CHECK:           %[[LAST:[a-z0-9_]+]] = tensor.insert %{{.*}} into %[[POINT]][]
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[ROW]], 0] [1, 5] [1, 1]
// CHECK:             tensor.parallel_insert_slice %[[LAST]] into %[[ACC]][%[[ROW]]] [1] [1]
// CHECK-NOT:     dyno.scan
func.func @cumsum(%x: tensor<3x5xf32>, %o: tensor<3x5xf32>, %acc: tensor<3xf32>) -> (tensor<3x5xf32>, tensor<3xf32>) {
  %0:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x5xf32>) outs(%o, %acc : tensor<3x5xf32>, tensor<3xf32>) {
  ^bb0(%p: f32, %i: f32):
    %s = arith.addf %p, %i : f32
    dyno.yield %s : f32
  } -> tensor<3x5xf32>, tensor<3xf32>
  return %0#0, %0#1 : tensor<3x5xf32>, tensor<3xf32>
}

// -----

// An integer scan applies the region as it is.
// CHECK-LABEL: func.func @cummax_int
// CHECK:         scf.for
// CHECK-NOT:       arith.extf
// CHECK:           arith.maxsi %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     scf.for
func.func @cummax_int(%x: tensor<9xi32>, %o: tensor<9xi32>, %acc: tensor<i32>) -> tensor<9xi32> {
  %0:2 = dyno.scan dimension(0) inclusive(true) ins(%x : tensor<9xi32>) outs(%o, %acc : tensor<9xi32>, tensor<i32>) {
  ^bb0(%p: i32, %i: i32):
    %m = arith.maxsi %p, %i : i32
    dyno.yield %m : i32
  } -> tensor<9xi32>, tensor<i32>
  return %0#0 : tensor<9xi32>
}

// -----

// Updates in order (repeats accumulate); the index column adds to the slice position
// of the dimension it maps to.
// CHECK-LABEL: func.func @scatter
// CHECK:         scf.for %[[I:[a-z0-9_]+]] = {{.*}} iter_args(%{{.*}} = %arg2)
// CHECK:           scf.for %[[W0:[a-z0-9_]+]] =
// CHECK:             scf.for %[[W1:[a-z0-9_]+]] = {{.*}} iter_args(%[[T:[a-z0-9_]+]] = %{{.*}})
// CHECK:               %[[U:[a-z0-9_]+]] = tensor.extract %arg0[%[[I]], %[[W0]], %[[W1]]]
// CHECK:               %[[RAW:[a-z0-9_]+]] = tensor.extract %arg1[%[[I]], %{{.*}}]
// CHECK:               %[[IDX:[a-z0-9_]+]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK:               %[[ROW:[a-z0-9_]+]] = arith.addi %[[W0]], %[[IDX]]
// CHECK:               %[[OLD:[a-z0-9_]+]] = tensor.extract %[[T]][%[[ROW]], %[[W1]]]
// CHECK:               %[[NEW:[a-z0-9_]+]] = arith.addf %[[OLD]], %[[U]]
// CHECK:               tensor.insert %[[NEW]] into %[[T]][%[[ROW]], %[[W1]]]
func.func @scatter(%u: tensor<4x1x3xf32>, %i: tensor<4x1xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<4x1x3xf32>, tensor<4x1xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    dyno.yield %s : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

// Bottom-up merge sort of each line: two merge passes per round (line -> scratch -> line),
// scratch from bufferization.alloc_tensor (never CSE'd into one buffer), and NaN
// ordered last for an ascending `ole` comparator.
// CHECK-LABEL: func.func @sort
// CHECK-DAG:     %[[S0:[a-z0-9_]+]] = bufferization.alloc_tensor() : tensor<7xf32>
// CHECK-DAG:     %[[S1:[a-z0-9_]+]] = bufferization.alloc_tensor() : tensor<7xi64>
// CHECK:         scf.while (%{{.*}} = %arg0, %{{.*}} = %arg1, %{{.*}} = %[[S0]], %{{.*}} = %[[S1]], %{{.*}} = %c1)
// CHECK:           arith.cmpi ult
// CHECK:           scf.condition
// CHECK:         } do {
// CHECK:           scf.for
// CHECK:             %[[LE:[a-z0-9_]+]] = arith.cmpf ole, %[[A:[a-z0-9_]+]], %[[B:[a-z0-9_]+]] : f32
// CHECK:             %[[NAN:[a-z0-9_]+]] = arith.cmpf uno, %[[B]], %[[B]] : f32
// CHECK:             arith.ori %[[LE]], %[[NAN]] : i1
// CHECK:           scf.for
// CHECK:           scf.yield
// CHECK-NOT:     dyno.sort
func.func @sort(%v: tensor<7xf32>, %i: tensor<7xi64>) -> (tensor<7xf32>, tensor<7xi64>) {
  %0:2 = dyno.sort dimension(0) outs(%v, %i : tensor<7xf32>, tensor<7xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<7xf32>, tensor<7xi64>
  return %0#0, %0#1 : tensor<7xf32>, tensor<7xi64>
}

// -----

// Descending: NaN first.
// CHECK-LABEL: func.func @sort_descending
// CHECK:         %[[GE:[a-z0-9_]+]] = arith.cmpf oge, %[[A:[a-z0-9_]+]], %{{.*}} : f32
// CHECK:         %[[NAN:[a-z0-9_]+]] = arith.cmpf uno, %[[A]], %[[A]] : f32
// CHECK:         arith.ori %[[GE]], %[[NAN]] : i1
func.func @sort_descending(%v: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = dyno.sort dimension(1) outs(%v : tensor<2x5xf32>) {
  ^bb0(%a: f32, %b: f32):
    %ge = arith.cmpf oge, %a, %b : f32
    dyno.yield %ge : i1
  } -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// prefix(4): one pass over each line; an element enters the sorted prefix when it is one
// of the first 4 or the prefix's last may not precede it, and shifts what it precedes.
// CHECK-LABEL: func.func @topk_prefix
// CHECK:         scf.forall
// CHECK:           scf.for %[[I:[a-z0-9_]+]] =
// CHECK:             %[[LAST:[a-z0-9_]+]] = tensor.extract %{{.*}}[%c3]
// CHECK:             %[[NEW:[a-z0-9_]+]] = arith.cmpi ult, %[[I]], %c4
// CHECK:             arith.cmpf oge, %[[LAST]], %{{.*}} : f32
// CHECK:             %[[ENTERS:[a-z0-9_]+]] = arith.ori %[[NEW]], %{{.*}} : i1
// CHECK:             scf.if %[[ENTERS]]
// CHECK:               scf.while
// CHECK:                 scf.condition
// CHECK:               } do {
// CHECK:               tensor.insert
// CHECK-NOT:     scf.while (%{{.*}}) : (tensor
func.func @topk_prefix(%v: tensor<2x50xf32>) -> tensor<2x50xf32> {
  %0 = dyno.sort dimension(1) prefix(4) outs(%v : tensor<2x50xf32>) {
  ^bb0(%a: f32, %b: f32):
    %ge = arith.cmpf oge, %a, %b : f32
    dyno.yield %ge : i1
  } -> tensor<2x50xf32>
  return %0 : tensor<2x50xf32>
}
