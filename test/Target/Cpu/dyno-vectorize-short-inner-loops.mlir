// RUN: dyno-opt %s --split-input-file --dyno-vectorize-short-inner-loops | FileCheck %s
// RUN: dyno-opt %s --split-input-file --pass-pipeline="builtin.module(dyno-cpu-lowering-pipeline{vector-width=512})" | FileCheck %s --check-prefix=PIPELINE

// A channels-last image's batch norm and ReLU: 16 contiguous channels innermost, the
// per-channel parameters indexed by the channel alone. The channel loop keeps its 16
// iterations for LLVM's loop vectorizer (unrolling disabled); the outer loops and the
// long loop are left alone.
// CHECK: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[ANNOTATION:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @channels_innermost
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: } {loop_annotation = #[[ANNOTATION]]}
// CHECK-NEXT: }{{$}}
// CHECK: scf.for
// CHECK: } {loop_annotation = #[[ANNOTATION]]}
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C64:.*]] step
// CHECK-NOT: loop_annotation
// CHECK: return
func.func @channels_innermost(%x: memref<32x16xf32, strided<[16, 1], offset: ?>>,
                              %mean: memref<16xf32>, %y: memref<32x16xf32>,
                              %a: memref<64xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %w = %c0 to %c32 step %c1 {
    scf.for %c = %c0 to %c16 step %c1 {
      %v = memref.load %x[%w, %c] : memref<32x16xf32, strided<[16, 1], offset: ?>>
      %m = memref.load %mean[%c] : memref<16xf32>
      %d = arith.subf %v, %m : f32
      %r = arith.maximumf %d, %zero : f32
      memref.store %r, %y[%w, %c] : memref<32x16xf32>
    }
  }
  // A loop-invariant load (a scalar parameter) is contiguous too.
  scf.for %c = %c0 to %c16 step %c1 {
    %s = memref.load %mean[%c0] : memref<16xf32>
    memref.store %s, %mean[%c] : memref<16xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %v = memref.load %a[%i] : memref<64xf32>
    memref.store %v, %b[%i] : memref<64xf32>
  }
  return
}

// -----

// Left alone: a loop that reads down a column (the index not last), one that reads
// every other element (stride 2), one that computes an index from its own (a gather),
// one that carries a value (a reduction), one too short, one that only reads.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: loop_annotation
func.func @left_alone(%x: memref<16x16xf32>, %s: memref<16xf32, strided<[2]>>,
                      %y: memref<16xf32>, %idx: memref<16xindex>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %x[%i, %c0] : memref<16x16xf32>
    memref.store %v, %y[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %s[%i] : memref<16xf32, strided<[2]>>
    memref.store %v, %y[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %j = arith.addi %i, %c1 : index
    %v = memref.load %y[%j] : memref<16xf32>
    memref.store %v, %y[%i] : memref<16xf32>
  }
  %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %y[%i] : memref<16xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %y[%i] : memref<16xf32>
    memref.store %v, %y[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %y[%i] : memref<16xf32>
  }
  return %sum : f32
}

// -----

// Through the CPU lowering pipeline, the mark reaches the LLVM dialect as the channel
// loop's latch branch's loop annotation (LLVM IR's !llvm.loop unroll.disable): only the
// innermost loop carries it.
// PIPELINE: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// PIPELINE: #[[ANNOTATION:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// PIPELINE-LABEL: llvm.func @kernel_0
// PIPELINE: llvm.br ^{{.*}} {loop_annotation = #[[ANNOTATION]]}
// PIPELINE-NOT: loop_annotation
#image = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d3)>
module {
  module @kernels {
    func.func @kernel_0(%x: tensor<8x32x32x16xf32>, %s: tensor<16xf32>) -> tensor<8x32x32x16xf32> {
      %e = tensor.empty() : tensor<8x32x32x16xf32>
      %r = linalg.generic {indexing_maps = [#image, #channel, #image],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%x, %s : tensor<8x32x32x16xf32>, tensor<16xf32>) outs(%e : tensor<8x32x32x16xf32>) {
      ^bb0(%in: f32, %scale: f32, %out: f32):
        %m = arith.mulf %in, %scale : f32
        linalg.yield %m : f32
      } -> tensor<8x32x32x16xf32>
      return %r : tensor<8x32x32x16xf32>
    }
  }
}
