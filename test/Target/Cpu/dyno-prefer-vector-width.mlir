// RUN: dyno-opt %s --dyno-prefer-vector-width=width=512 | FileCheck %s
// RUN: dyno-opt %s --dyno-prefer-vector-width | FileCheck %s --check-prefix=DEFAULT
// RUN: not dyno-opt %s --dyno-prefer-vector-width=width=96 2>&1 | FileCheck %s --check-prefix=ERROR
// RUN: dyno-opt %s --pass-pipeline="builtin.module(dyno-cpu-lowering-pipeline{vector-width=512})" | FileCheck %s --check-prefix=PIPELINE

// Every defined function gets the attribute, beside the ones it has (a previous width is
// replaced); declarations are left alone.
// CHECK-LABEL: llvm.func @kernel_0
// CHECK-SAME:    passthrough = [
// CHECK-SAME:    ["prefer-vector-width", "512"]
// CHECK-LABEL: llvm.func @kernel_1
// CHECK-SAME:    passthrough = ["nounwind", ["prefer-vector-width", "512"]]
// CHECK:       llvm.func @expf(f32) -> f32
// CHECK-NOT:     passthrough
// DEFAULT: llvm.func @kernel_0(%arg0: !llvm.ptr) {
// DEFAULT: llvm.func @kernel_1(%arg0: !llvm.ptr) attributes {passthrough = ["nounwind", ["prefer-vector-width", "256"]]}
// ERROR: width must be a power of two of at least 128 bits, got 96
// PIPELINE: prefer-vector-width
// (In `module @kernels`, where the CPU lowering pipeline runs.)
module {
  module @kernels {
    llvm.func @kernel_0(%arg0: !llvm.ptr) {
      llvm.return
    }
    llvm.func @kernel_1(%arg0: !llvm.ptr) attributes {passthrough = ["nounwind", ["prefer-vector-width", "256"]]} {
      llvm.return
    }
    llvm.func @expf(f32) -> f32
  }
}
