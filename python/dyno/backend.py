"""The `mlir` TorchDynamo backend: torch.compile(model, backend="mlir").

Registered through the `torch_dynamo_backends` entry point. Dynamo hands us an FX graph;
AOTAutograd turns it into functional ATen graphs (forward, and backward when gradients are
needed) with parameters and buffers as inputs, and Dyno compiles each one.
"""
from typing import List, Optional

import torch

from .driver.compiler import CompileOptions, compile_graph, target_and_device


def _dynamo_control_flow_exceptions():
    """Exceptions AOTAutograd raises for Dynamo to act on, not failures: a data-dependent
    op (Dynamo breaks the graph there and compiles the rest), and a restart of Dynamo's
    analysis (e.g. TensorifyScalarRestartAnalysis: a float scalar input becomes a
    specialized constant, then the frame is traced again). Swallowing them turned a
    `dynamic=True` graph into an eager fallback."""
    from torch._dynamo.exc import RestartAnalysis, ShortenTraceback
    from torch._subclasses.fake_tensor import (DataDependentOutputException,
                                               DynamicOutputShapeException)

    return (RestartAnalysis, ShortenTraceback, DataDependentOutputException,
            DynamicOutputShapeException)


_DYNAMO_CONTROL_FLOW = _dynamo_control_flow_exceptions()


def mlir(gm: torch.fx.GraphModule, example_inputs: List[torch.Tensor],
         options: Optional[dict] = None, **kwargs):
    """Dynamo backend. `options={"target": "cpu"}` selects the CPU target explicitly;
    `options={"freezing": True}` lets inference graphs keep packed copies of parameters
    (CompileOptions.freezing)."""
    from torch._dynamo.backends.common import aot_autograd

    from .ops import decompositions

    compile_options = CompileOptions.from_user(options)
    forward_runs_eagerly = []

    def forward_compiler(graph, inputs):
        return noting_eager(compile_graph(graph, inputs, compile_options, "forward"))

    def backward_compiler(graph, inputs):
        return compile_graph(graph, inputs, compile_options, "backward")

    def inference_compiler(graph, inputs):
        return noting_eager(compile_graph(graph, inputs, compile_options, "forward",
                                          inference=True))

    def noting_eager(compiled):
        if getattr(compiled, "dyno_runs_eagerly", False):
            forward_runs_eagerly.append(True)
        return compiled

    try:
        target, _ = target_and_device(example_inputs, compile_options)
        backend = aot_autograd(
            fw_compiler=forward_compiler,
            bw_compiler=backward_compiler,
            inference_compiler=inference_compiler,
            decompositions=decompositions.table(target.name),
        )
        compiled = backend(gm, example_inputs)
        if forward_runs_eagerly:
            # The forward graph did not compile (warned and counted): Dynamo's own graph
            # runs, eager's operators and autograd, not the AOT graph of Dyno's
            # decompositions (0.14x-0.77x eager on benchmarks/models.py's suite).
            return gm.forward
        return compiled
    except _DYNAMO_CONTROL_FLOW:
        raise  # Dynamo's own signals: it restarts its analysis or breaks the graph there
    except Exception as error:  # tracing or a decomposition failed: never break the program
        from .driver.compiler import fall_back_before_compile

        return fall_back_before_compile(gm, error)
