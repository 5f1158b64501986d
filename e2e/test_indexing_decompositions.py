"""Strided scatters, padded nonzero and histograms (dyno/indexing_decompositions.py):
compiled vs eager on both targets."""
import pytest
import torch

from conftest import assert_compiled_matches

pytestmark = pytest.mark.usefixtures("each_target")

nan, inf = float("nan"), float("inf")


def test_as_strided_scatter_writes_the_strided_view_of_a_contiguous_clone():
    # An offset, a step of 3, a size-1 dimension, a view of the input's flat layout.
    def fn(x, src, other):
        return (torch.as_strided_scatter(x, src, (3, 2), (4, 1), 1),
                torch.as_strided_scatter(x, src.t(), (2, 3), (1, 3), 2),
                torch.as_strided_scatter(other, src[:1], (1, 2), (5, 3)))
    assert_compiled_matches(fn, torch.randn(4, 5), torch.randn(3, 2), torch.randn(10),
                            rtol=0, atol=0)


def test_nonzero_static_pads_and_truncates_in_row_major_order():
    x = torch.tensor([[0.0, 1.5, 0.0, -2.0], [nan, 0.0, -0.0, 3.0], [0.0, 0.0, inf, 1.0]])

    def fn(x, flags):
        return (torch.nonzero_static(x, size=9), torch.nonzero_static(x, size=3, fill_value=7),
                torch.nonzero_static(flags, size=5), torch.nonzero_static(x[0], size=2))
    assert_compiled_matches(fn, x, torch.rand(2, 3, 4) > 0.5)


def test_histogram_bins_edges_weights_and_density_as_aten():
    # Values on the edges (the last bin keeps its right edge), outside the range, NaN
    # (skipped), all-equal input (the range widens by 0.5), weights, density.
    x = torch.cat([torch.randn(200), torch.tensor([-1.0, 0.0, 1.0, 2.0, nan, 5.0, -5.0])])
    edges = torch.tensor([-1.0, -0.25, 0.0, 0.5, 2.0])

    def fn(x, weight, edges, flat):
        return (*torch.histogram(x, 8, range=(-1.0, 2.0)),
                *torch.histogram(x[:200], 5, weight=weight, density=True),
                *torch.histogram(x, edges, weight=torch.ones_like(x) * 0.5),
                *torch.histogram(flat, 4, density=True),
                *torch.histogram(x[:200].view(20, 10), 7))
    assert_compiled_matches(fn, x, torch.rand(200), edges, torch.full((6,), 3.0),
                            rtol=1e-5, atol=1e-6)


def test_histogramdd_with_counts_ranges_and_edges():
    points = torch.cat([torch.randn(100, 3), torch.tensor([[0.0, 1.0, nan], [5.0, 0.0, 0.0]])])
    edges = [torch.tensor([-1.0, 0.0, 1.0]), torch.tensor([-2.0, -0.5, 0.5, 2.0]),
             torch.tensor([-3.0, 3.0])]

    # (Without a range, eager rejects NaN coordinates: its range comes from min/max.)
    def fn(points, weight, a, b, c):
        hist, bin_edges = torch.histogramdd(points[:100], [3, 4, 2])
        ranged, _ = torch.histogramdd(points, [2, 2, 5], range=[-1.0, 1.0, 0.0, 2.0, -3.0, 0.0],
                                      weight=weight, density=True)
        given, _ = torch.histogramdd(points, [a, b, c])
        return hist, *bin_edges, ranged, given
    assert_compiled_matches(fn, points, torch.rand(102), *edges, rtol=1e-5, atol=1e-6)
