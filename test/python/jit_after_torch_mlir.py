# RUN: %PYTHON %s | FileCheck %s
# Two LLVMs in one process (DESIGN.md): torch-mlir's is loaded and used first, then Dyno's
# bindings JIT-compile a kernel and run it repeatedly. With LLVM symbols shared between
# the two, the JIT called the wrong functions (segfaults, hangs).
import torch
import torch_mlir.ir as torch_mlir_ir

with torch_mlir_ir.Context():
    torch_mlir_ir.Module.parse("func.func @warm_up() { return }")

from dyno import ir
from dyno.passmanager import PassManager
from dyno.targets.cpu.jit import CpuKernels, sync_threads

GRAPH = """
func.func @main(%x: tensor<512x256xf32>) -> tensor<512x256xf32> {
  %e = tensor.empty() : tensor<512x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    %s = arith.mulf %t, %a : f32
    linalg.yield %s : f32
  } -> tensor<512x256xf32>
  return %r : tensor<512x256xf32>
}
"""

with ir.Context():
    module = ir.Module.parse(GRAPH)
    PassManager.parse("builtin.module(dyno-cpu-pipeline)").run(module.operation)
    kernels = next(op for op in module.body.operations if op.operation.name == "builtin.module")
    kernels_text = str(kernels)

jit = CpuKernels(kernels_text, {"kernel_0": 2})
sync_threads(2)
x = torch.randn(512, 256)
for attempt in range(10):
    out = torch.full_like(x, float("nan"))
    jit["kernel_0"](x.data_ptr(), out.data_ptr())
    torch.testing.assert_close(out, torch.tanh(x) * x, rtol=1e-5, atol=1e-6)
# CHECK: 10 JIT runs matched with torch_mlir loaded first
print(f"{attempt + 1} JIT runs matched with torch_mlir loaded first")
