"""Per-op fallback: compile the parts of a graph Dyno supports, run the other ops eagerly.

When a whole graph does not compile, each ATen op is checked on its own (imported by
torch-mlir and taken by dyno-opt, once per op, dtypes and ranks), PyTorch's FX
partitioner groups the supported ops into maximal subgraphs, and each subgraph is compiled
as a graph of its own. Unsupported ops stay in the outer graph and run eagerly.
"""
import copy
import operator
import pathlib
import tempfile
from typing import Callable, Dict, List, Tuple

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from ..lowering import frontend
from ..errors import DynoCompileError
from ..ops.eager import ROUTED_TO_EAGER

_support_cache: Dict[Tuple, bool] = {}


def _signature(node: torch.fx.Node) -> Tuple:
    def describe(value):
        if isinstance(value, torch.fx.Node):
            meta = value.meta.get("val")
            if isinstance(meta, torch.Tensor):
                return ("tensor", meta.dtype, meta.dim())
            return ("value", type(meta).__name__)
        if isinstance(value, (list, tuple)):
            return tuple(describe(v) for v in value)
        return repr(value)

    return (node.target, describe(node.args), describe(tuple(sorted(node.kwargs.items()))))


def _single_op_graph(node: torch.fx.Node, inputs: List[torch.fx.Node] = None
                     ) -> torch.fx.GraphModule:
    """A graph of `node` alone; `inputs`, when given, receives the nodes its placeholders
    stand for, in order."""
    graph = torch.fx.Graph()
    placeholders: Dict[torch.fx.Node, torch.fx.Node] = {}

    def placeholder_for(value: torch.fx.Node) -> torch.fx.Node:
        if value not in placeholders:
            new = graph.placeholder(f"in{len(placeholders)}")
            new.meta = dict(value.meta)
            placeholders[value] = new
            if inputs is not None:
                inputs.append(value)
        return placeholders[value]

    copy = graph.node_copy(node, placeholder_for)
    copy.meta = dict(node.meta)
    value = node.meta.get("val")
    if isinstance(value, (tuple, list)):
        outputs = []
        for index, item in enumerate(value):
            if isinstance(item, torch.Tensor):
                get = graph.call_function(operator.getitem, (copy, index))
                get.meta = {"val": item}
                outputs.append(get)
        graph.output(tuple(outputs))
    else:
        graph.output((copy,))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def op_is_supported(node: torch.fx.Node, target) -> bool:
    """Whether torch-mlir imports this op to linalg, Dyno's MLIR reads the result and
    `target` (a targets.target.Target) lowers it (its check_op)."""
    if node.op != "call_function" or node.target is operator.getitem:
        return node.op == "call_function"
    if node.target in ROUTED_TO_EAGER:
        return False
    if not isinstance(node.meta.get("val"), (torch.Tensor, tuple, list)):
        return False
    key = (target.name,) + _signature(node)
    if key not in _support_cache:
        try:
            with tempfile.TemporaryDirectory(prefix="dyno-op-") as directory:
                frontend.import_to_linalg(_single_op_graph(node), pathlib.Path(directory))
                target.check_op(pathlib.Path(directory))
            _support_cache[key] = True
        except Exception:  # unsupported by torch-mlir, or a dialect Dyno does not have
            _support_cache[key] = False
    return _support_cache[key]


class _DynoSupport(OperatorSupportBase):
    def __init__(self, target):
        super().__init__()
        self.target = target

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return op_is_supported(node, self.target)


class _CompiledPartition(torch.nn.Module):
    """Stands in for a fused submodule: runs the compiled call, returns the same shape."""

    def __init__(self, call: Callable, returns_tuple: bool):
        super().__init__()
        self.call = call
        self.returns_tuple = returns_tuple

    def forward(self, *args):
        results = self.call(list(args))
        return tuple(results) if self.returns_tuple else results[0]


def _compile_ops_one_by_one(submodule: torch.fx.GraphModule, compile_subgraph: Callable) -> int:
    """A partition whose ops each compile alone but not together (the Triton target
    cannot always place a concatenation between kernels): each single-output op is
    compiled as a graph of its own, the others stay eager. Returns how many compiled."""
    compiled = 0
    for node in list(submodule.graph.nodes):
        if node.op != "call_function" or node.target is operator.getitem \
                or not isinstance(node.meta.get("val"), torch.Tensor):
            continue
        inputs: List[torch.fx.Node] = []
        single = _single_op_graph(node, inputs)
        try:
            call = compile_subgraph(single)
        except DynoCompileError:
            continue
        with submodule.graph.inserting_before(node):
            replacement = submodule.graph.call_function(_CompiledOp(call), tuple(inputs))
        replacement.meta = dict(node.meta)
        node.replace_all_uses_with(replacement)
        submodule.graph.erase_node(node)
        compiled += 1
    submodule.recompile()
    return compiled


class _CompiledOp:
    """One op compiled alone: called with its inputs, returns its one tensor."""

    def __init__(self, call: Callable):
        self.call = call
        self.__name__ = "dyno_compiled_op"

    def __call__(self, *args):
        return self.call(list(args))[0]


def eager_op_names(gm: torch.fx.GraphModule) -> List[str]:
    """The ATen ops a partitioned graph still runs eagerly (also inside partitions that
    were compiled op by op)."""
    names = set()
    for module in [gm] + [m for m in gm.modules() if isinstance(m, torch.fx.GraphModule)]:
        names |= {str(node.target) for node in module.graph.nodes
                  if node.op == "call_function" and node.target is not operator.getitem
                  and not isinstance(node.target, _CompiledOp)}
    return sorted(names)


def compile_partitions(gm: torch.fx.GraphModule, compile_subgraph: Callable, target):
    """Returns (graph module, number of partitions compiled, wholly or op by op), the ops
    checked for `target` (a targets.target.Target).

    `compile_subgraph(submodule)` returns a boxed callable or raises DynoCompileError.
    """
    # The partitioner rewrites the graph module it is given; the caller's `gm` stays the
    # whole eager graph, which a runtime failure of a compiled part falls back to. (The
    # graph is copied, not the module: deep-copying a module's fake-tensor metadata or
    # tensor constants fails.)
    gm = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    partitioner = CapabilityBasedPartitioner(gm, _DynoSupport(target),
                                             allows_single_node_partition=True)
    partitions = partitioner.propose_partitions()
    if not partitions:
        raise DynoCompileError("partition", "no op of the graph is supported")
    fused = partitioner.fuse_partitions(partitions)
    compiled = 0
    for node in fused.graph.nodes:
        if node.op != "call_module":
            continue
        submodule = getattr(fused, node.target)
        output = next(n for n in submodule.graph.nodes if n.op == "output")
        returns_tuple = isinstance(output.args[0], (tuple, list))
        try:
            call = compile_subgraph(submodule)
        except DynoCompileError:
            # Op by op, then; what does not compile alone stays eager.
            if _compile_ops_one_by_one(submodule, compile_subgraph):
                compiled += 1
            continue
        setattr(fused, node.target, _CompiledPartition(call, returns_tuple))
        compiled += 1
    fused.recompile()
    return fused, compiled
