// RUN: rm -rf %t && split-file %s %t
// RUN: dyno-opt %t/constants.mlir --pass-pipeline="builtin.module(dyno-write-ir{file=%t/before.mlir},canonicalize,dyno-write-ir{file='%t/after.mlir'})" | FileCheck %s --check-prefix=OUT
// RUN: FileCheck %s --check-prefix=BEFORE < %t/before.mlir
// RUN: FileCheck %s --check-prefix=AFTER < %t/after.mlir
// RUN: dyno-opt %t/graph.mlir --pass-pipeline="builtin.module(dyno-kernel-formation-pipeline,dyno-write-ir{file=%t/kernels.mlir},dyno-cpu-lowering-pipeline)" -o %t/lowered.mlir
// RUN: dyno-opt %t/kernels.mlir --dyno-cpu-lowering-pipeline | diff - %t/lowered.mlir
// RUN: FileCheck %s --check-prefix=KERNELS < %t/kernels.mlir
// RUN: not dyno-opt %t/graph.mlir --pass-pipeline="builtin.module(dyno-write-ir{file=%t/missing/x})" 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not dyno-opt %t/graph.mlir --pass-pipeline="builtin.module(dyno-write-ir)" 2>&1 | FileCheck %s --check-prefix=NONAME

// The IR where the pass stands goes to the file, resources included; the pass changes
// nothing, and what follows it runs on the same IR.
// BEFORE:      func.func @main
// BEFORE:        arith.addf %[[C:.*]], %[[C]]
// BEFORE:        dense_resource<weights>
// BEFORE:      {-#
// BEFORE:        weights: "0x04000000
// AFTER:       func.func @main
// AFTER-NOT:     arith.addf
// AFTER:       {-#
// AFTER:         weights:
// OUT:         func.func @main
// OUT-NOT:       arith.addf
// OUT:           arith.constant dense<6.000000e+00>

// Kernel formation's host schedule and kernels, written between the two pipelines of
// one dyno-opt process: the lowering of that file gives what the process gave. (A graph
// without constants: LLVM 22's one-shot-bufferize creates the globals of a module's
// functions in an order that varies from run to run, fixed upstream by llvm-project
// PR 184722.)
// KERNELS:     dyno.launch @kernels::@kernel_0
// KERNELS:     module @kernels

// NOFILE: error: dyno-write-ir: cannot open output file
// NONAME: error: dyno-write-ir needs a file

//--- constants.mlir
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) {
  %c = arith.constant dense<3.0> : tensor<4xf32>
  %d = arith.addf %c, %c : tensor<4xf32>
  %w = arith.constant dense_resource<weights> : tensor<2xf32>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %y, %d, %w : tensor<4xf32>, tensor<4xf32>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F00000040"
    }
  }
#-}

//--- graph.mlir
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
