// RUN: dyno-opt %s --dyno-widen-bool-memrefs | FileCheck %s

// CHECK: memref.global "private" constant @mask : memref<3xi8> = dense<[1, 0, 1]>
memref.global "private" constant @mask : memref<3xi1> = dense<[true, false, true]>

// CHECK-LABEL: func.func @memref$bool(
// CHECK-SAME:    %[[IN:.*]]: memref<3xi8>, %[[OUT:.*]]: memref<3xi8>)
func.func @memref$bool(%in: memref<3xi1>, %out: memref<3xi1>) {
  %c0 = arith.constant 0 : index
  // CHECK: %[[TMP:.*]] = memref.alloc() : memref<3xi8>
  %tmp = memref.alloc() : memref<3xi1>
  // CHECK: %[[G:.*]] = memref.get_global @mask : memref<3xi8>
  %g = memref.get_global @mask : memref<3xi1>
  // CHECK: %[[BYTE:.*]] = memref.load %[[IN]][%{{.*}}] : memref<3xi8>
  // CHECK: %[[BIT:.*]] = arith.trunci %[[BYTE]] : i8 to i1
  %v = memref.load %in[%c0] : memref<3xi1>
  // CHECK: %[[GBIT:.*]] = arith.trunci %{{.*}} : i8 to i1
  %m = memref.load %g[%c0] : memref<3xi1>
  %x = arith.andi %v, %m : i1
  // CHECK: %[[WIDE:.*]] = arith.extui %{{.*}} : i1 to i8
  // CHECK: memref.store %[[WIDE]], %[[TMP]][%{{.*}}] : memref<3xi8>
  memref.store %x, %tmp[%c0] : memref<3xi1>
  // CHECK: memref.copy %[[TMP]], %[[OUT]] : memref<3xi8> to memref<3xi8>
  memref.copy %tmp, %out : memref<3xi1> to memref<3xi1>
  // CHECK: memref.dealloc %[[TMP]] : memref<3xi8>
  memref.dealloc %tmp : memref<3xi1>
  return
}

// Other element types are untouched.
// CHECK-LABEL: func.func @memref$f32(
// CHECK-SAME:    memref<3xf32>
func.func @memref$f32(%in: memref<3xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %in[%c0] : memref<3xf32>
  return %v : f32
}
