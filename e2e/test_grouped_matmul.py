"""Grouped GEMMs (python/dyno/ops/grouped_matmul_decompositions.py): a mixture of experts'
per-expert products are PyTorch's grouped GEMM, a library call on both targets, whether
the graph holds aten._grouped_mm (bf16) or transformers' per-expert loop (float32)."""
import pytest
import torch

import dyno

GROUPED_MM = "aten._grouped_mm.default"


def _experts(dtype):
    torch.manual_seed(0)
    tokens = torch.randn(10, 16, dtype=dtype)
    weight = torch.randn(4, 16, 8, dtype=dtype)
    ends = torch.tensor([3, 3, 7, 10])  # expert 1 has no tokens
    reference = torch.cat([tokens[0:3].double() @ weight[0].double(),
                           tokens[3:7].double() @ weight[2].double(),
                           tokens[7:10].double() @ weight[3].double()])
    return tokens, weight, ends, reference


def _assert_one_library_call_per_product(count):
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    assert not stats["fallback_ops"], stats["fallback_ops"]
    assert stats["library_calls"].get(GROUPED_MM) == count, stats["library_calls"]


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_aten_grouped_mm_is_a_library_call(target):
    tokens, weight, ends, reference = _experts(torch.bfloat16)

    def experts(x, w, offs):
        return torch.relu(torch._grouped_mm(x, w, offs=offs.to(torch.int32))) * 2

    with torch.no_grad():
        want = experts(tokens, weight, ends)
        got = torch.compile(experts, backend="mlir", options={"target": target})(
            tokens, weight, ends)
    _assert_one_library_call_per_product(1)
    torch.testing.assert_close(got, want, rtol=0, atol=0)  # the same routine, after all
    torch.testing.assert_close(got.double(), torch.relu(reference) * 2, rtol=2e-2, atol=1e-1)


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_transformers_grouped_mm_fallback_is_the_grouped_gemm(target):
    moe = pytest.importorskip("transformers.integrations.moe")
    tokens, weight, ends, reference = _experts(torch.float32)

    def experts(x, w, offs):
        return torch.ops.transformers.grouped_mm_fallback(x, w, offs=offs) + 1.0

    assert hasattr(moe, "_grouped_mm_fallback")
    with torch.no_grad():
        want = experts(tokens, weight, ends)
        got = torch.compile(experts, backend="mlir", options={"target": target})(
            tokens, weight, ends)
    _assert_one_library_call_per_product(1)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert (got.double() - (reference + 1.0)).abs().max() <= \
        (want.double() - (reference + 1.0)).abs().max() * 1.5 + 1e-6


def test_triton_scatters_an_inverse_permutation_into_an_empty_tensor():
    """The positions a MoE layer restores its tokens' order with: `empty_like` with every
    element then scattered (its Triton kernel starts from its fresh result)."""
    def inverse_order(x):
        order = torch.argsort(x)
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(order.numel())
        return inverse

    x = torch.randn(37)
    got = torch.compile(inverse_order, backend="mlir", options={"target": "triton"})(x)
    assert torch.equal(got, inverse_order(x))
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0 and not stats["fallback_ops"], stats
