// RUN: dyno-opt %s --split-input-file --dyno-unswitch-inner-loops | FileCheck %s

// A channels-last pad: the channel loop reads the source only where the row is inside
// it, a condition of the outer loop. The condition's computation is hoisted and the
// branch taken outside: one loop copies, the other fills.
// CHECK-LABEL: func.func @pad_rows
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   %[[ROW:.*]] = arith.subi %[[H]], %{{.*}} : index
// CHECK:   %[[INSIDE:.*]] = arith.cmpi ult, %[[ROW]], %{{.*}} : index
// CHECK:   scf.if %[[INSIDE]] {
// CHECK:     scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:  %[[V:.*]] = memref.load %{{.*}}[%[[ROW]], %[[C]]] : memref<4x16xf32>
// CHECK-NEXT:  memref.store %[[V]], %{{.*}}[%[[H]], %[[C]]] : memref<6x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK-NEXT:  scf.for %[[C2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:  memref.store %{{.*}}, %{{.*}}[%[[H]], %[[C2]]] : memref<6x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: scf.if
func.func @pad_rows(%x: memref<4x16xf32>, %y: memref<6x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.for %h = %c0 to %c6 step %c1 {
    scf.for %c = %c0 to %c16 step %c1 {
      %row = arith.subi %h, %c1 : index
      %inside = arith.cmpi ult, %row, %c4 : index
      %v = scf.if %inside -> (f32) {
        %l = memref.load %x[%row, %c] : memref<4x16xf32>
        scf.yield %l : f32
      } else {
        scf.yield %ninf : f32
      }
      memref.store %v, %y[%h, %c] : memref<6x16xf32>
    }
  }
  return
}

// -----

// Left alone: a branch on the loop's own index (an NCHW pad's column), and a loop that
// carries a value.
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.for
// CHECK-NEXT: arith.subi
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: scf.if
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.if
func.func @left_alone(%x: memref<16xf32>, %y: memref<18xf32>, %p: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c18 = arith.constant 18 : index
  %zero = arith.constant 0.0 : f32
  scf.for %w = %c0 to %c18 step %c1 {
    %column = arith.subi %w, %c1 : index
    %inside = arith.cmpi ult, %column, %c16 : index
    %v = scf.if %inside -> (f32) {
      %l = memref.load %x[%column] : memref<16xf32>
      scf.yield %l : f32
    } else {
      scf.yield %zero : f32
    }
    memref.store %v, %y[%w] : memref<18xf32>
  }
  %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
    %l = memref.load %x[%i] : memref<16xf32>
    %next = scf.if %p -> (f32) {
      %a = arith.addf %acc, %l : f32
      scf.yield %a : f32
    } else {
      scf.yield %acc : f32
    }
    scf.yield %next : f32
  }
  return %sum : f32
}
