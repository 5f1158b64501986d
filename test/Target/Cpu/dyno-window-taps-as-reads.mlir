// RUN: dyno-opt %s --split-input-file --dyno-window-taps-as-reads | FileCheck %s
// RUN: dyno-opt %s --split-input-file --dyno-window-taps-as-reads --dyno-fuse-elementwise | FileCheck %s --check-prefix=FUSED

// A channels-last max pool (2x2 taps of stride 2 over rows and columns, padded at the
// top and left) of a batch norm + ReLU: each tap is a generic that computes, at
// (2i - 1 + r, 2j - 1 + c), the batch norm's body on the image's element where that
// index is inside it (scf.if) and -inf elsewhere. The padded tensor and the slices of
// rows are gone.
// CHECK-LABEL: func.func @pool_of_batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x16xf32>, %[[SCALE:.*]]: tensor<16xf32>)
// CHECK-NOT: tensor.pad
// CHECK-NOT: tensor.extract_slice
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[TAP:.*]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<1x2x2x16xf32>)
// CHECK-DAG: %[[I1:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[I2:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[I3:.*]] = linalg.index 3 : index
// CHECK-DAG: %[[H:.*]] = arith.muli %[[I1]], %[[TWO]] : index
// CHECK-DAG: %[[W:.*]] = arith.muli %[[I2]], %[[TWO]] : index
// CHECK-DAG: %[[HS:.*]] = arith.subi %[[H]], %[[ONE]] : index
// CHECK-DAG: arith.cmpi ult, %[[HS]], %[[FOUR]] : index
// CHECK-DAG: %[[WS:.*]] = arith.subi %[[W]], %[[ONE]] : index
// CHECK-DAG: arith.cmpi ult, %[[WS]], %[[FOUR]] : index
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK:   %[[V:.*]] = tensor.extract %[[X]][%{{.*}}, %[[HS]], %[[WS]], %[[I3]]] : tensor<1x4x4x16xf32>
// CHECK:   %[[S:.*]] = tensor.extract %[[SCALE]][%[[I3]]] : tensor<16xf32>
// CHECK:   %[[M:.*]] = arith.mulf %[[V]], %[[S]] : f32
// CHECK:   %[[R:.*]] = arith.maximumf %[[M]], %{{.*}} : f32
// CHECK:   scf.yield %[[R]] : f32
// CHECK: } else {
// CHECK:   scf.yield %{{.*}} : f32
// CHECK: linalg.generic {{.*}}ins(%[[TAP]], %{{.*}}, %{{.*}}, %{{.*}} :
// The fused result: one generic reads the image and the scale, nothing else.
// FUSED-LABEL: func.func @pool_of_batch_norm
// FUSED-NOT: tensor.pad
// FUSED: %[[OUT:.*]] = linalg.generic
// FUSED-NOT: ins(
// FUSED-SAME: outs(%{{.*}} : tensor<1x2x2x16xf32>)
// FUSED-COUNT-4: tensor.extract %arg0
// FUSED-NOT: linalg.generic
// FUSED: return %[[OUT]]
func.func @pool_of_batch_norm(%x: tensor<1x4x4x16xf32>, %scale: tensor<16xf32>)
    -> tensor<1x2x2x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %bn = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>,
                       affine_map<(n, h, w, c) -> (c)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %scale : tensor<1x4x4x16xf32>, tensor<16xf32>) outs(%e : tensor<1x4x4x16xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %m = arith.mulf %v, %s : f32
    %r = arith.maximumf %m, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x16xf32>
  %p = tensor.pad %bn low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<1x4x4x16xf32> to tensor<1x5x5x16xf32>
  %rows0 = tensor.extract_slice %p[0, 0, 0, 0] [1, 2, 5, 16] [1, 2, 1, 1]
      : tensor<1x5x5x16xf32> to tensor<1x2x5x16xf32>
  %rows1 = tensor.extract_slice %p[0, 1, 0, 0] [1, 2, 5, 16] [1, 2, 1, 1]
      : tensor<1x5x5x16xf32> to tensor<1x2x5x16xf32>
  %t00 = tensor.extract_slice %rows0[0, 0, 0, 0] [1, 2, 2, 16] [1, 1, 2, 1]
      : tensor<1x2x5x16xf32> to tensor<1x2x2x16xf32>
  %t01 = tensor.extract_slice %rows0[0, 0, 1, 0] [1, 2, 2, 16] [1, 1, 2, 1]
      : tensor<1x2x5x16xf32> to tensor<1x2x2x16xf32>
  %t10 = tensor.extract_slice %rows1[0, 0, 0, 0] [1, 2, 2, 16] [1, 1, 2, 1]
      : tensor<1x2x5x16xf32> to tensor<1x2x2x16xf32>
  %t11 = tensor.extract_slice %rows1[0, 0, 1, 0] [1, 2, 2, 16] [1, 1, 2, 1]
      : tensor<1x2x5x16xf32> to tensor<1x2x2x16xf32>
  %e2 = tensor.empty() : tensor<1x2x2x16xf32>
  %max = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t00, %t01, %t10, %t11 : tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>,
                                   tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>)
      outs(%e2 : tensor<1x2x2x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %o: f32):
    %ab = arith.maximumf %a, %b : f32
    %cd = arith.maximumf %c, %d : f32
    %r = arith.maximumf %ab, %cd : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x16xf32>
  return %max : tensor<1x2x2x16xf32>
}

// -----

// An NCHW window: its taps are strided along the innermost dimension (and the pad
// pads it), so the reads would change their checks along the innermost loop: left as
// it is.
// CHECK-LABEL: func.func @nchw_window_is_left
// CHECK: tensor.pad
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 16, 2, 2] [1, 1, 2, 2]
func.func @nchw_window_is_left(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x2x2xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<1x16x4x4xf32> to tensor<1x16x5x5xf32>
  %t = tensor.extract_slice %p[0, 0, 0, 0] [1, 16, 2, 2] [1, 1, 2, 2]
      : tensor<1x16x5x5xf32> to tensor<1x16x2x2xf32>
  %e = tensor.empty() : tensor<1x16x2x2xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<1x16x2x2xf32>) outs(%e : tensor<1x16x2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x16x2x2xf32>
  return %r : tensor<1x16x2x2xf32>
}

// -----

// A transcendental producer is computed once, not in each tap: its slices are read
// (the tap's generic extracts its elements), the exp stays a generic of its own.
// CHECK-LABEL: func.func @exp_is_not_recomputed
// CHECK: %[[EXP:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK: tensor.extract %[[EXP]]
func.func @exp_is_not_recomputed(%x: tensor<1x4x4x16xf32>) -> tensor<1x2x2x16xf32> {
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %ex = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x16xf32>) outs(%e : tensor<1x4x4x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x16xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %ex low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<1x4x4x16xf32> to tensor<1x5x5x16xf32>
  %t = tensor.extract_slice %p[0, 0, 0, 0] [1, 2, 2, 16] [1, 2, 2, 1]
      : tensor<1x5x5x16xf32> to tensor<1x2x2x16xf32>
  %e2 = tensor.empty() : tensor<1x2x2x16xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<1x2x2x16xf32>) outs(%e2 : tensor<1x2x2x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x2x16xf32>
  return %r : tensor<1x2x2x16xf32>
}

// -----

// A tap that something other than a generic reads (here the function's result) is
// left as a slice: a generic of its own would copy it.
// CHECK-LABEL: func.func @tap_returned_is_left
// CHECK: tensor.pad
// CHECK: tensor.extract_slice
// CHECK-NOT: linalg.generic
func.func @tap_returned_is_left(%x: tensor<1x4x4x16xf32>) -> tensor<1x2x2x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<1x4x4x16xf32> to tensor<1x5x5x16xf32>
  %t = tensor.extract_slice %p[0, 0, 0, 0] [1, 2, 2, 16] [1, 2, 2, 1]
      : tensor<1x5x5x16xf32> to tensor<1x2x2x16xf32>
  return %t : tensor<1x2x2x16xf32>
}
