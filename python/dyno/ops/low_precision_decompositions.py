"""bf16/f16 ops whose eager kernels compute in float32 in a way torch-mlir's lowering
(which works in the tensor's own type) does not, computed in float32 and rounded once:

* Matmuls that add a scaled accumulator (baddbmm, addbmm, addmm): eager's kernels
  accumulate the products in float32 and add `beta * input` before one rounding.
  Decomposed as `bmm + add`, the product was rounded to bf16 first and the sum again
  (baddbmm off by 0.06 in the OpInfo sweep), or torch-mlir failed to lower the op
  (addbmm). Here they compute in float32 from the widened operands (an f32 product the
  program reads, which stays f32: dyno-widen-low-precision-floats).
* Multiplication and division by a Python float (or a 0-dim float32 tensor), and the
  float parameters of leaky_relu and elu: ATen's kernels keep them in float32 (opmath);
  torch-mlir rounded them to bf16 first (`x * 0.1` used 0.10009765625 and differed from
  eager in 401 of 1999 elements). `s / x` is `x.reciprocal() * s` in eager (the
  reciprocal rounded first). Addition and subtraction do round the scalar in eager, as
  torch-mlir does, and stay.
* Vector norms: torch-mlir computed a bf16 p-norm in bf16, rounding the sum of |x|^p and
  even the exponent 1/p (1/3 as 0.333984: a 3-norm 0.6% off).

Each ends in `_rounded`: eager's rounding of the op's result, which fusion may keep in
float32 where it never reaches memory, as it does every op's (low_precision_lowerings).
"""
import torch

from .decompositions import decomposes, underlying
from .low_precision_lowerings import op_round

aten = torch.ops.aten
_LOW_PRECISION = (torch.bfloat16, torch.float16)


def _rounded(value, dtype):
    """The rounding of an op's float32 result to `dtype`, as eager's kernel rounds it."""
    return op_round()(value, dtype)


def _rounded_once(op, product_of, library_form=None):
    """`op` (beta * input + alpha * product) computed in float32 and rounded once; other
    dtypes, and `library_form`s, as torch-mlir's table decomposes `op` (if it does)."""
    def decomposition(input, first, second, *, beta=1, alpha=1):
        if input.dtype not in _LOW_PRECISION or (
                library_form and library_form(input, beta, alpha)):
            default = underlying(op)
            return default(input, first, second, beta=beta, alpha=alpha) if default \
                else NotImplemented
        product = product_of(first.float(), second.float())
        accumulator = input.float()
        if beta == 0:  # eager ignores input then, NaNs included
            result = product * alpha
        else:
            result = accumulator * beta + product * alpha
        return _rounded(result, input.dtype)
    return decomposition


def _scalar_value(value):
    """A Python float, or a 0-dim float tensor of a wider type (`x * torch.tensor(0.1)`:
    type promotion keeps bf16, ATen's kernel uses the value in float32)."""
    if isinstance(value, float):
        return value
    if (isinstance(value, torch.Tensor) and value.dim() == 0 and value.is_floating_point()
            and value.dtype not in _LOW_PRECISION):
        return value.float()
    return None


def _by_float_scalar(op):
    def decomposition(a, b):
        for tensor, other in ((a, b), (b, a)):
            scalar = _scalar_value(other)
            if (isinstance(tensor, torch.Tensor) and tensor.dtype in _LOW_PRECISION and
                    tensor.dim() > 0 and scalar is not None):
                break
        else:
            return NotImplemented
        if op is aten.div.Tensor and tensor is b:
            # `s / x` is x.reciprocal() * s in eager: the reciprocal rounds first.
            return _rounded(aten.reciprocal(tensor).float() * scalar, tensor.dtype)
        wide = tensor.float()
        return _rounded(op(wide, scalar) if tensor is a else op(scalar, wide), tensor.dtype)
    return decomposition


def _in_float32(op):
    """Activations with float parameters (leaky_relu's slope, elu's alpha): eager applies
    them in float32; torch-mlir rounded them to the tensor's type."""
    def decomposition(x, *args, **kwargs):
        if not isinstance(x, torch.Tensor) or x.dtype not in _LOW_PRECISION:
            return NotImplemented
        return _rounded(op(x.float(), *args, **kwargs), x.dtype)
    return decomposition


@decomposes(aten.linalg_vector_norm.default)
def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if x.dtype not in _LOW_PRECISION or dtype is not None:
        return NotImplemented
    return _rounded(aten.linalg_vector_norm(x.float(), ord, dim, keepdim), x.dtype)


def _linear(input, beta, alpha):
    """A linear layer's addmm (a row bias, no scaling) stays: the library call in the low
    precision takes the bias as its accumulator and rounds once (dyno-form-kernels)."""
    return input.dim() == 1 and beta == 1 and alpha == 1


for _op in (aten.mul.Tensor, aten.div.Tensor):
    decomposes(_op)(_by_float_scalar(_op))
for _op in (aten.leaky_relu.default, aten.elu.default):
    decomposes(_op)(_in_float32(_op))
decomposes(aten.baddbmm.default)(_rounded_once(aten.baddbmm.default, torch.bmm))
decomposes(aten.addbmm.default)(_rounded_once(aten.addbmm.default,
                                              lambda a, b: torch.bmm(a, b).sum(0)))
decomposes(aten.addmm.default)(_rounded_once(aten.addmm.default, torch.mm, _linear))
