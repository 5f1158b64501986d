"""Grouped GEMMs: the experts of a mixture-of-experts layer.

transformers' MoE layers (Mixtral, Qwen-MoE, ...) sort the routed tokens by expert and
multiply each expert's rows by that expert's weight in one call: `aten._grouped_mm(input
[S, K], weight [E, K, N], offs [E])` in bf16, or, for other dtypes, transformers' own
custom op `transformers::grouped_mm_fallback(input, weight, offs)` (a Python loop of
`torch.mm`s, opaque to torch.compile). `offs` holds each expert's end row (the running
count of its tokens), so the product is a library GEMM per expert: PyTorch's grouped
GEMM, a `dyno.library_call` on both targets (CUTLASS's grouped kernel on Hopper GPUs in
bf16, a loop of GEMMs elsewhere). The aten op stays one (library_calls.LIBRARY_OPS);
transformers' loop becomes `dyno::grouped_mm`, which calls the aten op when the program
runs (library_calls.GROUPED_MM_OPS): PyTorch's meta function of `_grouped_mm` accepts
bf16 only, where its CPU kernel takes float32 too, so the aten op itself cannot be traced
in float32.
"""
import functools

import torch

from .decompositions import decomposes_when_defined

aten = torch.ops.aten


@functools.lru_cache(maxsize=None)
def grouped_mm_op():
    """dyno::grouped_mm(input [S, K], weight [E, K, N], offs [E] int32) -> [S, N]:
    aten._grouped_mm, with shapes traced for every dtype."""
    @torch.library.custom_op("dyno::grouped_mm", mutates_args=())
    def grouped_mm(input: torch.Tensor, weight: torch.Tensor,
                   offs: torch.Tensor) -> torch.Tensor:
        return aten._grouped_mm.default(input, weight, offs)

    @grouped_mm.register_fake
    def _(input, weight, offs):
        return input.new_empty((input.shape[0], weight.shape[2]))

    return torch.ops.dyno.grouped_mm.default


@decomposes_when_defined("transformers::grouped_mm_fallback")
def transformers_grouped_mm(input, weight, offs):
    """transformers' per-expert loop (transformers/integrations/moe.py): rows
    [offs[e-1], offs[e]) of `input` times weight[e], as the aten op computes them."""
    if input.dim() != 2 or weight.dim() != 3 or offs.dim() != 1 or input.dtype != weight.dtype:
        return NotImplemented
    return grouped_mm_op()(input, weight, offs.to(torch.int32))
