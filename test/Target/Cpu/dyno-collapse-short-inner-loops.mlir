// RUN: dyno-opt %s --split-input-file --dyno-collapse-short-inner-loops | FileCheck %s

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>

// A row block of an image (16-wide rows): the rows and columns become one loop of 256,
// the channel loop stays (the per-channel scale indexes it alone).
// CHECK-LABEL: func.func @image_block
// CHECK: %[[X:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]]
// CHECK-SAME: into memref<1x64x256xf32, strided<[16384, 256, 1], offset: ?>>
// CHECK: %[[Y:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %{{.*}} : memref<1x64x256xf32, strided<[16384, 256, 1], offset: ?>>, memref<64xf32>)
func.func @image_block(%x: memref<16x64x16x16xf32>, %scale: memref<64xf32>,
                       %y: memref<16x64x16x16xf32>, %n: index) {
  %xs = memref.subview %x[%n, 0, 0, 0] [1, 64, 16, 16] [1, 1, 1, 1]
      : memref<16x64x16x16xf32> to memref<1x64x16x16xf32, strided<[16384, 256, 16, 1], offset: ?>>
  %ys = memref.subview %y[%n, 0, 0, 0] [1, 64, 16, 16] [1, 1, 1, 1]
      : memref<16x64x16x16xf32> to memref<1x64x16x16xf32, strided<[16384, 256, 16, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id4, #channel, #id4],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xs, %scale : memref<1x64x16x16xf32, strided<[16384, 256, 16, 1], offset: ?>>, memref<64xf32>)
      outs(%ys : memref<1x64x16x16xf32, strided<[16384, 256, 16, 1], offset: ?>>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.mulf %in, %s : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Columns 2 apart (a pooling window's strided slice) are not contiguous: left alone.
// A long innermost loop is left alone too.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: memref.collapse_shape
func.func @left_alone(%x: memref<4x8x8xf32, strided<[289, 34, 2], offset: ?>>,
                      %y: memref<4x8x8xf32>, %a: memref<4x2x128xf32>, %b: memref<4x2x128xf32>) {
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<4x8x8xf32, strided<[289, 34, 2], offset: ?>>) outs(%y : memref<4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<4x2x128xf32>) outs(%b : memref<4x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows = affine_map<(d0, d1, d2) -> (d0)>

// A sum over short trailing reduction loops: they merge; the parallel loop stays.
// CHECK-LABEL: func.func @reduction
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : memref<4x8x8xf32> into memref<4x64xf32>
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @reduction(%x: memref<4x8x8xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id3, #rows], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : memref<4x8x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#window = affine_map<(d0, d1, d2, d3, d4) -> (d0 + d4, d1, d2, d3)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

// unfold's sliding windows read x[d0 + d4, ...]: a map that is no projected permutation
// is left alone (the pass crashed dyno-opt on it, an assertion in upstream's
// isDimSequencePreserved; the OpInfo sweep's unfold fell back).
// CHECK-LABEL: func.func @sliding_window
// CHECK-NOT: memref.collapse_shape
// CHECK: linalg.generic
func.func @sliding_window(%x: memref<5x5x5x5xf32>, %y: memref<3x5x5x5x3xf32>) {
  linalg.generic {indexing_maps = [#window, #id5],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<5x5x5x5xf32>) outs(%y : memref<3x5x5x5x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
