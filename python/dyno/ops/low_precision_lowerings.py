"""dyno::op_round: the rounding to bf16/f16 that ends an op eager computes in float32
(low_precision_decompositions: a product by a Python float, leaky_relu's slope, a scaled
matmul's accumulation), as opposed to a cast the program writes (`.to(torch.bfloat16)`).

Both round where eager rounds. The difference is what fusion may do: the rounding of an
op's result is tagged `dyno.op_rounding`, as dyno-widen-low-precision-floats tags the
roundings of the ops it widens, and dyno-fold-fused-roundings drops it where a consumer
in the same fused body widens the value again (it never reaches memory: Inductor's
"loads widen, stores narrow"); an explicit cast keeps its rounding. Decomposed as
`(x.float() * s).to(dtype)`, GPT-2's bf16 GELU (`0.5 * x * (1 + tanh(c * (x + 0.044715
* x**3)))`) kept three roundings inside its fused kernel, emulated in integer arithmetic
(dyno-expand-bf16-conversions): on an H100 the kernel took 2.3x Inductor's.
"""
import functools

import torch

from .aten_lowerings import Unsupported, lowering

_LOW_PRECISION = {"bf16", "f16"}


@functools.lru_cache(maxsize=None)
def op_round():
    """torch.ops.dyno.op_round(x, dtype): `x.to(dtype)`, marked as an op's rounding."""
    @torch.library.custom_op("dyno::op_round", mutates_args=())
    def op_round(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        return x.to(dtype)

    @op_round.register_fake
    def _(x, dtype):
        return torch.empty_like(x, dtype=dtype, memory_format=torch.contiguous_format)

    return torch.ops.dyno.op_round.default


@lowering("torch.dyno.op_round")
def lower_op_round(island, operands, results):
    """An elementwise `arith.truncf {dyno.op_rounding}` of the f32 tensor."""
    x, (result,) = operands[0], results
    if not x.is_tensor or x.tensor.element != "f32" or result.element not in _LOW_PRECISION:
        raise Unsupported()
    from torch_mlir import ir

    b = island.builder
    source = island.to_builtin(x)
    value = island.elementwise(
        [(source, x.tensor)], result, result.element,
        lambda args, index: b.convert(args[0], result.element,
                                      **{"dyno.op_rounding": ir.UnitAttr.get(b.context)}))
    return [(value, result.builtin())]
