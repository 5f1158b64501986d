"""NaN and signed zeros as PyTorch keeps them, where torch-mlir 20261001 drops them: its
lowerings of maximum/minimum/clamp (and with them hardtanh, relu6, clip, hardsigmoid) are
compare-and-select forms that drop a NaN (and its relu and clamp turned a -0.0 at a
bound of 0.0 into 0.0), it folds `x == x` to true, its argmax never
picks a NaN and its max.dim/min.dim index stops before one. The forms below propagate
NaN (see `_nan_max`); fmax/fmin, which ignore it, and amax/amin of a 0-d tensor it
cannot lower at all."""
import math

import torch

from .decompositions import as_tensor, declined, decomposes, is_float, lowered_by_torch_mlir

aten = torch.ops.aten


def _nan_max(a, b):
    """max(a, b) that propagates a NaN of either operand, as PyTorch's does."""
    return aten.where.self(aten.logical_or(aten.gt.Tensor(a, b), aten.isnan(a)), a, b)


def _nan_min(a, b):
    return aten.where.self(aten.logical_or(aten.lt.Tensor(a, b), aten.isnan(a)), a, b)


def _at_least(x, low):
    """x raised to `low` where below it, as eager's clamp: x itself unless x < low (a
    -0.0 stays -0.0 under a bound of 0.0, a NaN stays NaN); a NaN bound gives NaN."""
    return aten.where.self(aten.logical_or(aten.lt.Tensor(x, low), aten.isnan(low)), low, x)


def _at_most(x, high):
    return aten.where.self(aten.logical_or(aten.gt.Tensor(x, high), aten.isnan(high)), high,
                           x)


def _clamp(x, low=None, high=None):
    if not is_float(x):
        return NotImplemented
    result = x
    if low is not None:
        result = _at_least(result, as_tensor(low, x))
    if high is not None:
        result = _at_most(result, as_tensor(high, x))
    if result is x:
        return aten.clone.default(x)
    return aten._to_copy.default(result, dtype=x.dtype) if result.dtype != x.dtype else result


@decomposes(aten.clamp.default, aten.clamp.Tensor)
def clamp(x, min=None, max=None):
    return _clamp(x, min, max)


@decomposes(aten.clamp_min.default, aten.clamp_min.Tensor)
def clamp_min(x, min):
    return _clamp(x, min, None)


@decomposes(aten.clamp_max.default, aten.clamp_max.Tensor)
def clamp_max(x, max):
    return _clamp(x, None, max)


@decomposes(aten.relu.default)
def relu(x):
    """x unless x < 0, as eager's relu: torch-mlir's `x > 0 ? x : 0` turned -0.0 into
    0.0 (a signed zero eager keeps; 1 / relu(x) changed sign)."""
    if not is_float(x):
        return NotImplemented
    return _at_least(x, aten.scalar_tensor(0.0, dtype=x.dtype, device=x.device))


@decomposes(aten.maximum.default)
def maximum(a, b):
    if not (is_float(a) or is_float(b)) or a.dtype != b.dtype:
        return NotImplemented
    return _nan_max(a, b)


@decomposes(aten.minimum.default)
def minimum(a, b):
    if not (is_float(a) or is_float(b)) or a.dtype != b.dtype:
        return NotImplemented
    return _nan_min(a, b)


@decomposes(aten.hardtanh.default)
def hardtanh(x, min_val=-1.0, max_val=1.0):
    return _clamp(x, min_val, max_val)


@decomposes(aten.hardsigmoid.default)
def hardsigmoid(x):
    if not is_float(x):
        return NotImplemented
    return aten.div.Scalar(_clamp(aten.add.Scalar(x, 3.0), 0.0, 6.0), 6.0)


@decomposes(aten.eq.Tensor)
def eq_tensor(a, b):
    # torch-mlir folds eq(x, x) to true; NaN != NaN.
    if a is b and is_float(a):
        return aten.logical_not.default(aten.isnan.default(a))
    return NotImplemented


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
        if not is_float(x) or x.dim() == 0 or declined(extremum):
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
        with lowered_by_torch_mlir(extremum):
            values, plain = extremum(clean, dim, keepdim)
        nan = aten.scalar_tensor(math.nan, dtype=x.dtype, device=x.device)
        return (aten.where.self(any_nan, nan, values),
                aten.where.self(any_nan, first_nan, plain))
    return decomposition


for _extremum in (aten.max.dim, aten.min.dim):
    decomposes(_extremum)(_extremum_dim(_extremum))


def _arg_extremum(x, dim, keepdim, extremum):
    """argmax/argmin through max.dim/min.dim (decomposed above for NaN): torch-mlir's own
    argmax never picks a NaN."""
    if not is_float(x):
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


@decomposes(aten.argmax.default)
def argmax(x, dim=None, keepdim=False):
    return _arg_extremum(x, dim, keepdim, aten.max.dim)


@decomposes(aten.argmin.default)
def argmin(x, dim=None, keepdim=False):
    return _arg_extremum(x, dim, keepdim, aten.min.dim)


@decomposes(aten.fmax.default)
def fmax(a, b):
    """The larger operand, ignoring a NaN unless both are (torch-mlir cannot lower it)."""
    if not (is_float(a) and isinstance(b, torch.Tensor)) or a.dtype != b.dtype:
        return NotImplemented
    return aten.where.self(aten.logical_or(aten.gt.Tensor(a, b), aten.isnan(b)), a, b)


@decomposes(aten.fmin.default)
def fmin(a, b):
    if not (is_float(a) and isinstance(b, torch.Tensor)) or a.dtype != b.dtype:
        return NotImplemented
    return aten.where.self(aten.logical_or(aten.lt.Tensor(a, b), aten.isnan(b)), a, b)


@decomposes(aten.amax.default, aten.amin.default)
def _zero_dim_extremum(x, dim=(), keepdim=False):
    # torch-mlir cannot lower amax/amin of a 0-d tensor, which is the tensor itself.
    if x.dim() != 0:
        return NotImplemented
    return aten.clone.default(x)
