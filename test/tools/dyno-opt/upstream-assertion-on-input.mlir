// Input that trips an assertion in upstream MLIR's attribute parser (a dense array of
// `index` elements; the prebuilt kit keeps LLVM's assertions) gets an error and a nonzero
// exit, not a crash: dyno-opt parses its input under crash recovery first.
// RUN: not dyno-opt %s 2>&1 | FileCheck %s
// RUN: not dyno-opt --split-input-file --dyno-cpu-pipeline %s 2>&1 | FileCheck %s
// Without the recovery the same input dies by the assertion (a check that the input
// still exercises it: when upstream fixes its parser, this test asks to be updated).
// RUN: not --crash dyno-opt --recover-parser-crashes=false %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNRECOVERED

// CHECK: error: {{.*}}upstream-assertion-on-input.mlir: MLIR's parser or an op verifier failed an internal assertion on this input
// CHECK-NOT: PLEASE submit a bug report
// UNRECOVERED: Assertion
// UNRECOVERED: PLEASE submit a bug report

func.func @valid(%x: f32) -> f32 {
  return %x : f32
}

// -----

func.func @dense_array_of_index() attributes {sizes = array<index: 1, 2>} {
  return
}
