"""Arithmetic, creation and views that torch-mlir lowers inexactly or not at all: GELU's
constants, reciprocal's assertion, fmod and floor division exact as eager's, hypot
without overflow, pow's special exponents, float scalar comparisons it folds wrongly,
linspace as ATen's kernel rounds it, strided empties and the copy forms of views."""
import math

import torch

from .decompositions import as_tensor, decomposes, decomposes_as_pytorch, is_float

aten = torch.ops.aten


@decomposes(aten.gelu.default)
def gelu(x, approximate="none"):
    """GELU with exact constants. torch-mlir 20261001 lowers the tanh form with
    sqrt(2/pi) rounded to 0.797724 (true: 0.7978846), a 2e-4 relative error found by the
    OpInfo sweep; both forms are decomposed here instead. bf16/f16 compute in float32 and
    round once, as eager's kernel does."""
    if x.dtype in (torch.bfloat16, torch.float16):
        return aten.gelu.default(x.float(), approximate=approximate).to(x.dtype)
    half_x = aten.mul.Tensor(x, 0.5)
    if approximate == "tanh":
        cube = aten.mul.Tensor(aten.mul.Tensor(x, x), x)
        inner = aten.mul.Tensor(aten.add.Tensor(x, aten.mul.Tensor(cube, 0.044715)),
                                math.sqrt(2.0 / math.pi))
        return aten.mul.Tensor(half_x, aten.add.Tensor(aten.tanh.default(inner), 1.0))
    # half_x * (1 + erf) as half_x + half_x * erf: one fused multiply-add instead of an
    # addition and a multiplication (the GELU loop of a fused layernorm+GELU+softmax
    # kernel is bound by the FMA pipes); one rounding fewer, within an ulp of eager's.
    scaled = aten.mul.Tensor(x, math.sqrt(0.5))
    return aten.add.Tensor(half_x, aten.mul.Tensor(half_x, aten.erf.default(scaled)))


@decomposes(aten.reciprocal.default)
def reciprocal(x):
    """1 / x. torch-mlir's lowering asserts, per element, that x != 0 ("unimplemented:
    tensor with zero element"), which aborted the process in a CPU kernel; eager gives
    inf."""
    if not is_float(x):
        return NotImplemented
    return aten.div.Tensor(aten.scalar_tensor(1.0, dtype=x.dtype, device=x.device), x)


@decomposes(aten.fmod.Tensor, aten.fmod.Scalar)
def fmod(a, b):
    """C's fmod of floats, exact as eager's. torch-mlir computes a - b * trunc(a / b),
    which is off by a whole b wherever a / b rounds up to an integer (fmod(k * 0.1, 0.1)
    gave -7e-9 instead of 0.1 for 1837 of k = 1..4096). torch-mlir's remainder is exact
    (arith.remf with a sign fix): fmod is the remainder with the sign of a, and r - b is
    exact because the result it stands for is representable."""
    if not is_float(a) or isinstance(b, torch.Tensor) and b.dtype != a.dtype:
        return NotImplemented
    b = as_tensor(b, a)
    remainder = aten.remainder.Tensor(a, b)
    wrong_sign = aten.logical_and(aten.ne.Scalar(remainder, 0),
                                  aten.ne.Tensor(aten.lt.Scalar(remainder, 0),
                                                 aten.lt.Scalar(a, 0)))
    result = aten.where.self(wrong_sign, aten.sub.Tensor(remainder, b), remainder)
    # fmod(a, +-inf) is a for finite a (the remainder's sign fix would add the infinity).
    keeps_a = aten.logical_and(aten.isinf.default(b),
                               aten.logical_not.default(aten.isinf.default(a)))
    return aten.where.self(keeps_a, a, result)


@decomposes(aten.floor_divide.default, aten.floor_divide.Scalar)
def _floor_divide(a, b):
    """Python's floor division of floats, computed as eager does (ATen's
    div_floor_floating): from fmod, so that the quotient is the floor of the exact one.
    torch-mlir computes floor(a / b), which is one too large wherever a / b rounds up to
    an integer (div(k * 0.1, 0.1, rounding_mode="floor") for 1837 of k = 1..4096)."""
    if not is_float(a) or isinstance(b, torch.Tensor) and b.dtype != a.dtype:
        return NotImplemented
    b = as_tensor(b, a)
    dtype = a.dtype
    if dtype in (torch.float16, torch.bfloat16):  # eager computes in float32
        a = aten._to_copy.default(a, dtype=torch.float32)
        b = aten._to_copy.default(b, dtype=torch.float32)
    quotient = aten.div.Tensor(a, b)
    mod = fmod(a, b)
    exact = aten.div.Tensor(aten.sub.Tensor(a, mod), b)
    signs_differ = aten.ne.Tensor(aten.lt.Scalar(b, 0), aten.lt.Scalar(mod, 0))
    exact = aten.where.self(aten.logical_and(aten.ne.Scalar(mod, 0), signs_differ),
                            aten.sub.Scalar(exact, 1), exact)
    floored = aten.floor.default(exact)
    floored = aten.where.self(aten.gt.Scalar(aten.sub.Tensor(exact, floored), 0.5),
                              aten.add.Scalar(floored, 1), floored)
    # A zero quotient keeps the sign of a / b (finite here: |a| < |b|).
    floored = aten.where.self(aten.ne.Scalar(exact, 0), floored,
                              aten.mul.Scalar(quotient, 0))
    result = aten.where.self(aten.eq.Scalar(b, 0), quotient, floored)
    return result if result.dtype == dtype else aten._to_copy.default(result, dtype=dtype)


@decomposes(aten.div.Tensor_mode, aten.div.Scalar_mode)
def div_mode(a, b, *, rounding_mode=None):
    if rounding_mode != "floor":
        return NotImplemented
    return _floor_divide(a, b)


def _float_scalar_comparison(op):
    """torch-mlir folds a comparison of a constant float tensor with an int scalar
    wrongly (scalar_tensor(0.1) < 0 folded to true, > 0 to false): a float tensor is
    compared with the scalar as a float."""
    def compare(x, other):
        if not is_float(x) or type(other) is not int:
            return NotImplemented
        return op(x, float(other))
    return compare


for _comparison in (aten.lt.Scalar, aten.le.Scalar, aten.gt.Scalar, aten.ge.Scalar,
                    aten.eq.Scalar, aten.ne.Scalar):
    decomposes(_comparison)(_float_scalar_comparison(_comparison))


@decomposes(aten.hypot.default)
def hypot(a, b):
    """sqrt(a^2 + b^2) without overflow or underflow (eager calls SLEEF's hypot):
    the larger magnitude times sqrt(1 + ratio^2); an infinity wins over a NaN."""
    if not (is_float(a) and is_float(b)) or a.dtype != b.dtype:
        return NotImplemented
    x, y = aten.abs.default(a), aten.abs.default(b)
    larger = aten.where.self(aten.gt.Tensor(y, x), y, x)
    smaller = aten.where.self(aten.gt.Tensor(y, x), x, y)
    ratio = aten.div.Tensor(smaller, larger)
    scaled = aten.mul.Tensor(larger, aten.sqrt.default(
        aten.add.Scalar(aten.mul.Tensor(ratio, ratio), 1.0)))
    result = aten.where.self(aten.eq.Scalar(larger, 0.0), larger, scaled)
    infinite = aten.logical_or(aten.isinf.default(a), aten.isinf.default(b))
    nan = aten.logical_or(aten.isnan.default(a), aten.isnan.default(b))
    result = aten.where.self(nan, aten.add.Tensor(a, b), result)
    return aten.where.self(infinite, as_tensor(math.inf, result), result)


@decomposes(aten.pow.Tensor_Scalar)
def pow_tensor_scalar(x, exponent):
    """x ** c for the exponents eager computes without pow (ATen's pow kernels): 0.5 as
    sqrt, -0.5 as rsqrt, -1 as a reciprocal, 2, 3 and -2 as products. They differ from
    pow where the special values do: (-inf) ** 0.5 is NaN in eager (sqrt) but inf for pow,
    (-0.0) ** 0.5 is -0.0, and x ** 3 rounds twice."""
    if not (is_float(x) and x.dtype in (torch.float32, torch.float64)) \
            or isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
        return NotImplemented
    if exponent == 0.5:
        return aten.sqrt.default(x)
    if exponent == -0.5:
        return reciprocal(aten.sqrt.default(x))
    if exponent == -1:
        return reciprocal(x)
    if exponent == 2:
        return aten.mul.Tensor(x, x)
    if exponent == 3:
        return aten.mul.Tensor(aten.mul.Tensor(x, x), x)
    if exponent == -2:
        return reciprocal(aten.mul.Tensor(x, x))
    return NotImplemented


@decomposes(aten.cumprod.default)
def cumprod(x, dim, *, dtype=None):
    """cumprod with a dtype converts first, as eager does: torch-mlir lowers only the form
    without one (masked.cumprod passes its input's own dtype)."""
    if dtype is None:
        return NotImplemented
    return aten.cumprod.default(x.to(dtype), dim)


@decomposes(aten.linspace.default)
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    """float32 linspace as ATen's CPU kernel computes it: step = (end - start) / (steps - 1)
    in float32, the first half start + step * i, the second half counted down from end,
    end - step * (steps - 1 - i), each a fused multiply-add (ATen's kernel is compiled with
    FMA contraction). The products and sums are exact in float64, so one rounding to
    float32 gives the FMA's result, also where the graph is folded to a constant.
    torch-mlir computed start + i * step throughout: the middle of linspace(-1, 1, 15)
    was 0 instead of eager's -4.5e-8, and inf times it NaN instead of -inf (fuzzer seeds
    1281, 3038, 20358 and others)."""
    if (dtype or torch.get_default_dtype()) != torch.float32 \
            or layout not in (None, torch.strided) \
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       for v in (start, end)) or not isinstance(steps, int) or steps < 2:
        return NotImplemented
    import numpy

    start32, end32 = numpy.float32(start), numpy.float32(end)
    step = float((end32 - start32) / numpy.float32(steps - 1))
    index = aten.arange.start(0, steps, dtype=torch.float64, device=device)
    first = aten.add.Tensor(aten.mul.Tensor(index, step), float(start32))
    remaining = aten.rsub.Scalar(index, steps - 1)
    second = aten.rsub.Scalar(aten.mul.Tensor(remaining, step), float(end32))
    result = aten.where.self(aten.lt.Scalar(index, steps // 2), first, second)
    return aten._to_copy.default(result, dtype=torch.float32)


@decomposes(aten.empty_strided.default)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    """An uninitialized tensor with the given strides (new_zeros, new_full and block_diag
    create one, then fill it; torch-mlir cannot lower it): an empty tensor in the order
    the strides describe, permuted into place. Strides that are not a permutation of a
    dense layout are left to eager."""
    if layout not in (None, torch.strided) or any(not isinstance(s, int) for s in size) \
            or any(not isinstance(s, int) for s in stride):
        return NotImplemented
    if 0 in size:  # no element: any strides describe it
        return aten.empty.memory_format(list(size), dtype=dtype, device=device)
    order = sorted(range(len(size)), key=lambda d: (stride[d], size[d]), reverse=True)
    expected = 1
    for d in reversed(order):
        if size[d] != 1 and stride[d] != expected:
            return NotImplemented
        expected *= size[d]
    dense = aten.empty.memory_format([size[d] for d in order], dtype=dtype, device=device)
    if order == list(range(len(size))):
        return dense
    inverse = [order.index(d) for d in range(len(size))]
    return aten.permute.default(dense, inverse)


@decomposes(aten.view_copy.default)
def view_copy(x, size):
    return aten.clone.default(aten.view.default(x, size),
                              memory_format=torch.contiguous_format)


@decomposes(aten.permute_copy.default)
def permute_copy(x, dims):
    return aten.clone.default(aten.permute.default(x, dims),
                              memory_format=torch.contiguous_format)


# PyTorch's own decompositions (its reference implementations), which produce ops
# torch-mlir lowers (checked by the OpInfo sweep).
decomposes_as_pytorch(aten.as_strided_copy.default, aten.narrow_copy.default,
                      aten.unbind_copy.int, aten.all.dim, aten.all.dims, aten.any.dim,
                      aten.any.dims)
