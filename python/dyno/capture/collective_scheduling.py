"""Overlaps torch.distributed's collectives with the graph's other work.

A traced graph waits for each functional collective right after starting it
(`wait_tensor(all_reduce(x))`): the process sits idle while the collective communicates.
Dyno calls a collective where the graph issues it and waits where the graph waits
(dyno.library_call), so the graph's order is the schedule. This FX rewrite, run before
import, moves each collective's start up to just after the values it sends are computed,
and each wait down to just before the first op that reads the result; the work in
between runs during the communication. Collectives keep the order in which they start
(every process issues them in the same order); an op with side effects is never crossed.
"""
import copy

import torch

from ..ops.library_calls import COLLECTIVE_NAMESPACE

_WAIT = "wait_tensor"


def _is_collective(node) -> bool:
    return (node.op == "call_function"
            and getattr(node.target, "namespace", None) == COLLECTIVE_NAMESPACE)


def _is_wait(node) -> bool:
    return _is_collective(node) and node.target._opname == _WAIT


def _has_effects(node) -> bool:
    """Ops nothing moves across: the output, and ops with effects (input mutations, RNG
    state, checks that raise) keep their place relative to the collectives."""
    if node.op != "call_function":
        return node.op == "output"
    schema = getattr(node.target, "_schema", None)
    return bool(schema is not None and (schema.is_mutable or any(
        argument.alias_info is not None and argument.alias_info.is_write
        for argument in schema.arguments)))


def with_collectives_overlapped(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Starts as early and waits as late as their data and the barriers allow. Works on a
    copy; a graph without collectives is returned as it is."""
    if not any(_is_collective(node) for node in gm.graph.nodes):
        return gm
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    graph = copied.graph
    nodes = list(graph.nodes)
    for start in [n for n in nodes if _is_collective(n) and not _is_wait(n)]:
        order = list(graph.nodes)
        position = order.index(start)
        inputs = set(start.all_input_nodes)
        earliest = position
        while earliest > 0:
            before = order[earliest - 1]
            if (before in inputs or before.op == "placeholder" or _has_effects(before)
                    or (_is_collective(before) and not _is_wait(before))):
                break  # a value it sends, an effect, or an earlier collective's start
            earliest -= 1
        if earliest < position:
            order[earliest].prepend(start)
    for wait in [n for n in nodes if _is_wait(n)]:
        order = list(graph.nodes)
        position = order.index(wait)
        latest = position
        while latest + 1 < len(order):
            after = order[latest + 1]
            if after in wait.users or _has_effects(after):
                break
            latest += 1
        if latest > position:
            order[latest].append(wait)
    graph.lint()
    copied.recompile()
    return copied
