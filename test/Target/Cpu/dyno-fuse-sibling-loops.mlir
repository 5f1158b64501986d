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

// Two blocked sums of the same rows (a variance's sum(d) and sum(d^2)): the epilogue of
// the first block's partial sum (it reads the first loop's accumulator) moves below
// the second loop, the second accumulator's fill above the first: one loop.
// CHECK-LABEL: func.func @epilogue$sunk
// CHECK:         memref.store %{{.*}}, %[[B:.*]][%{{.*}}] : memref<1xf32>
// CHECK:         scf.for
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         }
// CHECK-NEXT:    memref.load %[[A:.*]][%{{.*}}] : memref<1xf32>
// CHECK-NEXT:    memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<1xf32>
// CHECK-NOT:     scf.for
// CHECK:         return
func.func @epilogue$sunk(%x: memref<4096xf32>, %total: memref<1xf32>, %squares: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloca() : memref<1xf32>
  %b = memref.alloca() : memref<1xf32>
  memref.store %zero, %a[%c0] : memref<1xf32>
  scf.for %j = %c0 to %c4096 step %c1 {
    %v = memref.load %x[%j] : memref<4096xf32>
    %s = memref.load %a[%c0] : memref<1xf32>
    %n = arith.addf %v, %s : f32
    memref.store %n, %a[%c0] : memref<1xf32>
  }
  %partial = memref.load %a[%c0] : memref<1xf32>
  memref.store %partial, %total[%c0] : memref<1xf32>
  memref.store %zero, %b[%c0] : memref<1xf32>
  scf.for %j = %c0 to %c4096 step %c1 {
    %v = memref.load %x[%j] : memref<4096xf32>
    %s = memref.load %b[%c0] : memref<1xf32>
    %q = arith.mulf %v, %v : f32
    %n = arith.addf %q, %s : f32
    memref.store %n, %b[%c0] : memref<1xf32>
  }
  %p = memref.load %b[%c0] : memref<1xf32>
  memref.store %p, %squares[%c0] : memref<1xf32>
  return
}

// Parallel loops over the rows (dyno-tile-kernels' scf.forall): the first writes row i
// of %e (through a subview at row i), the second reads row i of it through a view of a
// reshape that keeps the rows: one scf.forall, the reshape above it.
// CHECK-LABEL: func.func @parallel$rows
// CHECK:         memref.expand_shape
// CHECK:         scf.forall
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @parallel$rows(%x: memref<16x8192xf32>, %out: memref<16x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4096 = arith.constant 4096 : index
  %c8192 = arith.constant 8192 : index
  %e = memref.alloc() : memref<16x8192xf32>
  scf.forall (%i) in (16) {
    %row = memref.subview %x[%i, 0] [1, 8192] [1, 1] : memref<16x8192xf32> to memref<1x8192xf32, strided<[8192, 1], offset: ?>>
    %erow = memref.subview %e[%i, 0] [1, 8192] [1, 1] : memref<16x8192xf32> to memref<1x8192xf32, strided<[8192, 1], offset: ?>>
    scf.for %j = %c0 to %c8192 step %c1 {
      %v = memref.load %row[%c0, %j] : memref<1x8192xf32, strided<[8192, 1], offset: ?>>
      %w = math.exp %v : f32
      memref.store %w, %erow[%c0, %j] : memref<1x8192xf32, strided<[8192, 1], offset: ?>>
    }
  }
  %blocks = memref.expand_shape %e [[0], [1, 2]] output_shape [16, 2, 4096] : memref<16x8192xf32> into memref<16x2x4096xf32>
  scf.forall (%i) in (16) {
    %brow = memref.subview %blocks[%i, 0, 0] [1, 2, 4096] [1, 1, 1] : memref<16x2x4096xf32> to memref<1x2x4096xf32, strided<[8192, 4096, 1], offset: ?>>
    %orow = memref.subview %out[%i, 0] [1, 2] [1, 1] : memref<16x2xf32> to memref<1x2xf32, strided<[2, 1], offset: ?>>
    scf.for %p = %c0 to %c2 step %c1 {
      scf.for %c = %c0 to %c4096 step %c1 {
        %v = memref.load %brow[%c0, %p, %c] : memref<1x2x4096xf32, strided<[8192, 4096, 1], offset: ?>>
        %s = memref.load %orow[%c0, %p] : memref<1x2xf32, strided<[2, 1], offset: ?>>
        %n = arith.addf %v, %s : f32
        memref.store %n, %orow[%c0, %p] : memref<1x2xf32, strided<[2, 1], offset: ?>>
      }
    }
  }
  memref.dealloc %e : memref<16x8192xf32>
  return
}

// The second parallel loop reads row 0 of what the first writes in every iteration
// (not its own row): the loops stay apart.
// CHECK-LABEL: func.func @parallel$other$rows
// CHECK-COUNT-2: scf.forall
func.func @parallel$other$rows(%x: memref<16x64xf32>, %out: memref<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %e = memref.alloc() : memref<16x64xf32>
  scf.forall (%i) in (16) {
    %erow = memref.subview %e[%i, 0] [1, 64] [1, 1] : memref<16x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<16x64xf32>
      memref.store %v, %erow[%c0, %j] : memref<1x64xf32, strided<[64, 1], offset: ?>>
    }
  }
  scf.forall (%i) in (16) {
    %first = memref.subview %e[0, 0] [1, 64] [1, 1] : memref<16x64xf32> to memref<1x64xf32, strided<[64, 1]>>
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %first[%c0, %j] : memref<1x64xf32, strided<[64, 1]>>
      memref.store %v, %out[%i, %j] : memref<16x64xf32>
    }
  }
  memref.dealloc %e : memref<16x64xf32>
  return
}
