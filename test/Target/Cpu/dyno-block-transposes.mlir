// RUN: dyno-opt %s --split-input-file --dyno-block-transposes | FileCheck %s

#transposed = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// A transpose of f32 rows: both loops in blocks of 16 (one cache line of floats).
// CHECK-LABEL: func.func @transpose
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     %[[IN:.*]] = memref.subview %{{.*}}[%[[J]], %[[I]]] [16, 16] [1, 1]
// CHECK:     %[[OUT:.*]] = memref.subview %{{.*}}[%[[I]], %[[J]]] [16, 16] [1, 1]
// CHECK:     linalg.generic
// CHECK-SAME:  ins(%[[IN]] : memref<16x16xf32, strided<[1024, 1], offset: ?>>)
// CHECK-SAME:  outs(%[[OUT]] : memref<16x16xf32, strided<[64, 1], offset: ?>>)
func.func @transpose(%x: memref<64x1024xf32>, %y: memref<1024x64xf32>) {
  linalg.generic {indexing_maps = [#transposed, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x1024xf32>) outs(%y : memref<1024x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

#transposed = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// bf16: blocks of 32 along the innermost loop; a row block of 16 stays whole.
// CHECK-LABEL: func.func @bf16_row_block
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT: scf.for
// CHECK: memref.subview %{{.*}}[%[[J]], 0] [32, 16] [1, 1]
func.func @bf16_row_block(%x: memref<128x16xbf16>, %y: memref<16x128xbf16>) {
  linalg.generic {indexing_maps = [#transposed, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<128x16xbf16>) outs(%y : memref<16x128xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  }
  return
}

// -----

#transposed = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Left alone: a short innermost loop, an elementwise op, a per-row broadcast.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.for
func.func @left_alone(%x: memref<16x1024xf32>, %y: memref<1024x16xf32>,
                      %a: memref<64x64xf32>, %b: memref<64x64xf32>, %r: memref<64xf32>) {
  linalg.generic {indexing_maps = [#transposed, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x1024xf32>) outs(%y : memref<1024x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %r : memref<64x64xf32>, memref<64xf32>) outs(%b : memref<64x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.mulf %in, %s : f32
    linalg.yield %0 : f32
  }
  return
}
