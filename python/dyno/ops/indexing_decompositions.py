"""Ops torch-mlir cannot lower that place or count elements by position: strided
scatters, padded nonzero, histograms. Each becomes a scatter (dyno.scatter) of indices
computed with arange/cumsum/searchsorted, which Dyno compiles."""
import math

import torch

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
    # at::linspace as dyno.decompositions.linspace computes it (step in x's type, each
    # edge one fused multiply-add: exact in float64, then rounded once).
    steps = bins + 1
    step = ((right - left) / bins).to(torch.float64)
    index = torch.arange(steps, dtype=torch.float64, device=column.device)
    from_left = index * step + left.to(torch.float64)
    from_right = right.to(torch.float64) - (steps - 1 - index) * step
    return torch.where(index < steps // 2, from_left, from_right).to(column.dtype)


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


def histogramdd_bin_edges(x, bins, *, range=None, weight=None, density=False):
    if not _dd_supported(x, bins) or not all(isinstance(b, int) for b in bins):
        return NotImplemented
    points = _points(x)
    return [_linear_edges(points[:, d], b, None if range is None else range[2 * d:2 * d + 2])
            for d, b in enumerate(bins)]


def histogramdd_from_bin_cts(x, bins, *, range=None, weight=None, density=False):
    edges = histogramdd_bin_edges(x, bins, range=range, weight=weight, density=density)
    if edges is NotImplemented:
        return NotImplemented
    return _histogram_dd(_points(x), edges, weight, density)


def histogramdd_from_bin_tensors(x, bins, *, weight=None, density=False):
    if not _dd_supported(x, bins) or any(b.dim() != 1 or b.shape[0] < 2 for b in bins):
        return NotImplemented
    return _histogram_dd(_points(x), list(bins), weight, density)


def table():
    return {
        aten.as_strided_scatter.default: as_strided_scatter,
        aten.nonzero_static.default: nonzero_static,
        aten.histogram.bin_ct: histogram_bin_ct,
        aten.histogram.bins_tensor: histogram_bins_tensor,
        aten._histogramdd_bin_edges.default: histogramdd_bin_edges,
        aten._histogramdd_from_bin_cts.default: histogramdd_from_bin_cts,
        aten._histogramdd_from_bin_tensors.default: histogramdd_from_bin_tensors,
    }
