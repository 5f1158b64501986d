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


def histogram_bin_ct(x, bins=100, *, range=None, weight=None, density=False):
    """ATen's histogram (Histogram.cpp, histogramdd_cpu_contiguous with
    LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH): edges = linspace(left, right, bins + 1) of
    the range (or of min/max, widened by 0.5 each way when equal); an element in
    [edges[0], edges[-1]] (NaN is not) goes to upper_bound(edges, x) - 1, the last bin
    keeping its right edge; density divides by the total, then by the bin widths."""
    if not x.dtype.is_floating_point or x.numel() == 0 or not isinstance(bins, int):
        return NotImplemented
    flat = x.reshape(-1)
    if range is None:
        left, right = torch.amin(flat), torch.amax(flat)
    else:
        left = torch.full((), float(range[0]), dtype=torch.float64, device=x.device)
        right = torch.full((), float(range[1]), dtype=torch.float64, device=x.device)
    left, right = left.to(torch.float64), right.to(torch.float64)
    empty = left == right
    left = torch.where(empty, left - 0.5, left).to(x.dtype)
    right = torch.where(empty, right + 0.5, right).to(x.dtype)
    # at::linspace as dyno.decompositions.linspace computes it (step in x's type, each
    # edge one fused multiply-add: exact in float64, then rounded once).
    steps = bins + 1
    step = ((right - left) / bins).to(torch.float64)
    index = torch.arange(steps, dtype=torch.float64, device=x.device)
    from_left = index * step + left.to(torch.float64)
    from_right = right.to(torch.float64) - (steps - 1 - index) * step
    edges = torch.where(index < steps // 2, from_left, from_right).to(x.dtype)
    return _histogram(flat, edges, weight, density)


def histogram_bins_tensor(x, bins, *, weight=None, density=False):
    """histogram with given edges (ATen's BINARY_SEARCH: the same bins as above)."""
    if not x.dtype.is_floating_point or x.numel() == 0 or bins.dim() != 1 or \
            bins.shape[0] < 2 or bins.dtype != x.dtype:
        return NotImplemented
    return _histogram(x.reshape(-1), bins, weight, density)


def _histogram(flat, edges, weight, density):
    bins = edges.shape[0] - 1
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    position = torch.searchsorted(edges, flat, right=True) - 1
    position = torch.clamp(position, 0, bins - 1)
    position = torch.where(inside, position, bins)  # a spare bin for the others
    counts = torch.ones_like(flat) if weight is None else weight.reshape(-1).to(flat.dtype)
    hist = torch.zeros(bins + 1, dtype=flat.dtype, device=flat.device)
    hist = hist.index_add(0, position, counts)
    hist = hist[:bins]
    if density:
        hist = hist / hist.sum()
        hist = hist / (edges[1:] - edges[:-1])
    return hist, edges


def table():
    return {
        aten.as_strided_scatter.default: as_strided_scatter,
        aten.nonzero_static.default: nonzero_static,
        aten.histogram.bin_ct: histogram_bin_ct,
        aten.histogram.bins_tensor: histogram_bins_tensor,
    }
