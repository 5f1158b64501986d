// Bad input gets an MLIR diagnostic and a nonzero exit, never a crash.
// RUN: not dyno-opt %s 2>&1 | FileCheck %s
// RUN: not dyno-opt --dyno-cpu-pipeline %s 2>&1 | FileCheck %s

// CHECK: error: custom op 'this' is unknown
func.func @garbage() {
  this is not mlir
}
