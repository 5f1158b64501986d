"""Selection by sorting: k-th values, medians and binary searches, which torch-mlir
lowers to ops Dyno has none of (tm_tensor.topk) or not at all, computed from a stable
sort or a binary search emulated round by round, with eager's NaN order."""
import torch

from .decompositions import decomposes

aten = torch.ops.aten


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


@decomposes(aten.kthvalue.default)
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


@decomposes(aten.median.dim)
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


@decomposes(aten.nanmedian.dim)
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


@decomposes(aten.median.default)
def median(x):
    if x.numel() == 0:
        return NotImplemented
    return median_dim(x.reshape(-1), 0)[0]


@decomposes(aten.nanmedian.default)
def nanmedian(x):
    if x.numel() == 0:
        return NotImplemented
    return nanmedian_dim(x.reshape(-1), 0)[0]


@decomposes(aten.searchsorted.Tensor)
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


@decomposes(aten.bucketize.Tensor)
def bucketize(values, boundaries, *, out_int32=False, right=False):
    """The same binary search (torch-mlir's lowering counts boundaries, which differs
    from eager's search where the boundaries hold NaN)."""
    return searchsorted(boundaries, values, out_int32=out_int32, right=right)
