"""Decompositions Dyno applies in AOTAutograd, on top of torch-mlir's table.

GELU: torch-mlir's tanh form uses an inexact constant (see `gelu`).
NaN: torch-mlir 20261001 lowers maximum/minimum/clamp (and with them hardtanh, relu6,
clip, hardsigmoid) to compare-and-select forms that drop a NaN, folds `x == x` to true,
and its argmax never picks a NaN; PyTorch propagates NaN in all of them. The forms below
do (see `_nan_max`).
Lowerings torch-mlir lacks: fmax/fmin, view_copy/permute_copy, amax/amin of a 0-d tensor;
and its reciprocal asserts x != 0 per element (see `reciprocal`).
var/var_mean and batch norm's statistics: see moment_decompositions.py.
"""
import contextlib
import itertools
import math

import torch

from . import (attention_decompositions, bessel_functions, complex_decompositions,
               indexing_decompositions, low_precision_decompositions,
               moment_decompositions, special_functions)

aten = torch.ops.aten


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


def _is_float(x) -> bool:
    return isinstance(x, torch.Tensor) and x.dtype.is_floating_point


def _nan_max(a, b):
    """max(a, b) that propagates a NaN of either operand, as PyTorch's does."""
    return aten.where.self(aten.logical_or(aten.gt.Tensor(a, b), aten.isnan(a)), a, b)


def _nan_min(a, b):
    return aten.where.self(aten.logical_or(aten.lt.Tensor(a, b), aten.isnan(a)), a, b)


def _as_tensor(value, like):
    if isinstance(value, torch.Tensor):
        return value
    return aten.scalar_tensor(value, dtype=like.dtype, device=like.device)


def _clamp(x, low=None, high=None):
    if not _is_float(x):
        return NotImplemented
    result = x
    if low is not None:
        result = _nan_max(result, _as_tensor(low, x))
    if high is not None:
        result = _nan_min(result, _as_tensor(high, x))
    if result is x:
        return aten.clone.default(x)
    return aten._to_copy.default(result, dtype=x.dtype) if result.dtype != x.dtype else result


def clamp(x, min=None, max=None):
    return _clamp(x, min, max)


def clamp_min(x, min):
    return _clamp(x, min, None)


def clamp_max(x, max):
    return _clamp(x, None, max)


def maximum(a, b):
    if not (_is_float(a) or _is_float(b)) or a.dtype != b.dtype:
        return NotImplemented
    return _nan_max(a, b)


def minimum(a, b):
    if not (_is_float(a) or _is_float(b)) or a.dtype != b.dtype:
        return NotImplemented
    return _nan_min(a, b)


def hardtanh(x, min_val=-1.0, max_val=1.0):
    return _clamp(x, min_val, max_val)


def hardsigmoid(x):
    if not _is_float(x):
        return NotImplemented
    return aten.div.Scalar(_clamp(aten.add.Scalar(x, 3.0), 0.0, 6.0), 6.0)


def eq_tensor(a, b):
    # torch-mlir folds eq(x, x) to true; NaN != NaN.
    if a is b and _is_float(a):
        return aten.logical_not.default(aten.isnan.default(a))
    return NotImplemented


_EXTREMA_BEING_DECOMPOSED = set()


@contextlib.contextmanager
def _lowered_by_torch_mlir(op):
    """Inside, a call of `op` from its own decomposition is torch-mlir's op (the
    decomposition declines it) instead of recursing."""
    _EXTREMA_BEING_DECOMPOSED.add(op)
    try:
        yield
    finally:
        _EXTREMA_BEING_DECOMPOSED.discard(op)


def _extremum_dim(extremum):
    """max.dim/min.dim with PyTorch's NaN rule: a row holding a NaN has the NaN as its
    value and the index of its first NaN. torch-mlir's running comparison never beats a
    NaN, so its index stopped at the extremum before the first NaN (a miscompile of
    torch.max(x, dim) on both targets). Two reductions: the first NaN's position (the
    least position holding a NaN, the line's length if none: a plain minimum, where a
    max.dim of the NaN mask was a second pick) and the extremum of the input with NaN
    replaced by the identity (-inf for max), which no NaN can cut short."""
    fill = -math.inf if extremum is aten.max.dim else math.inf

    def decomposition(x, dim, keepdim=False):
        if not _is_float(x) or x.dim() == 0 or extremum in _EXTREMA_BEING_DECOMPOSED:
            return NotImplemented
        nans = aten.isnan.default(x)
        axis = dim % x.dim()
        length = x.shape[axis]
        if isinstance(length, int):
            shape = [1] * x.dim()
            shape[axis] = length
            positions = aten.view.default(
                aten.arange.default(length, dtype=torch.int64, device=x.device), shape)
            first_nan = aten.amin.default(
                aten.where.self(nans, positions, aten.scalar_tensor(
                    length, dtype=torch.int64, device=x.device)), [axis], keepdim)
            any_nan = aten.lt.Scalar(first_nan, length)
        else:  # a symbolic length: a pick of the NaN mask
            has_nan, first_nan = aten.max.dim(aten._to_copy.default(nans, dtype=torch.int32),
                                              dim, keepdim)
            any_nan = aten.ne.Scalar(has_nan, 0)
        clean = aten.where.self(nans, aten.scalar_tensor(fill, dtype=x.dtype,
                                                         device=x.device), x)
        with _lowered_by_torch_mlir(extremum):
            values, plain = extremum(clean, dim, keepdim)
        nan = aten.scalar_tensor(math.nan, dtype=x.dtype, device=x.device)
        return (aten.where.self(any_nan, nan, values),
                aten.where.self(any_nan, first_nan, plain))
    return decomposition


def _arg_extremum(x, dim, keepdim, extremum):
    """argmax/argmin through max.dim/min.dim (decomposed above for NaN): torch-mlir's own
    argmax never picks a NaN."""
    if not _is_float(x):
        return NotImplemented
    if x.dim() == 0:  # the only element (torch-mlir cannot lower this)
        return aten.scalar_tensor(0, dtype=torch.int64, device=x.device)
    flat = x if dim is not None else aten.reshape.default(x, [-1])
    axis = dim if dim is not None else 0
    keep = keepdim if dim is not None else False
    result = extremum(flat, axis, keep)[1]
    if dim is None and keepdim:
        result = aten.reshape.default(result, [1] * x.dim())
    return result


def argmax(x, dim=None, keepdim=False):
    return _arg_extremum(x, dim, keepdim, aten.max.dim)


def argmin(x, dim=None, keepdim=False):
    return _arg_extremum(x, dim, keepdim, aten.min.dim)


def reciprocal(x):
    """1 / x. torch-mlir's lowering asserts, per element, that x != 0 ("unimplemented:
    tensor with zero element"), which aborted the process in a CPU kernel; eager gives
    inf."""
    if not _is_float(x):
        return NotImplemented
    return aten.div.Tensor(aten.scalar_tensor(1.0, dtype=x.dtype, device=x.device), x)


def fmax(a, b):
    """The larger operand, ignoring a NaN unless both are (torch-mlir cannot lower it)."""
    if not (_is_float(a) and isinstance(b, torch.Tensor)) or a.dtype != b.dtype:
        return NotImplemented
    return aten.where.self(aten.logical_or(aten.gt.Tensor(a, b), aten.isnan(b)), a, b)


def fmin(a, b):
    if not (_is_float(a) and isinstance(b, torch.Tensor)) or a.dtype != b.dtype:
        return NotImplemented
    return aten.where.self(aten.logical_or(aten.lt.Tensor(a, b), aten.isnan(b)), a, b)


def fmod(a, b):
    """C's fmod of floats, exact as eager's. torch-mlir computes a - b * trunc(a / b),
    which is off by a whole b wherever a / b rounds up to an integer (fmod(k * 0.1, 0.1)
    gave -7e-9 instead of 0.1 for 1837 of k = 1..4096). torch-mlir's remainder is exact
    (arith.remf with a sign fix): fmod is the remainder with the sign of a, and r - b is
    exact because the result it stands for is representable."""
    if not _is_float(a) or isinstance(b, torch.Tensor) and b.dtype != a.dtype:
        return NotImplemented
    b = _as_tensor(b, a)
    remainder = aten.remainder.Tensor(a, b)
    wrong_sign = aten.logical_and(aten.ne.Scalar(remainder, 0),
                                  aten.ne.Tensor(aten.lt.Scalar(remainder, 0),
                                                 aten.lt.Scalar(a, 0)))
    result = aten.where.self(wrong_sign, aten.sub.Tensor(remainder, b), remainder)
    # fmod(a, +-inf) is a for finite a (the remainder's sign fix would add the infinity).
    keeps_a = aten.logical_and(aten.isinf.default(b),
                               aten.logical_not.default(aten.isinf.default(a)))
    return aten.where.self(keeps_a, a, result)


def _floor_divide(a, b):
    """Python's floor division of floats, computed as eager does (ATen's
    div_floor_floating): from fmod, so that the quotient is the floor of the exact one.
    torch-mlir computes floor(a / b), which is one too large wherever a / b rounds up to
    an integer (div(k * 0.1, 0.1, rounding_mode="floor") for 1837 of k = 1..4096)."""
    if not _is_float(a) or isinstance(b, torch.Tensor) and b.dtype != a.dtype:
        return NotImplemented
    b = _as_tensor(b, a)
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


def div_mode(a, b, *, rounding_mode=None):
    if rounding_mode != "floor":
        return NotImplemented
    return _floor_divide(a, b)


def _float_scalar_comparison(op):
    """torch-mlir folds a comparison of a constant float tensor with an int scalar
    wrongly (scalar_tensor(0.1) < 0 folded to true, > 0 to false): a float tensor is
    compared with the scalar as a float."""
    def compare(x, other):
        if not _is_float(x) or type(other) is not int:
            return NotImplemented
        return op(x, float(other))
    return compare


def _zero_dim_extremum(x, dim=(), keepdim=False):
    # torch-mlir cannot lower amax/amin of a 0-d tensor, which is the tensor itself.
    if x.dim() != 0:
        return NotImplemented
    return aten.clone.default(x)


def view_copy(x, size):
    return aten.clone.default(aten.view.default(x, size),
                              memory_format=torch.contiguous_format)


def permute_copy(x, dims):
    return aten.clone.default(aten.permute.default(x, dims),
                              memory_format=torch.contiguous_format)


def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """aten._trilinear (nn.functional.bilinear): the three operands, each unsqueezed at
    its `expand` dimensions, multiplied and summed over `sumdim`. torch-mlir has no
    lowering; Dyno fuses the product into the sum's kernel. `unroll_dim` only chooses
    how ATen loops."""
    def expanded(tensor, dims):
        for dim in sorted(dims):
            tensor = aten.unsqueeze.default(tensor, dim)
        return tensor

    product = aten.mul.Tensor(aten.mul.Tensor(expanded(i1, expand1), expanded(i2, expand2)),
                              expanded(i3, expand3))
    return aten.sum.dim_IntList(product, list(sumdim)) if sumdim else product


def norm_scalar(x, p=2):
    """aten.norm.Scalar (torch.dist's): the vector norm of all elements, as
    linalg.vector_norm computes it; torch-mlir lowers norm.Scalar only for f32/f64."""
    return torch.linalg.vector_norm(x, p)


def hypot(a, b):
    """sqrt(a^2 + b^2) without overflow or underflow (eager calls SLEEF's hypot):
    the larger magnitude times sqrt(1 + ratio^2); an infinity wins over a NaN."""
    if not (_is_float(a) and _is_float(b)) or a.dtype != b.dtype:
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
    return aten.where.self(infinite, _as_tensor(math.inf, result), result)


def angle(x):
    """The argument of a real number: pi below zero, 0 otherwise, NaN for NaN
    (torch-mlir cannot lower it); of a complex number, atan2(imag, real) (std::arg)."""
    if x.is_complex():
        return torch.atan2(torch.imag(x), torch.real(x))
    if not _is_float(x):
        return NotImplemented
    result = aten.where.self(aten.lt.Scalar(x, 0.0), _as_tensor(math.pi, x),
                             _as_tensor(0.0, x))
    return aten.where.self(aten.isnan.default(x), x, result)


def pow_tensor_scalar(x, exponent):
    """x ** c for the exponents eager computes without pow (ATen's pow kernels): 0.5 as
    sqrt, -0.5 as rsqrt, -1 as a reciprocal, 2, 3 and -2 as products. They differ from
    pow where the special values do: (-inf) ** 0.5 is NaN in eager (sqrt) but inf for pow,
    (-0.0) ** 0.5 is -0.0, and x ** 3 rounds twice."""
    if not (_is_float(x) and x.dtype in (torch.float32, torch.float64)) \
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


def index_put(x, indices, values, accumulate=False):
    """Negative indices count from the end, as eager's index_put: torch-mlir passes them
    to its scatter as they are (which Dyno's bounds check then rejects at run time)."""
    if any(index is not None and index.dtype in (torch.bool, torch.uint8)
           for index in indices):
        return NotImplemented  # a mask spans several dimensions
    wrapped = [index if index is None else
               torch.where(index < 0, index + x.shape[dim], index)
               for dim, index in enumerate(indices)]
    return aten._index_put_impl.default(x, wrapped, values, accumulate)


def put(x, index, source, accumulate=False):
    """`x` flattened, `source` written (or added) at `index` (negative counts from the
    end), reshaped back: index_put on one dimension, which Dyno compiles and
    bounds-checks like eager."""
    flat = aten.reshape.default(x, [-1])
    positions = aten.reshape.default(index, [-1])
    values = aten.reshape.default(source, [-1])
    return aten.reshape.default(index_put(flat, [positions], values, accumulate),
                                list(x.shape))


def index_reduce(x, dim, index, source, reduce, include_self=True):
    """index_reduce is scatter_reduce with the index of each slice of `source` along
    `dim` broadcast over the slice (same reductions, same `include_self`; mean counts
    the original as one element in both)."""
    if not _is_float(x):
        return NotImplemented
    if x.dim() == 0:  # a 0-d tensor reduces like one of one element
        one = index_reduce(aten.reshape.default(x, [1]), 0, index,
                           aten.reshape.default(source, [1]), reduce, include_self)
        return aten.reshape.default(one, [])
    dim = dim % x.dim()
    shape = [1] * source.dim()
    shape[dim] = -1
    expanded = aten.expand.default(aten.view.default(index, shape), list(source.shape))
    return aten.scatter_reduce.two(x, dim, expanded, source, reduce,
                                   include_self=include_self)


def cumprod(x, dim, *, dtype=None):
    """cumprod with a dtype converts first, as eager does: torch-mlir lowers only the form
    without one (masked.cumprod passes its input's own dtype)."""
    if dtype is None:
        return NotImplemented
    return aten.cumprod.default(x.to(dtype), dim)


def diagonal_scatter(x, src, offset=0, dim1=0, dim2=1):
    """`x` with `src` written on its diagonal (`offset`, `dim1`, `dim2`), as a select
    between `x` and `src` gathered at each element's diagonal position: torch-mlir has no
    lowering, and PyTorch's decomposition writes in place (copy_to after
    functionalization)."""
    rank = x.dim()
    dim1, dim2 = dim1 % rank, dim2 % rank
    length = src.shape[-1]
    if length == 0:
        return x.clone()
    shape1, shape2 = [1] * rank, [1] * rank
    shape1[dim1], shape2[dim2] = x.shape[dim1], x.shape[dim2]
    rows = torch.arange(x.shape[dim1], device=x.device).view(shape1)
    cols = torch.arange(x.shape[dim2], device=x.device).view(shape2)
    on_diagonal = (cols - rows) == offset
    # Element (i, j) of the diagonal is src[..., i] (offset >= 0) or src[..., j].
    position = (rows if offset >= 0 else cols).clamp(0, length - 1)
    # src's dims: x's without dim1 and dim2, then the diagonal; put 1s back at dim1, dim2.
    expanded = src
    for dim in sorted((dim1, dim2)):
        expanded = expanded.unsqueeze(dim)
    expanded = expanded.expand(*x.shape, length)
    index = position.unsqueeze(-1).expand(*x.shape, 1)
    values = torch.gather(expanded, -1, index).squeeze(-1)
    return torch.where(on_diagonal, values, x)


_SCATTER_REDUCTIONS = {"add": "sum", "multiply": "prod"}


def scatter_reduce_deprecated(x, dim, index, src, reduce):
    """scatter's deprecated `reduce` argument ("add", "multiply") is scatter_reduce with
    the original included, which torch-mlir lowers (it has no lowering of this form)."""
    if not isinstance(src, torch.Tensor):
        src = torch.full(index.shape, src, dtype=x.dtype, device=x.device)
    return aten.scatter_reduce.two(x, dim, index, src, _SCATTER_REDUCTIONS[reduce],
                                   include_self=True)


def _stable_sort(x, dim):
    return aten.sort.stable(x, stable=True, dim=dim, descending=False)


def _select_sorted(x, dim, keepdim, position):
    """(values, indices) of the sorted lines of `x` at `position` (a tensor shaped like a
    keepdim reduction of `x`), as a reduction along `dim` returns them."""
    values, indices = _stable_sort(x, dim)
    value = torch.gather(values, dim, position)
    index = torch.gather(indices, dim, position)
    if not keepdim:
        value, index = value.squeeze(dim), index.squeeze(dim)
    return value, index


def _selectable(x, dim) -> bool:
    return x.dim() > 0 and x.shape[dim] > 0


def _scalar_selection(x):
    """A 0-d tensor's median or k-th value along dim 0 or -1: itself, at index 0."""
    return torch.clone(x), torch.zeros((), dtype=torch.int64, device=x.device)


def kthvalue(x, k, dim=-1, keepdim=False):
    """The k-th smallest of each line, from a stable sort (torch-mlir lowers kthvalue to
    tm_tensor.topk, which Dyno has no op for). NaN is the largest value, as in eager."""
    if x.dim() == 0 and dim in (0, -1) and k == 1:  # (any other k: eager's error)
        return _scalar_selection(x)
    if not _selectable(x, dim):
        return NotImplemented
    shape = list(x.shape)
    shape[dim] = 1
    position = torch.full(shape, k - 1, dtype=torch.int64, device=x.device)
    return _select_sorted(x, dim, keepdim, position)


def median_dim(x, dim=0, keepdim=False):
    """The lower median of each line; a line with NaN gives its first NaN, as eager."""
    if x.dim() == 0 and dim in (0, -1):
        return _scalar_selection(x)
    if not _selectable(x, dim):
        return NotImplemented
    count = x.shape[dim]
    nans = torch.isnan(x).sum(dim, keepdim=True)
    position = torch.where(nans > 0, count - nans, (count - 1) // 2)
    return _select_sorted(x, dim, keepdim, position)


def nanmedian_dim(x, dim=0, keepdim=False):
    """The lower median of each line's numbers (NaN ignored); an all-NaN line gives the
    NaN in its middle, as eager."""
    if x.dim() == 0 and dim in (0, -1):
        return _scalar_selection(x)
    if not _selectable(x, dim):
        return NotImplemented
    count = x.shape[dim]
    numbers = count - torch.isnan(x).sum(dim, keepdim=True)
    position = torch.where(numbers > 0, (numbers - 1) // 2, (count - 1) // 2)
    return _select_sorted(x, dim, keepdim, position)


def median(x):
    if x.numel() == 0:
        return NotImplemented
    return median_dim(x.reshape(-1), 0)[0]


def nanmedian(x):
    if x.numel() == 0:
        return NotImplemented
    return nanmedian_dim(x.reshape(-1), 0)[0]


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Eager's binary search, step by step: `log2(N) + 1` rounds of a midpoint gather
    and a compare, each a pointwise op (torch-mlir has no lowering). Emulating the
    search, rather than counting the boundaries below each value, gives eager's answer
    also where the sequence holds NaN (sorted last), which a count does not."""
    if not isinstance(values, torch.Tensor) or values.dtype != sorted_sequence.dtype:
        return NotImplemented
    right = right or side == "right"
    length = sorted_sequence.shape[-1]
    out_dtype = torch.int32 if out_int32 else torch.int64
    one_dimensional = sorted_sequence.dim() == 1
    if length == 0 or values.dim() == 0 and not one_dimensional:
        return NotImplemented if length else aten.zeros_like.default(values, dtype=out_dtype)
    if sorter is not None:
        sorted_sequence = (aten.index.Tensor(sorted_sequence, [sorter]) if one_dimensional
                           else aten.gather.default(sorted_sequence, -1, sorter))
    low = aten.zeros_like.default(values, dtype=torch.int64)
    high = aten.add.Scalar(low, length)
    for _ in range(length.bit_length() + 1):
        active = aten.lt.Tensor(low, high)
        middle = aten.div.Tensor_mode(aten.add.Tensor(low, high), 2, rounding_mode="floor")
        at = aten.clamp_max.default(middle, length - 1)  # inactive lanes may reach N
        middle_value = (aten.index.Tensor(sorted_sequence, [at]) if one_dimensional
                        else aten.gather.default(sorted_sequence, -1, at))
        # lower bound: `!(mid >= value)` goes right; upper bound: `!(mid > value)`.
        beyond = (aten.gt.Tensor if right else aten.ge.Tensor)(middle_value, values)
        go_right = aten.logical_and.default(active, aten.logical_not.default(beyond))
        go_left = aten.logical_and.default(active, beyond)
        low = aten.where.self(go_right, aten.add.Scalar(middle, 1), low)
        high = aten.where.self(go_left, middle, high)
    return aten._to_copy.default(low, dtype=out_dtype)


def bucketize(values, boundaries, *, out_int32=False, right=False):
    """The same binary search (torch-mlir's lowering counts boundaries, which differs
    from eager's search where the boundaries hold NaN)."""
    return searchsorted(boundaries, values, out_int32=out_int32, right=right)


def cdist_forward(x1, x2, p, compute_mode=None):
    """Pairwise p-norm distances as eager's kernels compute them (torch-mlir has no
    lowering): p = 2 on more than 25 rows (or compute_mode 1) through one matmul of
    padded operands with the squared norms, as ATen's _euclidean_dist; otherwise
    directly from the differences (p = 0 counts them, inf takes the largest)."""
    if not (_is_float(x1) and isinstance(x2, torch.Tensor) and x2.dtype == x1.dtype):
        return NotImplemented
    rows1, rows2, features = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    if rows1 == 0 or rows2 == 0 or features == 0:
        return NotImplemented
    mode = compute_mode or 0
    if p == 2 and (mode == 1 or mode == 0 and (rows1 > 25 or rows2 > 25)):
        norm1 = aten.sum.dim_IntList(aten.mul.Tensor(x1, x1), [-1], True)
        norm2 = aten.sum.dim_IntList(aten.mul.Tensor(x2, x2), [-1], True)
        padded1 = aten.cat.default([aten.mul.Scalar(x1, -2), norm1,
                                    aten.ones_like.default(norm1)], -1)
        padded2 = aten.cat.default([x2, aten.ones_like.default(norm2), norm2], -1)
        products = aten.matmul.default(padded1, aten.transpose.int(padded2, -1, -2))
        return aten.sqrt.default(aten.clamp_min.default(products, 0))
    difference = aten.sub.Tensor(aten.unsqueeze.default(x1, -2),
                                 aten.unsqueeze.default(x2, -3))
    return _norm_of_differences(difference, p)


def _norm_of_differences(difference, p):
    """The p-norm along the last dimension, as ATen's cdist/pdist kernels compute it
    (p = 0 counts the nonzero differences, inf takes the largest)."""
    magnitude = aten.abs.default(difference)
    if p == 0:
        nonzero = aten._to_copy.default(aten.ne.Scalar(difference, 0),
                                        dtype=difference.dtype)
        return aten.sum.dim_IntList(nonzero, [-1])
    if p == 1:
        return aten.sum.dim_IntList(magnitude, [-1])
    if p == 2:
        return aten.sqrt.default(aten.sum.dim_IntList(aten.mul.Tensor(difference, difference),
                                                      [-1]))
    if p == math.inf:
        return aten.amax.default(magnitude, [-1])
    powered = aten.pow.Tensor_Scalar(magnitude, p)
    return aten.pow.Tensor_Scalar(aten.sum.dim_IntList(powered, [-1]), 1.0 / p)


def pdist_forward(x, p=2.0):
    """The distances between rows i < j, in eager's order (0,1), (0,2), ... (1,2), ...:
    the rows gathered at the upper triangle's indices, then the norm of differences as
    eager's pdist kernel (torch-mlir has no lowering)."""
    if not _is_float(x) or x.dim() != 2 or x.shape[0] < 2 or x.shape[1] == 0:
        return NotImplemented
    # Pair k's rows, in closed form (torch-mlir's triu_indices uses the same one, but
    # returns a concatenation the Triton target cannot write): row i starts at
    # k = i (2n - i - 1) / 2, so i = floor((2n - 1) / 2 - sqrt(((2n - 1) / 2)^2 - 2k)),
    # exact in float64 for any n that fits in memory.
    n = x.shape[0]
    k = aten.arange.default(n * (n - 1) // 2, dtype=torch.int64, device=x.device)
    half = (2 * n - 1) / 2.0
    root = aten.sqrt.default(aten.rsub.Scalar(aten.mul.Scalar(
        aten._to_copy.default(k, dtype=torch.float64), 2.0), half * half))
    rows = aten._to_copy.default(aten.floor.default(aten.rsub.Scalar(root, half)),
                                 dtype=torch.int64)
    starts = aten.floor_divide.default(
        aten.mul.Tensor(rows, aten.rsub.Scalar(rows, 2 * n - 1)), 2)
    columns = aten.add.Scalar(aten.add.Tensor(aten.sub.Tensor(k, starts), rows), 1)
    first = aten.index_select.default(x, 0, rows)
    second = aten.index_select.default(x, 0, columns)
    return _norm_of_differences(aten.sub.Tensor(first, second), p)


def histc(x, bins=100, min=0, max=0):
    """Counts per bin as eager's CPU kernel computes them: bin = int((x - lo) * bins /
    (hi - lo)), the top edge in the last bin, values outside [lo, hi] (and NaN) not
    counted. The counts are a scatter-add into bins + 1 counters, the last one for the
    values not counted. A range taken from the data (min == max) stays eager, which
    raises for non-finite data."""
    if min == max or not x.dtype.is_floating_point:
        return NotImplemented
    low = torch.full((), min, dtype=x.dtype, device=x.device)
    high = torch.full((), max, dtype=x.dtype, device=x.device)
    values = x.reshape(-1)
    counted = (values >= low) & (values <= high)
    position = ((values - low) * bins / (high - low)).to(torch.int64)
    position = torch.where(position == bins, bins - 1, position)
    position = torch.where(counted, position, bins)
    counts = torch.zeros(bins + 1, dtype=x.dtype, device=x.device)
    counts = counts.index_put((position,), torch.ones_like(values), accumulate=True)
    return counts[:bins]


def _as_list(value, dims, default=None):
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return list(default)
    if isinstance(value, int):
        return [value] * dims
    return list(value) if len(value) == dims else [value[0]] * dims


def _first_window_positions(x, out_shape, dims, starts):
    """Per output of a pooling, the flat position (within its plane) of its window's
    first element inside the input: `starts(dim, outputs)` gives the first row, column,
    ... per output along one spatial dimension."""
    spatial = x.shape[-dims:]
    position = None
    for dim in range(dims):
        outputs = aten.arange.default(out_shape[-dims + dim], dtype=torch.int64,
                                      device=x.device)
        start = starts(dim, outputs)
        stride = math.prod(spatial[dim + 1:])
        shape = [1] * dims
        shape[dim] = out_shape[-dims + dim]
        term = aten.view.default(aten.mul.Scalar(start, stride), shape)
        position = term if position is None else aten.add.Tensor(position, term)
    return position


def _max_pool_starts(x, dims, kernel_size, stride=(), padding=0, dilation=1, *unused):
    kernel = _as_list(kernel_size, dims)
    strides = _as_list(stride, dims, kernel)
    pads, dilations = _as_list(padding, dims), _as_list(dilation, dims)

    def starts(dim, outputs):
        # Eager's kernels step a window's start past the padding by whole dilations.
        start = aten.sub.Scalar(aten.mul.Scalar(outputs, strides[dim]), pads[dim])
        before = aten.clamp_min.default(aten.neg.default(start), 0)
        steps = aten.div.Tensor_mode(aten.add.Scalar(before, dilations[dim] - 1),
                                     dilations[dim], rounding_mode="floor")
        return aten.add.Tensor(start, aten.mul.Scalar(steps, dilations[dim]))
    return starts


def _adaptive_pool_starts(x, dims, output_size, *unused):
    spatial = x.shape[-dims:]
    out = _as_list(output_size, dims)

    def starts(dim, outputs):
        return aten.div.Tensor_mode(aten.mul.Scalar(outputs, spatial[dim]), out[dim],
                                    rounding_mode="floor")
    return starts


def _pool_with_eager_indices(op, dims, window_starts, inner=None, fix_values=False):
    """Max pooling with indices, with eager's rules where torch-mlir's lowerings differ
    (miscompiles on both targets, found with NaN and -inf inputs):
    - a window holding a NaN has the NaN as its value and the index of its last NaN
      (eager's kernels take every NaN they meet: `val > max || isnan(val)`); torch-mlir
      matched the maximum by equality (-1) or skipped NaN;
    - a window whose maximum is -inf has the index of its first element inside the
      input; torch-mlir gave a padding position (negative), or, for adaptive 3-d
      pooling, uninitialized memory (and, in some runs, -FLT_MAX as the value: its
      lowering of adaptive pooling varies between processes).
    Other windows keep torch-mlir's answer (the first maximum, as eager). `inner`
    computes the op where torch-mlir cannot (PyTorch's decomposition). Only adaptive
    pooling needs its values fixed (`fix_values`): max pooling's propagate NaN, so a
    graph that uses only them keeps none of this."""
    def decomposition(x, *args):
        if not _is_float(x) or op in _EXTREMA_BEING_DECOMPOSED:
            return NotImplemented
        if x.dim() == dims + 1:  # unbatched: torch-mlir lowers only the batched form
            values, indices = decomposition(aten.unsqueeze.default(x, 0), *args)
            return aten.squeeze.dim(values, 0), aten.squeeze.dim(indices, 0)
        pool = inner or op
        with _lowered_by_torch_mlir(op):
            values, indices = pool(x, *args)
            # One more pooling, of a code per element (float64, exact): a NaN's position
            # plus `count`, 0 for an element above -inf, -1 for -inf. A window's maximum
            # code says whether it holds a NaN (and its last one) or only -inf, whatever
            # the values pooling did with -inf (torch-mlir's adaptive pooling starts some
            # runs from -FLT_MAX, and returns it for an all -inf window).
            count = math.prod(x.shape[-dims:])
            positions = aten.arange.start(count, 2 * count, dtype=torch.float64,
                                          device=x.device)
            positions = aten.view.default(positions, list(x.shape[-dims:]))
            zero = aten.scalar_tensor(0.0, dtype=torch.float64, device=x.device)
            minus_one = aten.scalar_tensor(-1.0, dtype=torch.float64, device=x.device)
            code = aten.where.self(aten.isnan.default(x), positions, aten.where.self(
                aten.eq.Scalar(x, -math.inf), minus_one, zero))
            window_code = pool(code, *args)[0]
        first = _first_window_positions(x, values.shape, dims, window_starts(x, dims, *args))
        all_minus_inf = aten.eq.Scalar(window_code, -1.0)
        indices = aten.where.self(all_minus_inf, first, indices)
        has_nan = aten.ge.Scalar(window_code, float(count))
        if fix_values:
            nan = aten.scalar_tensor(math.nan, dtype=x.dtype, device=x.device)
            minus_inf = aten.scalar_tensor(-math.inf, dtype=x.dtype, device=x.device)
            values = aten.where.self(has_nan, nan, aten.where.self(all_minus_inf, minus_inf,
                                                                   values))
        last_nan = aten._to_copy.default(aten.sub.Scalar(window_code, float(count)),
                                         dtype=torch.int64)
        indices = aten.where.self(has_nan, last_nan, indices)
        return values, indices
    return decomposition


# Windows of at most this many elements are pooled by `_max_pool_by_window_offsets`.
_UNROLLED_POOL_WINDOW = 64


def _max_pool_by_window_offsets(dims, general):
    """Max pooling with indices as eager's loop computes it, one window offset at a time:
    every output starts at -inf with the index of its window's first element inside the
    input, and takes an element where `value > max || isnan(value)` (so a NaN is the
    value and the last NaN the index; an all -inf window keeps its first index). Each
    offset is a strided slice of the input padded with -inf (padding never wins), so
    the whole pooling is elementwise and forms one kernel, values and indices together,
    on both targets. Before, indices were torch-mlir's pooling repaired by a second
    pooling of a float64 code per input element (six kernels on the GPU, 4.3x slower
    than eager). Windows larger than `_UNROLLED_POOL_WINDOW` keep that form (`general`)."""
    from torch._meta_registrations import pooling_output_shape

    def decomposition(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        kernel = _as_list(kernel_size, dims)
        if _is_float(x) and x.dim() == dims + 1:  # unbatched
            values, indices = decomposition(aten.unsqueeze.default(x, 0), kernel_size, stride,
                                            padding, dilation, ceil_mode)
            return aten.squeeze.dim(values, 0), aten.squeeze.dim(indices, 0)
        if (not _is_float(x) or x.dim() != dims + 2
                or math.prod(kernel) > _UNROLLED_POOL_WINDOW
                or any(not isinstance(s, int) for s in x.shape)):
            return general(x, kernel_size, stride, padding, dilation, ceil_mode)
        strides = _as_list(stride, dims, kernel)
        pads, dilations = _as_list(padding, dims), _as_list(dilation, dims)
        spatial = list(x.shape[-dims:])
        out = [pooling_output_shape(spatial[d], kernel[d], pads[d], strides[d], dilations[d],
                                    ceil_mode) for d in range(dims)]
        # Pad with -inf so every window offset's slice is in range; crop what no window
        # reads (a stride larger than the window leaves the end unread).
        needed = [(out[d] - 1) * strides[d] + dilations[d] * (kernel[d] - 1) + 1
                  for d in range(dims)]
        padded = x
        for d in range(dims):
            axis = 2 + d
            after = needed[d] - spatial[d] - pads[d]
            if pads[d] or after > 0:
                padded = aten.constant_pad_nd.default(
                    padded, [0, 0] * (dims - 1 - d) + [pads[d], max(after, 0)], -math.inf)
        first = _first_window_positions(x, [*x.shape[:2], *out], dims,
                                        _max_pool_starts(x, dims, kernel_size, stride,
                                                         padding, dilation))
        values = aten.full.default([1] * (dims + 2), -math.inf, dtype=x.dtype,
                                   device=x.device)
        indices = first
        for offset in itertools.product(*(range(k) for k in kernel)):
            window = padded
            position = None
            for d, k in enumerate(offset):
                start = k * dilations[d]
                window = aten.slice.Tensor(window, 2 + d, start,
                                           start + (out[d] - 1) * strides[d] + 1, strides[d])
                coordinate = aten.add.Scalar(
                    aten.arange.start_step(0, out[d] * strides[d], strides[d],
                                           dtype=torch.int64, device=x.device),
                    start - pads[d])
                shape = [1] * dims
                shape[d] = out[d]
                term = aten.view.default(aten.mul.Scalar(coordinate, math.prod(spatial[d + 1:])),
                                         shape)
                position = term if position is None else aten.add.Tensor(position, term)
            takes = aten.logical_or.default(aten.gt.Tensor(window, values),
                                            aten.isnan.default(window))
            values = aten.where.self(takes, window, values)
            indices = aten.where.self(takes, position, indices)
        return values, indices
    return decomposition


# PyTorch's own decompositions of ops torch-mlir cannot lower, where they produce ops it
# can (checked by the OpInfo sweep; each is PyTorch's reference implementation).
_PYTORCH_DECOMPOSED = ("addmv.default", "as_strided_copy.default",
                       # Functionalization turns _batch_norm_with_update into this
                       # form before decompositions run (its running statistics become
                       # results that AOTAutograd writes back).
                       "_batch_norm_with_update_functional.default",
                       "_batch_norm_no_update.default",
                       "narrow_copy.default",
                       "dist.default", "unbind_copy.int", "all.dim", "all.dims", "any.dim",
                       "any.dims")


# Targets on which attention stays one operation, PyTorch's fused CPU flash kernel (a
# dyno.library_call, forward and backward; see library_calls.ATTENTION_OPS for why).
# Elsewhere (the Triton target, whose exports run on GPUs) attention_decompositions
# computes it as matmuls and a softmax.
ATTENTION_LIBRARY_TARGETS = ("cpu",)


def table(target: str) -> dict:
    """The decompositions AOTAutograd and torch.export apply for `target` ("cpu" or
    "triton")."""
    from torch._decomp import decomposition_table
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    from .library_calls import ATTENTION_OPS

    decompositions = dict(get_decomposition_table())
    for name in _PYTORCH_DECOMPOSED:
        packet, overload = name.split(".")
        op = getattr(getattr(aten, packet), overload)
        decompositions[op] = decomposition_table[op]
    decompositions[aten.empty_strided.default] = empty_strided
    decompositions[aten.hypot.default] = hypot
    decompositions[aten.norm.Scalar] = norm_scalar
    decompositions[aten._trilinear.default] = trilinear
    decompositions[aten.linspace.default] = linspace
    decompositions[aten.pow.Tensor_Scalar] = pow_tensor_scalar
    decompositions[aten.angle.default] = angle
    decompositions[aten.index_put.default] = index_put
    decompositions[aten.put.default] = put
    decompositions[aten.index_reduce.default] = index_reduce
    decompositions[aten.kthvalue.default] = kthvalue
    decompositions[aten.cumprod.default] = cumprod
    decompositions[aten.diagonal_scatter.default] = diagonal_scatter
    decompositions[aten.scatter.reduce] = scatter_reduce_deprecated
    decompositions[aten.scatter.value_reduce] = scatter_reduce_deprecated
    decompositions[aten.histc.default] = histc
    decompositions[aten.searchsorted.Tensor] = searchsorted
    decompositions[aten._cdist_forward.default] = cdist_forward
    decompositions[aten._pdist_forward.default] = pdist_forward
    decompositions[aten.bucketize.Tensor] = bucketize
    decompositions[aten.median.dim] = median_dim
    decompositions[aten.nanmedian.dim] = nanmedian_dim
    decompositions[aten.median.default] = median
    decompositions[aten.nanmedian.default] = nanmedian
    decompositions.update(special_functions.table())
    decompositions.update(bessel_functions.table())
    decompositions.update(complex_decompositions.table())
    decompositions.update(indexing_decompositions.table())
    if target in ATTENTION_LIBRARY_TARGETS:
        for name in ATTENTION_OPS:  # PyTorch's decomposition of the forward is wrong in
            decompositions.pop(getattr(aten, name).default, None)  # training graphs
        decompositions.update(attention_decompositions.library_target_table())
    else:
        decompositions.update(attention_decompositions.table())
    decompositions.update(low_precision_decompositions.table(decompositions))
    decompositions.update(moment_decompositions.table())
    decompositions[aten.gelu.default] = gelu
    for op, function in [
            (aten.clamp.default, clamp), (aten.clamp.Tensor, clamp),
            (aten.clamp_min.default, clamp_min), (aten.clamp_min.Tensor, clamp_min),
            (aten.clamp_max.default, clamp_max), (aten.clamp_max.Tensor, clamp_max),
            (aten.maximum.default, maximum), (aten.minimum.default, minimum),
            (aten.hardtanh.default, hardtanh), (aten.hardsigmoid.default, hardsigmoid),
            (aten.eq.Tensor, eq_tensor), (aten.argmax.default, argmax),
            (aten.argmin.default, argmin), (aten.reciprocal.default, reciprocal),
            (aten.max.dim, _extremum_dim(aten.max.dim)),
            (aten.min.dim, _extremum_dim(aten.min.dim)),
            (aten.max_pool2d_with_indices.default, _max_pool_by_window_offsets(
                2, _pool_with_eager_indices(aten.max_pool2d_with_indices.default, 2,
                                            _max_pool_starts))),
            (aten.max_pool3d_with_indices.default, _max_pool_by_window_offsets(
                3, _pool_with_eager_indices(
                    aten.max_pool3d_with_indices.default, 3, _max_pool_starts,
                    decomposition_table[aten.max_pool3d_with_indices.default]))),
            (aten.adaptive_max_pool2d.default,
             _pool_with_eager_indices(aten.adaptive_max_pool2d.default, 2,
                                      _adaptive_pool_starts, fix_values=True)),
            (aten.adaptive_max_pool3d.default,
             _pool_with_eager_indices(aten.adaptive_max_pool3d.default, 3,
                                      _adaptive_pool_starts, fix_values=True)),
            (aten.fmax.default, fmax), (aten.fmin.default, fmin),
            (aten.amax.default, _zero_dim_extremum), (aten.amin.default, _zero_dim_extremum),
            (aten.view_copy.default, view_copy), (aten.permute_copy.default, permute_copy),
            (aten.div.Tensor_mode, div_mode), (aten.div.Scalar_mode, div_mode),
            (aten.floor_divide.default, _floor_divide),
            (aten.floor_divide.Scalar, _floor_divide),
            (aten.fmod.Tensor, fmod), (aten.fmod.Scalar, fmod)]:
        decompositions[op] = function
    for op in (aten.lt.Scalar, aten.le.Scalar, aten.gt.Scalar, aten.ge.Scalar,
               aten.eq.Scalar, aten.ne.Scalar):
        decompositions[op] = _float_scalar_comparison(op)
    return decompositions
