"""Processes that run a graph's collectives together compile it alike, or all run it
eagerly.

Under torch.distributed every process compiles its own copy of a graph. Dyno schedules
a compiled graph's collectives around its independent work (they may start in another
order than eager's), so if one process compiled a graph and another ran it eagerly (a
compile failure on one machine only, a library being rewritten while it loaded), the
processes would issue different collectives at the same point: gloo then aborts the
process ("Received data size doesn't match expected size"), or worse writes past a
buffer. Seen in a loop of e2e/distributed_runs.py while Dyno's libraries were being
rebuilt (2026-12-03): one rank's `coalesced_collectives` compiled, the other's fell
back, and the first aborted.

So a graph that communicates ends its compile with an agreement: each process's
outcome (2 compiled whole, 1 partly compiled, 0 eager) is all-reduced over the graph's
process groups, in the order the graph first uses them (the same order on every
process: the graph is the same program), and unless every process reached the same
outcome, every one runs the graph eagerly.
"""
from typing import List

import torch

from ..ops.library_calls import COLLECTIVE_NAMESPACE

WHOLE, PARTIAL, EAGER = 2, 1, 0


def communicates(gm: torch.fx.GraphModule) -> bool:
    return any(getattr(node.target, "namespace", None) == COLLECTIVE_NAMESPACE
               for node in gm.graph.nodes if node.op == "call_function")


def group_names(gm: torch.fx.GraphModule) -> List[str]:
    """The process groups of the graph's collectives (their `group_name` arguments), in
    the order the graph first uses them."""
    names = []
    for node in gm.graph.nodes:
        if node.op != "call_function" or \
                getattr(node.target, "namespace", None) != COLLECTIVE_NAMESPACE:
            continue
        schema = getattr(node.target, "_schema", None)
        for position, argument in enumerate(schema.arguments if schema else ()):
            if argument.name != "group_name":
                continue
            value = node.kwargs.get("group_name",
                                    node.args[position] if position < len(node.args) else None)
            if isinstance(value, str) and value not in names:
                names.append(value)
    return names


def _device_for(group) -> torch.device:
    """Where a tensor for `group`'s collectives lives (gloo: CPU; NCCL alone: this
    process's GPU)."""
    backend = str(torch.distributed.get_backend(group)).lower()
    if "gloo" in backend or "cuda" not in backend and "nccl" not in backend:
        return torch.device("cpu")
    return torch.device("cuda", torch.cuda.current_device())


def agree(gm: torch.fx.GraphModule, outcome: int) -> bool:
    """Whether every process that runs `gm`'s collectives reached `outcome` (True also
    where there is no one to agree with: torch.distributed not initialized)."""
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group

    from ..targets.host_runtime import outside_fake_mode

    if not (dist.is_available() and dist.is_initialized()):
        return True
    lowest, highest = outcome, outcome
    with outside_fake_mode(), torch.no_grad():
        for name in group_names(gm):
            group = _resolve_process_group(name)
            # [min, -max] in one all-reduce.
            codes = torch.tensor([lowest, -highest], dtype=torch.int64,
                                 device=_device_for(group))
            dist.all_reduce(codes, op=dist.ReduceOp.MIN, group=group)
            lowest, highest = int(codes[0]), -int(codes[1])
    return lowest == highest == outcome
