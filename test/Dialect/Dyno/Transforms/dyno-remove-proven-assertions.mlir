// RUN: dyno-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(dyno-check-gather-bounds,dyno-hoist-kernel-assertions,dyno-remove-proven-assertions))" | FileCheck %s
// RUN: dyno-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(dyno-check-gather-bounds,dyno-keep-assertions-in-kernels,dyno-hoist-kernel-assertions,dyno-remove-proven-assertions))" | FileCheck %s --check-prefix=GPU

// The checks come from dyno-check-gather-bounds and are hoisted to the host by
// dyno-hoist-kernel-assertions (or, GPU, kept in the kernel as dyno.check by
// dyno-keep-assertions-in-kernels); this pass removes those the values' bounds prove.

#id = affine_map<(d0) -> (d0)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>

// Sort positions gather rows of the sorted tensor: in range, no check left.
// CHECK-LABEL: func.func @gather$sort_positions
// CHECK-NOT:     cf.assert
// CHECK-NOT:     iterator_types = ["reduction"]
// CHECK:         tensor.extract
// GPU-LABEL:   func.func @gather$sort_positions
// GPU-NOT:       dyno.check
// GPU-NOT:       cf.assert
// GPU:           tensor.extract
func.func @gather$sort_positions(%x: tensor<8xi64>, %w: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s:2 = dyno.library_call "aten.sort.stable"(%x) {arguments = [unit, true, -1, false]} : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>)
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["parallel", "parallel"]} ins(%s#1 : tensor<8xi64>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%row, %col] : tensor<8x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>

// A mixture of experts' token of each sorted slot: floor(position / 2) computed in f64
// (torch-mlir's integer floor division), a wrapped negative index, into 4 rows.
// CHECK-LABEL: func.func @gather$floor_divided_positions
// CHECK-NOT:     cf.assert
func.func @gather$floor_divided_positions(%x: tensor<8xi64>, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %two = arith.constant 2.0 : f64
  %c0 = arith.constant 0 : i64
  %c4 = arith.constant 4 : i64
  %s:2 = dyno.library_call "aten.sort.stable"(%x) {arguments = [unit, true, -1, false]} : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>)
  %ei = tensor.empty() : tensor<8xi64>
  %tok = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s#1 : tensor<8xi64>) outs(%ei : tensor<8xi64>) {
  ^bb0(%p: i64, %o: i64):
    %f = arith.sitofp %p : i64 to f64
    %q = arith.divf %f, %two : f64
    %fl = math.floor %q : f64
    %t = arith.fptosi %fl : f64 to i64
    linalg.yield %t : i64
  } -> tensor<8xi64>
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["parallel", "parallel"]} ins(%tok : tensor<8xi64>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %neg = arith.cmpi slt, %i, %c0 : i64
    %wrapped = arith.addi %i, %c4 : i64
    %sel = arith.select %neg, %wrapped, %i : i64
    %col = linalg.index 1 : index
    %row = arith.index_cast %sel : i64 to index
    %v = tensor.extract %w[%row, %col] : tensor<4x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>

// The same positions divided by 2 reach row 3: a table of 3 rows keeps its check.
// CHECK-LABEL: func.func @gather$floor_divided_positions_too_far
// CHECK:         cf.assert {{.*}} "index out of range
func.func @gather$floor_divided_positions_too_far(%x: tensor<8xi64>, %w: tensor<3x4xf32>) -> tensor<8x4xf32> {
  %two = arith.constant 2.0 : f64
  %s:2 = dyno.library_call "aten.sort.stable"(%x) {arguments = [unit, true, -1, false]} : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>)
  %ei = tensor.empty() : tensor<8xi64>
  %tok = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s#1 : tensor<8xi64>) outs(%ei : tensor<8xi64>) {
  ^bb0(%p: i64, %o: i64):
    %f = arith.sitofp %p : i64 to f64
    %q = arith.divf %f, %two : f64
    %fl = math.floor %q : f64
    %t = arith.fptosi %fl : f64 to i64
    linalg.yield %t : i64
  } -> tensor<8xi64>
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["parallel", "parallel"]} ins(%tok : tensor<8xi64>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%row, %col] : tensor<3x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>

// Indices the user passes are unbounded: the check stays.
// CHECK-LABEL: func.func @gather$argument_indices
// CHECK:         cf.assert {{.*}} "index out of range
// GPU-LABEL:   func.func @gather$argument_indices
// GPU-NOT:       cf.assert
// GPU:           linalg.generic
// GPU:             %[[CHECKED:.*]] = dyno.check {{.*}} "index out of range
// GPU:             tensor.extract %{{.*}}[%[[CHECKED]], %{{.*}}]
func.func @gather$argument_indices(%idx: tensor<8xi64>, %w: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<8xi64>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%row, %col] : tensor<8x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Constant indices: proven when every element is in range, kept otherwise.
// CHECK-LABEL: func.func @gather$constant_indices
// CHECK-COUNT-1: cf.assert
// CHECK-NOT:     cf.assert
func.func @gather$constant_indices(%w: tensor<4xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %in = arith.constant dense<[0, 3, 2]> : tensor<3xi64>
  %out = arith.constant dense<[0, 4, 2]> : tensor<3xi64>
  %e = tensor.empty() : tensor<3xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%in : tensor<3xi64>) outs(%e : tensor<3xf32>) {
  ^bb0(%i: i64, %o: f32):
    %k = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%k] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<3xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%out : tensor<3xi64>) outs(%e : tensor<3xf32>) {
  ^bb0(%i: i64, %o: f32):
    %k = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%k] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %a, %b : tensor<3xf32>, tensor<3xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A histogram of expert numbers (topk positions among 4, through a sort): the bin
// (x - 0) * 4 / 3 of each value lies in [0, 4], the scatter writes into 5 bins.
// CHECK-LABEL: func.func @scatter$histogram_bins
// CHECK-NOT:     cf.assert
// CHECK:         dyno.scatter
func.func @scatter$histogram_bins(%scores: tensor<8x4xf32>) -> tensor<5xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %three = arith.constant 3.0 : f32
  %ep = tensor.empty() : tensor<8x4xi64>
  %pos = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%ep : tensor<8x4xi64>) {
  ^bb0(%o: i64):
    %j = linalg.index 1 : index
    %p = arith.index_cast %j : index to i64
    linalg.yield %p : i64
  } -> tensor<8x4xi64>
  %sorted:2 = dyno.sort dimension(1) outs(%scores, %pos : tensor<8x4xf32>, tensor<8x4xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %ge = arith.cmpf oge, %a, %b : f32
    dyno.yield %ge : i1
  } -> tensor<8x4xf32>, tensor<8x4xi64>
  %flat = tensor.collapse_shape %sorted#1 [[0, 1]] : tensor<8x4xi64> into tensor<32xi64>
  %ei = tensor.empty() : tensor<32xi64>
  %bins = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%flat : tensor<32xi64>) outs(%ei : tensor<32xi64>) {
  ^bb0(%v: i64, %o: i64):
    %f = arith.sitofp %v : i64 to f32
    %shifted = arith.subf %f, %zero : f32
    %scaled = arith.mulf %shifted, %four : f32
    %bin = arith.divf %scaled, %three : f32
    %b = arith.fptosi %bin : f32 to i64
    linalg.yield %b : i64
  } -> tensor<32xi64>
  %idx = tensor.expand_shape %bins [[0, 1]] output_shape [32, 1] : tensor<32xi64> into tensor<32x1xi64>
  %ones = arith.constant dense<1.0> : tensor<32x1xf32>
  %init = arith.constant dense<0.0> : tensor<5xf32>
  %h = dyno.scatter dimension_map([0]) unique_indices(false) ins(%ones, %idx : tensor<32x1xf32>, tensor<32x1xi64>) outs(%init : tensor<5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %s = arith.addf %o, %u : f32
    dyno.yield %s : f32
  } -> tensor<5xf32>
  return %h : tensor<5xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A divisor whose range holds zero gives no bound (the quotient may be infinite or NaN).
// CHECK-LABEL: func.func @scatter$divisor_may_be_zero
// CHECK:         cf.assert {{.*}} "index out of range: dyno checks scatter indices
func.func @scatter$divisor_may_be_zero(%d: f32) -> tensor<5xf32> {
  %ep = tensor.empty() : tensor<4xi64>
  %pos = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%ep : tensor<4xi64>) {
  ^bb0(%o: i64):
    %j = linalg.index 0 : index
    %p = arith.index_cast %j : index to i64
    linalg.yield %p : i64
  } -> tensor<4xi64>
  %bins = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%pos : tensor<4xi64>) outs(%ep : tensor<4xi64>) {
  ^bb0(%v: i64, %o: i64):
    %f = arith.sitofp %v : i64 to f32
    %q = arith.divf %f, %d : f32
    %b = arith.fptosi %q : f32 to i64
    linalg.yield %b : i64
  } -> tensor<4xi64>
  %idx = tensor.expand_shape %bins [[0, 1]] output_shape [4, 1] : tensor<4xi64> into tensor<4x1xi64>
  %ones = arith.constant dense<1.0> : tensor<4x1xf32>
  %init = arith.constant dense<0.0> : tensor<5xf32>
  %h = dyno.scatter dimension_map([0]) unique_indices(false) ins(%ones, %idx : tensor<4x1xf32>, tensor<4x1xi64>) outs(%init : tensor<5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %s = arith.addf %o, %u : f32
    dyno.yield %s : f32
  } -> tensor<5xf32>
  return %h : tensor<5xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A running sum (cumsum) has no fixed point: its elements are unbounded, the check stays.
// CHECK-LABEL: func.func @gather$cumulative_sum
// CHECK:         cf.assert {{.*}} "index out of range
func.func @gather$cumulative_sum(%w: tensor<16xf32>) -> tensor<4xf32> {
  %ones = arith.constant dense<1> : tensor<4xi64>
  %zero = arith.constant 0 : i64
  %eo = tensor.empty() : tensor<4xi64>
  %ea = tensor.empty() : tensor<i64>
  %acc = linalg.fill ins(%zero : i64) outs(%ea : tensor<i64>) -> tensor<i64>
  %c:2 = dyno.scan dimension(0) inclusive(true) ins(%ones : tensor<4xi64>) outs(%eo, %acc : tensor<4xi64>, tensor<i64>) {
  ^bb0(%prev: i64, %in: i64):
    %s = arith.addi %prev, %in : i64
    dyno.yield %s : i64
  } -> tensor<4xi64>, tensor<i64>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%c#0 : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %k = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%k] : tensor<16xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>

// Positions scattered into an uninitialized tensor: its other elements are unknown.
// CHECK-LABEL: func.func @gather$scattered_into_empty
// CHECK:         cf.assert {{.*}} "index out of range: dyno checks gather indices
func.func @gather$scattered_into_empty(%x: tensor<8xi64>, %w: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s:2 = dyno.library_call "aten.sort.stable"(%x) {arguments = [unit, true, -1, false]} : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>)
  %idx = tensor.expand_shape %s#1 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %upd = tensor.expand_shape %s#0 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %empty = tensor.empty() : tensor<8xi64>
  %inv = dyno.scatter dimension_map([0]) unique_indices(true) ins(%upd, %idx : tensor<8x1xi64>, tensor<8x1xi64>) outs(%empty : tensor<8xi64>) {
  ^bb0(%u: i64, %o: i64):
    dyno.yield %u : i64
  } -> tensor<8xi64>
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["parallel", "parallel"]} ins(%inv : tensor<8xi64>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%row, %col] : tensor<8x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> (d0, d1)>

// A mixture of experts' inverse permutation: positions 0..7 scattered at the sort
// positions (wrapped where negative) into an uninitialized tensor overwrite every
// element, so the gather at its values is in range. Halved positions are not a
// permutation: that gather keeps its check.
// CHECK-LABEL: func.func @gather$inverse_permutation
// CHECK-COUNT-1: cf.assert {{.*}} "index out of range: dyno checks gather indices
// CHECK-NOT:     cf.assert {{.*}} "index out of range: dyno checks gather indices
func.func @gather$inverse_permutation(%x: tensor<8xi64>, %w: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8 : i64
  %c2 = arith.constant 2 : i64
  %s:2 = dyno.library_call "aten.sort.stable"(%x) {arguments = [unit, true, -1, false]} : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>)
  %ei = tensor.empty() : tensor<8xi64>
  %wrapped = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s#1 : tensor<8xi64>) outs(%ei : tensor<8xi64>) {
  ^bb0(%p: i64, %o: i64):
    %neg = arith.cmpi slt, %p, %c0 : i64
    %up = arith.addi %p, %c8 : i64
    %sel = arith.select %neg, %up, %p : i64
    linalg.yield %sel : i64
  } -> tensor<8xi64>
  %halved = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s#1 : tensor<8xi64>) outs(%ei : tensor<8xi64>) {
  ^bb0(%p: i64, %o: i64):
    %h = arith.divsi %p, %c2 : i64
    linalg.yield %h : i64
  } -> tensor<8xi64>
  %arange = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%ei : tensor<8xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<8xi64>
  %upd = tensor.expand_shape %arange [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %idx = tensor.expand_shape %wrapped [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %half = tensor.expand_shape %halved [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %empty = tensor.empty() : tensor<8xi64>
  %inv = dyno.scatter dimension_map([0]) unique_indices(true) ins(%upd, %idx : tensor<8x1xi64>, tensor<8x1xi64>) outs(%empty : tensor<8xi64>) {
  ^bb0(%u: i64, %o: i64):
    dyno.yield %u : i64
  } -> tensor<8xi64>
  %partial = dyno.scatter dimension_map([0]) unique_indices(true) ins(%upd, %half : tensor<8x1xi64>, tensor<8x1xi64>) outs(%empty : tensor<8xi64>) {
  ^bb0(%u: i64, %o: i64):
    dyno.yield %u : i64
  } -> tensor<8xi64>
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["parallel", "parallel"]} ins(%inv : tensor<8xi64>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%row, %col] : tensor<8x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %q = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["parallel", "parallel"]} ins(%partial : tensor<8xi64>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%row, %col] : tensor<8x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %r, %q : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// linalg.map: its elements are those its body yields (here user data: unbounded).
// CHECK-LABEL: func.func @gather$mapped_indices
// CHECK:         cf.assert {{.*}} "index out of range
func.func @gather$mapped_indices(%x: tensor<4xi64>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %ei = tensor.empty() : tensor<4xi64>
  %m = linalg.map ins(%x : tensor<4xi64>) outs(%ei : tensor<4xi64>)
    (%v: i64, %o: i64) {
      linalg.yield %v : i64
    }
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%m : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %k = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%k] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A negative index's wraparound of sort positions (never negative) picks the position
// itself: the select goes, and the generic yields its input. The same wraparound of a
// function argument (unbounded) stays.
// CHECK-LABEL: func.func @select$wrapped_sort_positions
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[P:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT:      linalg.yield %[[P]] : i64
// CHECK:         linalg.generic
// CHECK:           arith.select
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%{{.+}}: i1, %[[Q:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT:      linalg.yield %[[Q]] : i64
func.func @select$wrapped_sort_positions(%x: tensor<8xi64>, %y: tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>) {
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8 : i64
  %s:2 = dyno.library_call "aten.sort.stable"(%x) {arguments = [unit, true, -1, false]} : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>)
  %e = tensor.empty() : tensor<8xi64>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s#1 : tensor<8xi64>) outs(%e : tensor<8xi64>) {
  ^bb0(%p: i64, %o: i64):
    %neg = arith.cmpi slt, %p, %c0 : i64
    %up = arith.addi %p, %c8 : i64
    %r = arith.select %neg, %up, %p : i64
    linalg.yield %r : i64
  } -> tensor<8xi64>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<8xi64>) outs(%e : tensor<8xi64>) {
  ^bb0(%p: i64, %o: i64):
    %neg = arith.cmpi slt, %p, %c0 : i64
    %up = arith.addi %p, %c8 : i64
    %r = arith.select %neg, %up, %p : i64
    linalg.yield %r : i64
  } -> tensor<8xi64>
  // Before fusion torch-mlir's where() reads its comparison from a generic of its own.
  %eb = tensor.empty() : tensor<8xi1>
  %negs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s#1 : tensor<8xi64>) outs(%eb : tensor<8xi1>) {
  ^bb0(%p: i64, %o: i1):
    %neg = arith.cmpi slt, %p, %c0 : i64
    linalg.yield %neg : i1
  } -> tensor<8xi1>
  %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%negs, %s#1 : tensor<8xi1>, tensor<8xi64>) outs(%e : tensor<8xi64>) {
  ^bb0(%n: i1, %p: i64, %o: i64):
    %up = arith.addi %p, %c8 : i64
    %r = arith.select %n, %up, %p : i64
    linalg.yield %r : i64
  } -> tensor<8xi64>
  return %w, %v, %u : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Decided selects that pick each other (a wraparound of a wraparound): each picks what
// replaced the one before it, which is gone by then (this read a deleted value).
// CHECK-LABEL: func.func @select$chained
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[P:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT:      linalg.yield %[[P]] : i64
func.func @select$chained(%x: tensor<8xi64>) -> tensor<8xi64> {
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8 : i64
  %s:2 = dyno.library_call "aten.sort.stable"(%x) {arguments = [unit, true, -1, false]} : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>)
  %e = tensor.empty() : tensor<8xi64>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s#1 : tensor<8xi64>) outs(%e : tensor<8xi64>) {
  ^bb0(%p: i64, %o: i64):
    %neg = arith.cmpi slt, %p, %c0 : i64
    %up = arith.addi %p, %c8 : i64
    %r = arith.select %neg, %up, %p : i64
    %neg2 = arith.cmpi slt, %r, %c0 : i64
    %up2 = arith.addi %r, %c8 : i64
    %r2 = arith.select %neg2, %up2, %r : i64
    %neg3 = arith.cmpi slt, %r2, %c0 : i64
    %up3 = arith.addi %r2, %c8 : i64
    %r3 = arith.select %neg3, %up3, %r2 : i64
    linalg.yield %r3 : i64
  } -> tensor<8xi64>
  return %w : tensor<8xi64>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A graph constant's index tensor (a dense resource, as torch-mlir imports buffers):
// its values [0, 3] are in range of 4 elements.
// CHECK-LABEL: func.func @gather$resource_indices
// CHECK-NOT:     cf.assert
func.func @gather$resource_indices(%w: tensor<4xf32>) -> tensor<2xf32> {
  %in = arith.constant dense_resource<indices_0_3> : tensor<2xi64>
  %e = tensor.empty() : tensor<2xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%in : tensor<2xi64>) outs(%e : tensor<2xf32>) {
  ^bb0(%i: i64, %o: f32):
    %k = arith.index_cast %i : i64 to index
    %v = tensor.extract %w[%k] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<2xf32>
  return %a : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      indices_0_3: "0x0800000000000000000000000300000000000000"
    }
  }
#-}

// -----

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>

// A proven check whose own generic wraps sort positions before comparing them: the
// decided select goes first, then the check and its generic, and with the generic the
// select's comparison in its body (this read the freed comparison).
// CHECK-LABEL: func.func @select$in_a_proven_check
// CHECK-NOT:     cf.assert
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @select$in_a_proven_check(%x: tensor<8xi64>) -> tensor<8xi64> {
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8 : i64
  %true = arith.constant true
  %s:2 = dyno.library_call "aten.sort.stable"(%x) {arguments = [unit, true, -1, false]} : (tensor<8xi64>) -> (tensor<8xi64>, tensor<8xi64>)
  %e = tensor.empty() : tensor<i1>
  %f = linalg.fill ins(%true : i1) outs(%e : tensor<i1>) -> tensor<i1>
  %ok = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%s#1 : tensor<8xi64>) outs(%f : tensor<i1>) {
  ^bb0(%p: i64, %acc: i1):
    %neg = arith.cmpi slt, %p, %c0 : i64
    %up = arith.addi %p, %c8 : i64
    %r = arith.select %neg, %up, %p : i64
    %lo = arith.cmpi sge, %r, %c0 : i64
    %hi = arith.cmpi slt, %r, %c8 : i64
    %in = arith.andi %lo, %hi : i1
    %both = arith.andi %acc, %in : i1
    linalg.yield %both : i1
  } -> tensor<i1>
  %b = tensor.extract %ok[] : tensor<i1>
  cf.assert %b, "index out of range"
  return %s#0 : tensor<8xi64>
}
