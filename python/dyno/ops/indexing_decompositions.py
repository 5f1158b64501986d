"""Ops torch-mlir cannot lower that place or count elements by position: strided
scatters, padded nonzero, histograms. Each becomes a scatter (dyno.scatter) of indices
computed with arange/cumsum/searchsorted, which Dyno compiles."""
import math

import torch

from .decompositions import decomposes, is_float

aten = torch.ops.aten


def _static(*values) -> bool:
    return all(isinstance(v, int) for v in values)


def _non_overlapping(size, stride) -> bool:
    """A strided view whose elements are all distinct (a sufficient test: each stride,
    in increasing order, exceeds the span of the smaller ones)."""
    span = 0
    for length, step in sorted(((l, s) for l, s in zip(size, stride) if l > 1),
                               key=lambda item: item[1]):
        if step <= span:
            return False
        span += (length - 1) * step
    return True


@decomposes(aten.as_strided_scatter.default)
def as_strided_scatter(x, src, size, stride, storage_offset=None):
    """x.clone() with src copied into its as_strided(size, stride, offset) view. For a
    contiguous x the clone is contiguous, so the view's elements are flat positions
    offset + sum(i_d * stride_d), written with one index_put. (The clone keeps other
    layouts, whose positions would follow x's strides: those stay eager.)"""
    offset = 0 if storage_offset is None else storage_offset
    if not _static(offset, *size, *stride) or not _non_overlapping(size, stride) or \
            not x.is_contiguous():
        return NotImplemented
    flat_index = torch.full((), offset, dtype=torch.int64, device=x.device)
    for d, (length, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = length
        positions = torch.arange(length, dtype=torch.int64, device=x.device) * step
        flat_index = flat_index + positions.view(shape)
    flat_index = flat_index.expand(size).reshape(-1)
    updated = torch.index_put(x.reshape(-1), (flat_index,), src.reshape(-1).to(x.dtype))
    return updated.view(x.shape)


@decomposes(aten.nonzero_static.default)
def nonzero_static(x, *, size, fill_value=-1):
    """The first `size` nonzero positions in row-major order, padded with fill_value:
    each nonzero element's rank among them (a cumsum) is its row; the others, and those
    beyond `size`, go to a spare row that is cut off."""
    if x.dim() == 0 or not _static(size, *x.shape):
        return NotImplemented
    nonzero = (x != 0).reshape(-1)
    count = nonzero.numel()
    rank = torch.cumsum(nonzero.to(torch.int64), 0) - 1
    rows = torch.where(nonzero & (rank < size), rank, size)
    flat = torch.arange(count, dtype=torch.int64, device=x.device)
    coordinates = []
    for d in range(x.dim()):
        inner = math.prod(x.shape[d + 1:])
        coordinates.append((flat // inner) % x.shape[d])
    table = torch.full((size + 1, x.dim()), fill_value, dtype=torch.int64, device=x.device)
    table = torch.index_put(table, (rows,), torch.stack(coordinates, 1))
    return table[:size]


def _linear_edges(column, bins, range):
    """The edges ATen's histogram computes for one dimension (see histogram_bin_ct)."""
    if range is None:
        left, right = torch.amin(column), torch.amax(column)
    else:
        left = torch.full((), float(range[0]), dtype=torch.float64, device=column.device)
        right = torch.full((), float(range[1]), dtype=torch.float64, device=column.device)
    left, right = left.to(torch.float64), right.to(torch.float64)
    empty = left == right
    left = torch.where(empty, left - 0.5, left).to(column.dtype)
    right = torch.where(empty, right + 0.5, right).to(column.dtype)
    # at::linspace as arithmetic_decompositions.linspace computes it (step in x's type, each
    # edge one fused multiply-add: exact in float64, then rounded once).
    steps = bins + 1
    step = ((right - left) / bins).to(torch.float64)
    index = torch.arange(steps, dtype=torch.float64, device=column.device)
    from_left = index * step + left.to(torch.float64)
    from_right = right.to(torch.float64) - (steps - 1 - index) * step
    return torch.where(index < steps // 2, from_left, from_right).to(column.dtype)


@decomposes(aten.histogram.bin_ct)
def histogram_bin_ct(x, bins=100, *, range=None, weight=None, density=False):
    """ATen's histogram (Histogram.cpp, histogramdd_cpu_contiguous with
    LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH): edges = linspace(left, right, bins + 1) of
    the range (or of min/max, widened by 0.5 each way when equal); an element in
    [edges[0], edges[-1]] (NaN is not) goes to upper_bound(edges, x) - 1, the last bin
    keeping its right edge; density divides by the total, then by the bin widths."""
    if not x.dtype.is_floating_point or x.numel() == 0 or not isinstance(bins, int):
        return NotImplemented
    flat = x.reshape(-1)
    edges = _linear_edges(flat, bins, range)
    return _histogram(flat, edges, weight, density)


@decomposes(aten.histogram.bins_tensor)
def histogram_bins_tensor(x, bins, *, weight=None, density=False):
    """histogram with given edges (ATen's BINARY_SEARCH: the same bins as above)."""
    if not x.dtype.is_floating_point or x.numel() == 0 or bins.dim() != 1 or \
            bins.shape[0] < 2 or bins.dtype != x.dtype:
        return NotImplemented
    return _histogram(x.reshape(-1), bins, weight, density)


def _histogram(flat, edges, weight, density):
    hist = _histogram_dd(flat[:, None], [edges], weight, density)
    return hist, edges


def _histogram_dd(points, edges, weight, density):
    """points (N, D), edges[d] (bins_d + 1): each point's bin (all coordinates inside
    their ranges, else a spare bin), weighted counts, density as ATen divides it."""
    sizes = [e.shape[0] - 1 for e in edges]
    inside = torch.ones(points.shape[0], dtype=torch.bool, device=points.device)
    flat_bin = torch.zeros(points.shape[0], dtype=torch.int64, device=points.device)
    for d, (edge, size) in enumerate(zip(edges, sizes)):
        coordinate = points[:, d]
        inside = inside & (coordinate >= edge[0]) & (coordinate <= edge[-1])
        position = torch.clamp(torch.searchsorted(edge, coordinate, right=True) - 1, 0, size - 1)
        flat_bin = flat_bin * size + position
    total = math.prod(sizes)
    flat_bin = torch.where(inside, flat_bin, total)
    counts = torch.ones_like(points[:, 0]) if weight is None else \
        weight.reshape(-1).to(points.dtype)
    hist = torch.zeros(total + 1, dtype=points.dtype, device=points.device)
    hist = hist.index_add(0, flat_bin, counts)[:total].view(sizes)
    if density:
        hist = hist / hist.sum()
        for d, edge in enumerate(edges):
            shape = [1] * len(sizes)
            shape[d] = sizes[d]
            hist = hist / (edge[1:] - edge[:-1]).view(shape)
    return hist


def _points(x):
    return x.reshape(-1, x.shape[-1])


def _dd_supported(x, bins) -> bool:
    return (x.dtype.is_floating_point and x.dim() >= 1 and x.numel() > 0 and
            len(bins) == x.shape[-1])


@decomposes(aten._histogramdd_bin_edges.default)
def histogramdd_bin_edges(x, bins, *, range=None, weight=None, density=False):
    if not _dd_supported(x, bins) or not all(isinstance(b, int) for b in bins):
        return NotImplemented
    points = _points(x)
    return [_linear_edges(points[:, d], b, None if range is None else range[2 * d:2 * d + 2])
            for d, b in enumerate(bins)]


@decomposes(aten._histogramdd_from_bin_cts.default)
def histogramdd_from_bin_cts(x, bins, *, range=None, weight=None, density=False):
    edges = histogramdd_bin_edges(x, bins, range=range, weight=weight, density=density)
    if edges is NotImplemented:
        return NotImplemented
    return _histogram_dd(_points(x), edges, weight, density)


@decomposes(aten._histogramdd_from_bin_tensors.default)
def histogramdd_from_bin_tensors(x, bins, *, weight=None, density=False):
    if not _dd_supported(x, bins) or any(b.dim() != 1 or b.shape[0] < 2 for b in bins):
        return NotImplemented
    return _histogram_dd(_points(x), list(bins), weight, density)


@decomposes(aten.index_put.default)
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


@decomposes(aten.put.default)
def put(x, index, source, accumulate=False):
    """`x` flattened, `source` written (or added) at `index` (negative counts from the
    end), reshaped back: index_put on one dimension, which Dyno compiles and
    bounds-checks like eager."""
    flat = aten.reshape.default(x, [-1])
    positions = aten.reshape.default(index, [-1])
    values = aten.reshape.default(source, [-1])
    return aten.reshape.default(index_put(flat, [positions], values, accumulate),
                                list(x.shape))


@decomposes(aten.index_reduce.default)
def index_reduce(x, dim, index, source, reduce, include_self=True):
    """index_reduce is scatter_reduce with the index of each slice of `source` along
    `dim` broadcast over the slice (same reductions, same `include_self`; mean counts
    the original as one element in both)."""
    if not is_float(x):
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


@decomposes(aten.diagonal_scatter.default)
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


@decomposes(aten.scatter.reduce, aten.scatter.value_reduce)
def scatter_reduce_deprecated(x, dim, index, src, reduce):
    """scatter's deprecated `reduce` argument ("add", "multiply") is scatter_reduce with
    the original included, which torch-mlir lowers (it has no lowering of this form)."""
    if not isinstance(src, torch.Tensor):
        src = torch.full(index.shape, src, dtype=x.dtype, device=x.device)
    return aten.scatter_reduce.two(x, dim, index, src, _SCATTER_REDUCTIONS[reduce],
                                   include_self=True)


@decomposes(aten.histc.default)
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
