"""Matmuls that add a scaled accumulator (baddbmm, addbmm, addmm) in bf16/f16: eager's
kernels accumulate the products in float32 and add `beta * input` before one rounding
to the low precision. Decomposed as `bmm + add`, the product was rounded to bf16 first
and the sum again (baddbmm off by 0.06 in the OpInfo sweep), or torch-mlir failed to
lower the op (addbmm). Here they compute in float32 from the widened operands (an f32
product the program reads, which stays f32: dyno-widen-low-precision-floats) and round
once."""
import torch

aten = torch.ops.aten
_LOW_PRECISION = (torch.bfloat16, torch.float16)


def _rounded_once(product_of, default, library_form=None):
    def decomposition(input, first, second, *, beta=1, alpha=1):
        if input.dtype not in _LOW_PRECISION or (
                library_form and library_form(input, beta, alpha)):
            return default(input, first, second, beta=beta, alpha=alpha) if default \
                else NotImplemented
        product = product_of(first.float(), second.float())
        accumulator = input.float()
        if beta == 0:  # eager ignores input then, NaNs included
            result = product * alpha
        else:
            result = accumulator * beta + product * alpha
        return result.to(input.dtype)
    return decomposition


def table(previous: dict) -> dict:
    """The decompositions, each falling back to `previous`'s for other dtypes."""
    # A linear layer's addmm (a row bias, no scaling) stays: the library call in the low
    # precision takes the bias as its accumulator and rounds once (dyno-form-kernels).
    linear = lambda input, beta, alpha: input.dim() == 1 and beta == 1 and alpha == 1  # noqa: E731
    return {
        aten.baddbmm.default: _rounded_once(torch.bmm, previous.get(aten.baddbmm.default)),
        aten.addbmm.default: _rounded_once(lambda a, b: torch.bmm(a, b).sum(0),
                                           previous.get(aten.addbmm.default)),
        aten.addmm.default: _rounded_once(torch.mm, previous.get(aten.addmm.default), linear),
    }
