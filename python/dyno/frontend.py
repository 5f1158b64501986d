"""ATen FX graphs (from AOTAutograd) -> linalg-on-tensors MLIR text, through torch-mlir.

torch-mlir's context and Dyno's meet only through this text (printed in generic form, so
that our MLIR parses what theirs prints).
"""
import copy

import torch

from .errors import DynoCompileError


def check_graph_inputs(example_inputs, device_type: str) -> None:
    for i, value in enumerate(example_inputs):
        if isinstance(value, torch.SymInt) or (
            isinstance(value, torch.Tensor)
            and any(isinstance(s, torch.SymInt) for s in value.shape)
        ):
            raise DynoCompileError(
                "frontend", f"input {i} has a symbolic shape; dynamic shapes are not supported yet"
            )
        if isinstance(value, torch.Tensor) and value.device.type != device_type:
            raise DynoCompileError(
                "frontend",
                f"input {i} is on {value.device}, but the target compiles for {device_type}",
            )


def import_to_linalg(gm: torch.fx.GraphModule) -> str:
    from torch_mlir.fx import stateless_fx_import

    try:
        module = stateless_fx_import(gm, output_type="linalg-on-tensors", model_name="main")
    except Exception as error:  # torch-mlir reports unsupported ops this way
        lines = [line for line in str(error).splitlines() if line.strip()]
        reason = " ".join(lines[:6])
        raise DynoCompileError("torch-mlir import", reason) from None
    return module.operation.get_asm(print_generic_op_form=True)


def graph_outputs(gm: torch.fx.GraphModule):
    """The FX outputs' example values (FakeTensors), in order; None where the graph
    returns None (a backward graph's gradient for an input that needs none)."""
    output = next(node for node in gm.graph.nodes if node.op == "output")
    values = output.args[0]
    if not isinstance(values, (list, tuple)):
        values = (values,)
    result = []
    for node in values:
        if node is None:
            result.append(None)
            continue
        value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        if not isinstance(value, torch.Tensor):
            raise DynoCompileError("frontend", f"graph output {node!r} is not a tensor")
        result.append(value)
    return result


def without_none_outputs(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of `gm` that returns only its tensor outputs (torch-mlir imports no None)."""
    stripped = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    output = next(node for node in stripped.graph.nodes if node.op == "output")
    values = output.args[0]
    if isinstance(values, (list, tuple)):
        output.args = (type(values)(v for v in values if v is not None),)
    stripped.recompile()
    return stripped
