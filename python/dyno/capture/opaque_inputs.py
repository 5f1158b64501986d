"""Graph inputs that are opaque objects (not tensors or sizes) that no op uses.

A training graph of a DTensor model takes script objects (one per sharded parameter) as
inputs, uses none of them, and returns one for the backward graph, untouched. Dyno
compiles the graph without them and puts the returned ones back among the outputs at
run time.
"""
import copy
from typing import Callable, List, Sequence, Tuple

import torch


def _opaque(value) -> bool:
    return value is not None and not isinstance(value, (torch.Tensor, torch.SymInt, int,
                                                         torch.SymFloat, float, torch.SymBool,
                                                         bool))


def without_passed_through_objects(gm: torch.fx.GraphModule, example_inputs: Sequence
                                   ) -> Tuple[torch.fx.GraphModule, List, Callable]:
    """(the graph without its opaque inputs that no op uses (its outputs may), its example
    inputs, and `wrap(call)` that runs `call` on the rest and puts the returned objects
    back). The graph is returned as it is when it has no such input."""
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    output = next(node for node in gm.graph.nodes if node.op == "output")
    passed = [i for i, node in enumerate(placeholders)
              if _opaque(node.meta.get("val", example_inputs[i]))
              and set(node.users) <= {output}]
    values = output.args[0]
    if not passed or not isinstance(values, (list, tuple)):
        return gm, list(example_inputs), lambda call: call
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    new_placeholders = [node for node in copied.graph.nodes if node.op == "placeholder"]
    new_output = next(node for node in copied.graph.nodes if node.op == "output")
    # (output position, input position) of each object passed through.
    slots = [(position, new_placeholders.index(value))
             for position, value in enumerate(new_output.args[0])
             if isinstance(value, torch.fx.Node) and value in
             [new_placeholders[i] for i in passed]]
    new_output.args = ([value for position, value in enumerate(new_output.args[0])
                        if position not in {p for p, _ in slots}],)
    for i in passed:
        copied.graph.erase_node(new_placeholders[i])
    copied.recompile()
    kept = [i for i in range(len(placeholders)) if i not in passed]

    def wrap(call):
        def run(args):
            outputs = list(call([args[i] for i in kept]))
            for position, index in slots:
                outputs.insert(position, args[index])
            return outputs
        return run

    return copied, [example_inputs[i] for i in kept], wrap
