# RUN: %PYTHON %s | FileCheck %s
# Dyno's MLIR Python package: the dialect and Dyno's pipelines are registered in every
# context, and the verifier's diagnostics reach Python.
from dyno import ir
from dyno.passmanager import PassManager

GRAPH = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
"""

with ir.Context():
    module = ir.Module.parse(GRAPH)
    PassManager.parse("builtin.module(dyno-kernel-formation-pipeline)").run(module.operation)
    # CHECK-LABEL: formed
    print("formed")
    # CHECK: dyno.launch @kernels::@kernel_0(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    # CHECK: module @kernels
    print(module)

    # CHECK-LABEL: invalid
    print("invalid")
    try:
        ir.Module.parse('func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n'
                        '  %0 = dyno.contraction "gemm"(%a, %a) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>\n'
                        '  return %0 : tensor<4x4xf32>\n}')
    except ir.MLIRError as error:
        # CHECK: unknown library operation 'gemm'
        print(error)
