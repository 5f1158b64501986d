"""The Triton target's library routing: the ops PyTorch's GPU kernels run faster than
Dyno's kernels reach torch-mlir as ops it does not lower, and become library calls
(library_calls.SORT_OPS and SCATTER_OPS). The CPU target routes none of them."""
import copy
import functools

import torch

from ...lowering.frontend import LIBRARY_SORT_MARK


# Sorts of lines longer than this are library calls on the Triton target (see
# library_calls.SORT_OPS).
LIBRARY_SORT_LENGTH = 256

# Scatter-adds of at least this many updates are library calls on the Triton target (see
# library_calls.SCATTER_OPS): all of them. On an H200, PyTorch's kernel measured 1.1x
# eager at 16K updates where Dyno's kernels took 0.13x-0.25x, 1.0x against 0.29x at 16M
# (benchmarks/results/gpu-scatter-add-2026-11-26-h200.md).
LIBRARY_SCATTER_UPDATES = 1


def _sort_arguments(node) -> dict:
    names = ("self", "dim", "descending") if node.target is torch.ops.aten.sort.default \
        else ("self",)
    arguments = dict(zip(names, node.args))
    arguments.update(node.kwargs)
    return arguments


def _is_library_sort(node) -> bool:
    """A sort the GPU's library sort takes: of lines longer than LIBRARY_SORT_LENGTH, or
    of 64-bit elements (Dyno's network packs a value of at most 32 bits with its position
    into one 64-bit key; mixture-of-experts layers sort int64 expert ids)."""
    if node.target not in (torch.ops.aten.sort.default, torch.ops.aten.sort.stable):
        return False
    arguments = _sort_arguments(node)
    value = arguments["self"].meta.get("val")
    if value is None or value.dim() == 0:
        return False
    if value.dtype.itemsize > 4:
        return True
    length = value.shape[arguments.get("dim", -1) % value.dim()]
    return isinstance(length, int) and length > LIBRARY_SORT_LENGTH


def _is_large_scatter_add(node) -> bool:
    if node.target is not torch.ops.aten.scatter_add.default:
        return False
    index = node.args[2].meta.get("val")
    return index is not None and isinstance(index.numel(), int) \
        and index.numel() >= LIBRARY_SCATTER_UPDATES


def with_triton_library_calls(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Triton target: the ops PyTorch's GPU kernels run faster than Dyno's, marked to
    reach torch-mlir as ops it does not lower (library calls, library_calls.SORT_OPS and
    SCATTER_OPS). Works on a copy, as frontend's rewrites do.
    - A sort whose lines are longer than LIBRARY_SORT_LENGTH, or of 64-bit elements,
      becomes aten.sort.stable marked to stay one. topk is not affected (its k first elements are selections, or
      a sort of short lines).
    - A scatter-add (of static size, LIBRARY_SCATTER_UPDATES updates or more) becomes
      dyno::scatter_add: torch-mlir's lowering stacks every update's coordinates into an
      int64 tensor that Dyno's bounds check and scatter kernel read again."""
    def marked(node):
        return node.op == "call_function" and (_is_library_sort(node)
                                               or _is_large_scatter_add(node))
    if not any(marked(node) for node in gm.graph.nodes):
        return gm
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    for node in copied.graph.nodes:
        if not marked(node):
            continue
        if node.target is torch.ops.aten.scatter_add.default:
            node.target = _scatter_add_op()
            continue
        arguments = _sort_arguments(node)
        node.target = torch.ops.aten.sort.stable
        node.args = (arguments["self"],)
        node.kwargs = {"stable": True, "dim": arguments.get("dim", -1),
                       "descending": arguments.get("descending", False)}
        node.meta[LIBRARY_SORT_MARK] = True
    copied.recompile()
    return copied


@functools.lru_cache(maxsize=None)
def _scatter_add_op():
    """dyno::scatter_add: aten.scatter_add under a name torch-mlir imports as a
    `torch.operator` (library_calls lowers it to a call of aten.scatter_add itself)."""
    @torch.library.custom_op("dyno::scatter_add", mutates_args=())
    def scatter_add(x: torch.Tensor, dim: int, index: torch.Tensor,
                    src: torch.Tensor) -> torch.Tensor:
        return torch.ops.aten.scatter_add.default(x, dim, index, src)

    @scatter_add.register_fake
    def _(x, dim, index, src):
        return torch.ops.aten.scatter_add.default(x, dim, index, src)

    return torch.ops.dyno.scatter_add.default
