"""ATen FX graphs (from AOTAutograd) -> linalg-on-tensors MLIR text, through torch-mlir.

torch-mlir's context and Dyno's meet only through this text (printed in generic form, so
that our MLIR parses what theirs prints): its FX importer runs in process (and Dyno's
lowerings rewrite the module it built, ops/aten_lowerings.py), its lowering to linalg in
a torch-mlir-opt subprocess.
"""
import copy
import functools
import operator
import os
import pathlib
import re
import shlex

import torch

from ..ops.aten_lowerings import lower_unsupported_ops
from ..capture.centred_differences import with_centred_differences
from ..ops.eager import ROUTED_TO_EAGER
from ..capture.collective_scheduling import with_collectives_overlapped
from ..errors import DynoCompileError


def check_graph_ops(gm: torch.fx.GraphModule) -> None:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in ROUTED_TO_EAGER:
            raise DynoCompileError(
                "frontend", f"{node.target} runs eagerly: {ROUTED_TO_EAGER[node.target]}")


def has_symbolic_sizes(example_inputs) -> bool:
    """Whether a graph was traced with symbolic sizes (dynamic shapes)."""
    return any(isinstance(value, torch.SymInt) or (
        isinstance(value, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in value.shape))
        for value in example_inputs)


def check_graph_inputs(example_inputs, device_type: str) -> None:
    """Inputs Dyno compiles: tensors (of static or symbolic sizes) on the target's device
    and integer scalars (a graph's symbolic sizes)."""
    for i, value in enumerate(example_inputs):
        if isinstance(value, (torch.SymFloat, torch.SymBool, float, bool)):
            raise DynoCompileError(
                "frontend", f"input {i} is a {type(value).__name__} scalar; only tensor and "
                "integer inputs are compiled")
        if isinstance(value, torch.Tensor) and value.device.type != device_type:
            raise DynoCompileError(
                "frontend",
                f"input {i} is on {value.device}, but the target compiles for {device_type}",
            )


# torch-mlir's own lowering (what torch_mlir.fx.stateless_fx_import runs in-process for
# output_type="linalg-on-tensors"), spelled as one pipeline for torch-mlir-opt.
TORCH_TO_LINALG = ("builtin.module(func.func(torch-match-quantized-custom-ops), "
                   "torchdynamo-export-to-torch-backend-pipeline{ extra-library=}, "
                   "torch-backend-to-linalg-on-tensors-backend-pipeline{allow-non-finites=true})")


# The node meta key of a sort marked to stay a stable sort: a library call (the Triton
# target's library routing, targets/triton/library_routing.py).
LIBRARY_SORT_MARK = "dyno_library_sort"


def _with_stable_sorts_as_sorts(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """torch-mlir lowers aten.sort.default (to tm_tensor.sort, Dyno's dyno.sort) but not
    aten.sort.stable. dyno.sort is stable, so a stable sort may be imported as a plain
    one (but those marked as library calls). Works on a copy: the graph that runs
    eagerly on a fallback keeps its stable sorts (eager's plain sort is not stable)."""
    def converted(node):
        return (node.op == "call_function" and node.target is torch.ops.aten.sort.stable
                and not node.meta.get(LIBRARY_SORT_MARK))
    if not any(converted(node) for node in gm.graph.nodes):
        return gm
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    for node in copied.graph.nodes:
        if converted(node):
            arguments = dict(zip(("self",), node.args))
            arguments.update(node.kwargs)
            node.target = torch.ops.aten.sort.default
            node.args = (arguments["self"], arguments.get("dim", -1),
                         arguments.get("descending", False))
            node.kwargs = {}
    copied.recompile()
    return copied


def _has_no_elements(node) -> bool:
    """A pure op whose result has static sizes, one of them 0."""
    value = node.meta.get("val")
    return (node.op == "call_function" and not node.is_impure() and
            isinstance(value, torch.Tensor) and
            all(isinstance(size, int) for size in value.shape) and value.numel() == 0)


def _with_empty_values_as_empty_tensors(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Every op result that has no elements (static sizes, one of them 0) becomes
    `aten.empty` of its shape and dtype: there is nothing to compute, and torch-mlir's
    lowering of some ops on them crashes (a view of a 0 x 4 x 16 tensor divided by zero,
    SIGFPE, in nn.functional.unfold's OpInfo sample with an empty batch). Works on a copy;
    the wrapper still gives outputs eager's strides."""
    if not any(_has_no_elements(node) for node in gm.graph.nodes):
        return gm
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    for node in copied.graph.nodes:
        if not _has_no_elements(node):
            continue
        value = node.meta["val"]
        node.target = torch.ops.aten.empty.memory_format
        node.args = (list(value.shape),)
        node.kwargs = {"dtype": value.dtype, "device": value.device}
    copied.graph.eliminate_dead_code()
    copied.recompile()
    return copied


# Ops AOTAutograd threads an effect token through (with_effects) that Dyno calls in
# program order as library calls (aten_lowerings keeps such calls: they are not pure).
_EFFECTFUL_CALLS = (torch.ops.aten._linalg_check_errors.default,)


def _with_effects_as_calls(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`with_effects(token, op, *args)` -> `op(*args)`, the token passing through: the
    check linalg.cholesky/inv/solve make on LAPACK's info (raising eager's LinAlgError)
    stays in the compiled graph; the importer cannot import with_effects, and folding
    its empty token (_with_empty_values_as_empty_tensors) would drop the check. Works on
    a copy."""
    def effectful(node):
        return (node.op == "call_function" and
                node.target is torch.ops.higher_order.with_effects and
                node.args[1] in _EFFECTFUL_CALLS)
    if not any(effectful(node) for node in gm.graph.nodes):
        return gm
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    graph = copied.graph
    for node in [n for n in graph.nodes if effectful(n)]:
        token, op, *args = node.args
        with graph.inserting_before(node):
            call = graph.call_function(op, tuple(args), dict(node.kwargs))
        call.meta["val"] = None
        for user in list(node.users):
            if user.target is not operator.getitem or user.args[1] != 0:
                raise DynoCompileError("frontend", f"{op} has results, which with_effects "
                                       "returns; Dyno passes only its token through")
            user.replace_all_uses_with(token)
            graph.erase_node(user)
        graph.erase_node(node)
    copied.recompile()
    return copied


def import_to_torch(gm: torch.fx.GraphModule) -> str:
    """FX -> torch dialect, in process (the importer only builds IR)."""
    from torch_mlir.fx import stateless_fx_import

    gm = _with_effects_as_calls(gm)
    gm = _with_empty_values_as_empty_tensors(_with_stable_sorts_as_sorts(gm))
    gm = with_centred_differences(gm)
    gm = with_collectives_overlapped(gm)
    try:
        module = stateless_fx_import(gm, output_type="raw", model_name="main")
    except Exception as error:
        lines = [line for line in str(error).splitlines() if line.strip()]
        raise DynoCompileError("torch-mlir import", " ".join(lines[:6])) from None
    lower_unsupported_ops(module)
    return module.operation.get_asm(print_generic_op_form=True)


def torch_mlir_opt_path() -> str:
    import torch_mlir

    return os.path.join(list(torch_mlir.__path__)[0], "_mlir_libs", "torch-mlir-opt")


@functools.lru_cache(maxsize=None)
def torch_to_linalg_pipeline() -> str:
    """TORCH_TO_LINALG expanded (torch-mlir-opt --dump-pass-pipeline) without its last
    pass, which verifies the linalg-on-tensors backend contract: that contract has no room
    for dyno.library_call (aten_lowerings). dyno-import-torch-mlir-output checks what
    the verifier did that matters here: that no torch op is left."""
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as empty:
        empty.write("module {}\n")
        empty.flush()
        dump = subprocess.run([torch_mlir_opt_path(), f"--pass-pipeline={TORCH_TO_LINALG}",
                               "--dump-pass-pipeline", empty.name, "-o", os.devnull],
                              capture_output=True, text=True, check=True)
    text = dump.stdout + dump.stderr
    pipeline = re.sub(r"\s*\n\s*", "", text[text.index("builtin.module("):]).strip()
    verifier = ",torch-verify-linalg-on-tensors-backend-contract"
    if verifier not in pipeline:
        raise DynoCompileError("torch-mlir lowering", "unexpected pipeline: " + pipeline[:200])
    return pipeline.replace(verifier, "")


def lower_to_linalg(torch_path: pathlib.Path, linalg_path: pathlib.Path) -> str:
    """torch dialect -> linalg-on-tensors with torch-mlir's pipeline, in a torch-mlir-opt
    subprocess: a crash in one of its lowerings must not take the program down (seen:
    a division by zero lowering nn.functional.unfold). Printed in generic form, so that
    Dyno's MLIR parses what torch-mlir's prints; dyno-opt's first pass on it
    (graph_lowering.IMPORT_PASS) takes its TMTensor scans, scatters and sorts into Dyno's
    ops and names any torch op left. Returns the text (for the debug dump)."""
    from .mlir_tools import run_tool

    command = [torch_mlir_opt_path(), "--allow-unregistered-dialect",
               f"--pass-pipeline={torch_to_linalg_pipeline()}", str(torch_path),
               "-o", str(linalg_path), "--mlir-print-op-generic"]
    reproducer = " ".join(shlex.quote(part) for part in command[:4])
    return run_tool("torch-mlir lowering", command, linalg_path, reproducer)


def import_to_linalg(gm: torch.fx.GraphModule, directory: pathlib.Path) -> str:
    """FX graph -> linalg-on-tensors text; writes 01-torch.mlir and 02-linalg.mlir."""
    torch_path = directory / "01-torch.mlir"
    torch_path.write_text(import_to_torch(gm))
    return lower_to_linalg(torch_path, directory / "02-linalg.mlir")


class SizeOutput:
    """A graph output that is a size (a SymInt AOTAutograd saves for the backward pass),
    computed by the wrapper as a Python expression of its arguments `arg0, arg1, ...`."""

    def __init__(self, expression: str):
        self.expression = expression


_SIZE_OPERATORS = {operator.add: "+", operator.sub: "-", operator.mul: "*",
                   operator.floordiv: "//", operator.mod: "%"}


def _size_expression(node, placeholders) -> str:
    if isinstance(node, int):
        return str(node)
    if not isinstance(node, torch.fx.Node):
        raise DynoCompileError("frontend", f"graph output {node!r} is not a size expression")
    if node.op == "placeholder":
        return f"arg{placeholders.index(node)}"
    if node.op == "call_function" and node.target is torch.ops.aten.sym_size.int:
        tensor, dim = node.args
        return f"{_size_expression(tensor, placeholders)}.shape[{dim}]"
    if node.op == "call_function" and node.target in _SIZE_OPERATORS:
        lhs, rhs = (_size_expression(arg, placeholders) for arg in node.args)
        return f"({lhs} {_SIZE_OPERATORS[node.target]} {rhs})"
    raise DynoCompileError("frontend", f"graph output {node} is a size computed by "
                           f"{node.target}, which Dyno does not compute on the host")


def graph_outputs(gm: torch.fx.GraphModule):
    """The FX outputs' example values (FakeTensors), in order; None where the graph
    returns None (a backward graph's gradient for an input that needs none), and a
    SizeOutput where it returns an integer (a symbolic size)."""
    output = next(node for node in gm.graph.nodes if node.op == "output")
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    values = output.args[0]
    if not isinstance(values, (list, tuple)):
        values = (values,)
    result = []
    for node in values:
        if node is None:
            result.append(None)
            continue
        value = node.meta.get("val") if isinstance(node, torch.fx.Node) else node
        if isinstance(value, (torch.SymInt, int)):
            result.append(SizeOutput(_size_expression(node, placeholders)))
            continue
        if not isinstance(value, torch.Tensor):
            raise DynoCompileError("frontend", f"graph output {node!r} is not a tensor")
        result.append(value)
    return result


def is_tensor_output(node) -> bool:
    return isinstance(node, torch.fx.Node) and isinstance(node.meta.get("val"), torch.Tensor)


def without_none_outputs(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of `gm` that returns only its tensor outputs (torch-mlir imports no None;
    sizes are computed by the wrapper); `gm` itself when it returns only tensors (copying
    and recompiling a 12-layer GPT-2's graph took 0.5 s)."""
    values = next(node for node in gm.graph.nodes if node.op == "output").args[0]
    if isinstance(values, (list, tuple)) and all(is_tensor_output(v) for v in values):
        return gm
    stripped = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    output = next(node for node in stripped.graph.nodes if node.op == "output")
    values = output.args[0]
    if isinstance(values, (list, tuple)):
        output.args = (type(values)(v for v in values if is_tensor_output(v)),)
    stripped.graph.eliminate_dead_code()
    stripped.recompile()
    return stripped
