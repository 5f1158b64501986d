// RUN: dyno-opt %s --dyno-block-long-sums=dynamic-extents=true | FileCheck %s
// RUN: dyno-opt %s --dyno-block-long-sums | FileCheck %s --check-prefix=STATIC
// RUN: dyno-opt %s --dyno-block-long-sums=expand-producers=true | FileCheck %s --check-prefix=EXPAND

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>

// A row of 10000 floats: 19 blocks of 512 summed in parallel in f32, a tail of 272 into
// the init, then the blocks' partial sums added in f64 into the tail's result widened,
// rounded to f32 once at the end.
// CHECK-LABEL: func.func @row$sum
// CHECK: %[[MAIN:.*]] = tensor.extract_slice %arg0[0, 0] [4, 9728] [1, 1]
// CHECK: %[[BLOCKS:.*]] = tensor.expand_shape %[[MAIN]] {{\[}}[0], [1, 2]] output_shape [4, 19, 512]
// CHECK: arith.constant -0.000000e+00 : f32
// CHECK: %[[PARTIALS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[BLOCKS]] : tensor<4x19x512xf32>) outs({{.*}} : tensor<4x19xf32>)
// CHECK-NOT: arith.extf
// CHECK:   arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[TAILIN:.*]] = tensor.extract_slice %arg0[0, 9728] [4, 272] [1, 1]
// CHECK: %[[TAIL:.*]] = linalg.generic {{.*}} ins(%[[TAILIN]] : tensor<4x272xf32>) outs(%arg1 : tensor<4xf32>)
// CHECK: %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[TAIL]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xf64>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[PARTIALS]] : tensor<4x19xf32>) outs(%[[WIDE]] : tensor<4xf64>)
// CHECK:   arith.extf %{{.*}} : f32 to f64
// CHECK:   arith.addf %{{.*}}, %{{.*}} : f64
// CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<4xf64>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:   arith.truncf %{{.*}} : f64 to f32
// CHECK: return %[[ROUNDED]]
func.func @row$sum(%x: tensor<4x10000xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x10000xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Short rows, and reductions other than sums, stay as they are.
// CHECK-LABEL: func.func @short$or$max
// CHECK-NOT: tensor.extract_slice
// CHECK: return
func.func @short$or$max(%x: tensor<4x8192xf32>, %y: tensor<4x100000xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8192xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x100000xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// A softmax's exp feeds the sum and the scaling. By default the sum reads the exp's
// result through a reshape; with expand-producers the exp is computed in the blocks'
// shape (4 x 32 x 512), the partial sums read it as it is, the scaling collapsed.
// CHECK-LABEL: func.func @softmax$exp
// CHECK: math.exp
// CHECK-SAME: f32
// CHECK: tensor.expand_shape
// EXPAND-LABEL: func.func @softmax$exp
// EXPAND: %[[EXP:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<4x32x512xf32>)
// EXPAND: math.exp
// EXPAND: %[[ROWS:.*]] = tensor.collapse_shape %[[EXP]] {{\[}}[0], [1, 2]] : tensor<4x32x512xf32> into tensor<4x16384xf32>
// EXPAND-NOT: tensor.expand_shape %[[ROWS]]
// EXPAND: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[EXP]] : tensor<4x32x512xf32>)
// EXPAND: linalg.generic {{.*}} ins(%[[ROWS]], %{{.*}} : tensor<4x16384xf32>, tensor<4xf32>)
#row = affine_map<(d0, d1) -> (d0)>
func.func @softmax$exp(%x: tensor<4x16384xf32>, %max: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4x16384xf32> {
  %empty = tensor.empty() : tensor<4x16384xf32>
  %e = linalg.generic {indexing_maps = [#in, #row, #in], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x16384xf32>, tensor<4xf32>) outs(%empty : tensor<4x16384xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %w = math.exp %d : f32
    linalg.yield %w : f32
  } -> tensor<4x16384xf32>
  %s = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x16384xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#in, #row, #in], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x16384xf32>, tensor<4xf32>) outs(%empty : tensor<4x16384xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %q = arith.divf %v, %t : f32
    linalg.yield %q : f32
  } -> tensor<4x16384xf32>
  return %y : tensor<4x16384xf32>
}

// A row of symbolic length: blocks of 512 as many as fit (n / 512, computed), the tail of
// n - that, then the partials' sum in f64, blocked once more (blocks of 4096).
// STATIC-LABEL: func.func @dynamic$row
// STATIC-NOT: tensor.expand_shape
// STATIC: return
// CHECK-LABEL: func.func @dynamic$row
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[BLOCKS:.*]] = arith.divui %[[N]], %[[C512:.*]] : index
// CHECK: %[[MAIN:.*]] = arith.muli %[[BLOCKS]], %[[C512]] : index
// CHECK: %[[TAILN:.*]] = arith.subi %[[N]], %[[MAIN]] : index
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %arg0[0, 0] [4, %[[MAIN]]] [1, 1]
// CHECK: tensor.expand_shape %[[SLICE]] {{\[}}[0], [1, 2]] output_shape [4, %{{.*}}, 512] : tensor<4x?xf32> into tensor<4x?x512xf32>
// CHECK: %[[PARTIALS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<4x?xf32>)
// CHECK: tensor.extract_slice %arg0[0, %[[MAIN]]] [4, %[[TAILN]]] [1, 1]
// The partials' sum, blocked again, and its own partials' sum.
// CHECK: arith.divui
// CHECK: tensor<4x?x4096xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<4x?xf64>)
// CHECK-NOT: arith.divui
// CHECK: return
func.func @dynamic$row(%x: tensor<4x?xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x?xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
