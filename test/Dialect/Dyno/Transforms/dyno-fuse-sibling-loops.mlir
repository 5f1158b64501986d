// RUN: dyno-opt %s --dyno-fuse-sibling-loops | FileCheck %s

// GELU's loop writes a row buffer, max's loop reads it element by element: one loop.
// The accumulator's initialization between them moves above.
// CHECK-LABEL: func.func @producer$consumer
// CHECK:         memref.store %{{.*}}, %[[MAX:.*]][%{{.*}}] : memref<1xf32>
// CHECK:         scf.for %[[J:.*]] =
// CHECK:           memref.store %{{.*}}, %[[T:.*]][%[[J]]] : memref<1024xf32>
// CHECK:           memref.load %[[T]][%[[J]]] : memref<1024xf32>
// CHECK:           arith.maximumf
// CHECK:           memref.store %{{.*}}, %[[MAX]][%{{.*}}] : memref<1xf32>
// CHECK-NOT:     scf.for
// CHECK:         return
func.func @producer$consumer(%x: memref<1024xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %ninf = arith.constant 0xFF800000 : f32
  %t = memref.alloca() : memref<1024xf32>
  scf.for %j = %c0 to %c1024 step %c1 {
    %v = memref.load %x[%j] : memref<1024xf32>
    %g = arith.mulf %v, %v : f32
    memref.store %g, %t[%j] : memref<1024xf32>
  }
  %max = memref.alloca() : memref<1xf32>
  memref.store %ninf, %max[%c0] : memref<1xf32>
  scf.for %j = %c0 to %c1024 step %c1 {
    %v = memref.load %t[%j] : memref<1024xf32>
    %m = memref.load %max[%c0] : memref<1xf32>
    %n = arith.maximumf %v, %m : f32
    memref.store %n, %max[%c0] : memref<1xf32>
  }
  memref.copy %max, %out : memref<1xf32> to memref<1xf32>
  return
}

// The second loop needs the first's finished reduction (softmax's exp waits for the
// max): the accumulator is indexed without the induction variable. Loops with other
// bounds, and an access one element ahead, stay apart too.
// CHECK-LABEL: func.func @dependences$kept
// CHECK-COUNT-4: scf.for
func.func @dependences$kept(%x: memref<1024xf32>, %y: memref<1024xf32>, %z: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c1023 = arith.constant 1023 : index
  %c1024 = arith.constant 1024 : index
  %acc = memref.alloca() : memref<1xf32>
  scf.for %j = %c0 to %c1024 step %c1 {
    %v = memref.load %x[%j] : memref<1024xf32>
    %a = memref.load %acc[%c0] : memref<1xf32>
    %s = arith.addf %v, %a : f32
    memref.store %s, %acc[%c0] : memref<1xf32>
  }
  scf.for %j = %c0 to %c1024 step %c1 {
    %v = memref.load %x[%j] : memref<1024xf32>
    %a = memref.load %acc[%c0] : memref<1xf32>
    %d = arith.subf %v, %a : f32
    memref.store %d, %y[%j] : memref<1024xf32>
  }
  scf.for %j = %c0 to %c512 step %c1 {
    %v = memref.load %y[%j] : memref<1024xf32>
    memref.store %v, %z[%j] : memref<1024xf32>
  }
  scf.for %j = %c0 to %c1023 step %c1 {
    %next = arith.addi %j, %c1 : index
    %v = memref.load %y[%next] : memref<1024xf32>
    memref.store %v, %z[%j] : memref<1024xf32>
  }
  return
}

// Nests fuse from the outside in: rows first, then the columns of each row.
// CHECK-LABEL: func.func @nests
// CHECK:         scf.for %[[I:.*]] =
// CHECK:           scf.for %[[J:.*]] =
// CHECK:             memref.store %{{.*}}, %[[T:.*]][%[[I]], %[[J]]]
// CHECK:             memref.load %[[T]][%[[I]], %[[J]]]
// CHECK-NOT:       scf.for
// CHECK:         return
func.func @nests(%x: memref<4x1024xf32>, %y: memref<4x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c1024 = arith.constant 1024 : index
  %t = memref.alloca() : memref<4x1024xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c1024 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x1024xf32>
      %e = math.exp %v : f32
      memref.store %e, %t[%i, %j] : memref<4x1024xf32>
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c1024 step %c1 {
      %v = memref.load %t[%i, %j] : memref<4x1024xf32>
      %n = arith.negf %v : f32
      memref.store %n, %y[%i, %j] : memref<4x1024xf32>
    }
  }
  return
}
