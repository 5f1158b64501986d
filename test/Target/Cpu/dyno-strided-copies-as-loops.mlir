// RUN: dyno-opt %s --dyno-strided-copies-as-loops | FileCheck %s

// A pad's copy into the interior of its padded buffer (a strided view) becomes
// linalg.copy, so that it is lowered to vectorized loops and not to memrefCopy.
// CHECK-LABEL: func.func @pad_interior
// CHECK:         %[[VIEW:.*]] = memref.subview
// CHECK-NEXT:    linalg.copy ins(%arg0 : memref<4x16xbf16>) outs(%[[VIEW]] : memref<4x16xbf16, strided<[18, 1], offset: 19>>)
// CHECK-NOT:     memref.copy
func.func @pad_interior(%block: memref<4x16xbf16>, %padded: memref<6x18xbf16>) {
  %view = memref.subview %padded[1, 1] [4, 16] [1, 1] : memref<6x18xbf16> to memref<4x16xbf16, strided<[18, 1], offset: 19>>
  memref.copy %block, %view : memref<4x16xbf16> to memref<4x16xbf16, strided<[18, 1], offset: 19>>
  return
}

// Copies between contiguous buffers (identity layouts, dynamic sizes included, or a
// static view that is row-major contiguous) stay: they become llvm.memcpy.
// CHECK-LABEL: func.func @contiguous_copies_stay
// CHECK:         memref.copy %arg0, %arg1
// CHECK:         memref.copy %arg2, %arg3
// CHECK:         memref.copy %arg0, %[[ROWS:.*]] :
// CHECK-NOT:     linalg.copy
func.func @contiguous_copies_stay(%a: memref<4x16xf32>, %b: memref<4x16xf32>, %c: memref<?x16xf32>, %d: memref<?x16xf32>, %e: memref<8x16xf32>) {
  memref.copy %a, %b : memref<4x16xf32> to memref<4x16xf32>
  memref.copy %c, %d : memref<?x16xf32> to memref<?x16xf32>
  %rows = memref.subview %e[4, 0] [4, 16] [1, 1] : memref<8x16xf32> to memref<4x16xf32, strided<[16, 1], offset: 64>>
  memref.copy %a, %rows : memref<4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: 64>>
  return
}
