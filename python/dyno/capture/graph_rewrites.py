"""The one way the capture passes change an ATen graph: a copy with some nodes rewritten.

Each pass (causal_masks, attention_scales, grouped_query_attention) first finds what to
change by node name in the graph it was given, then `rewritten_copy` applies the changes
to a deep copy (the caller's graph is never touched: Dynamo may still hold it), removes
what nothing reads any more, and counts them in dyno.stats() under the pass's name.
"""
import copy
from typing import Callable, Dict

import torch

from .. import counters


def rewritten_copy(gm: torch.fx.GraphModule,
                   rewrites: Dict[str, Callable[[torch.fx.Node], None]],
                   counter: str) -> torch.fx.GraphModule:
    """`gm` itself when `rewrites` is empty; else a copy in which each node named in
    `rewrites` was passed to its rewrite (which changes it in place), dead code removed,
    recompiled, and `counter` bumped by the number of rewrites."""
    if not rewrites:
        return gm
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    by_name = {node.name: node for node in copied.graph.nodes}
    for name, rewrite in rewrites.items():
        rewrite(by_name[name])
    copied.graph.eliminate_dead_code()
    copied.recompile()
    counters.bump(counter, len(rewrites))  # (dyno.stats()[counter])
    return copied
