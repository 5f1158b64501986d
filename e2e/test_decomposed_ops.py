"""Ops torch-mlir cannot lower that Dyno decomposes (dyno/decompositions.py,
dyno/special_functions.py): compiled vs eager, with special values, on both targets."""
import pytest
import torch

from conftest import assert_compiled_matches

pytestmark = pytest.mark.usefixtures("each_target")

nan, inf = float("nan"), float("inf")


def test_uninitialized_tensors_with_strides_are_filled_in_place():
    # new_zeros/new_full create an empty_strided tensor and fill it: decomposed into an
    # empty tensor permuted to the strides, which eager's result strides must match.
    def fn(x):
        transposed = torch.empty_strided((3, 4, 5), (1, 15, 3)).fill_(2.0)
        return x.new_zeros((4, 6)), x.new_full((2, 3), 7.5), transposed * x[:3, :4, None]
    assert_compiled_matches(fn, torch.randn(5, 6))


def test_reductions_and_products_decomposed_by_pytorch():
    # addmv, dist, all/any over dims and narrow_copy use PyTorch's own decompositions.
    def fn(m, v, bias, a, b):
        return (torch.addmv(bias, m, v, beta=0.5, alpha=2.0), torch.dist(a, b),
                torch.dist(a, b, p=3), (a > 0).all(dim=1), (a > 1).any(dim=0),
                torch.narrow_copy(a, 1, 2, 4))
    assert_compiled_matches(fn, torch.randn(8, 5), torch.randn(5), torch.randn(8),
                            torch.randn(6, 7), torch.randn(6, 7), rtol=1e-4, atol=1e-5)
