"""A query scaled by a constant before attention runs as attention's own scale
(python/dyno/capture/attention_scales.py): OPT's and BART's `q_proj(x) * scaling` loses
its kernel, the result is eager's (bit for bit where the factor is a power of two), and
at least as close to float64 as eager's otherwise; a scaled query something else reads
too, and training graphs, stay as they are."""
import pytest
import torch
import torch.nn.functional as F

import dyno


class _ScaledQueryAttention(torch.nn.Module):
    """OPT's attention: the query projection scaled by `factor` (head_dim ** -0.5 by
    default), attention with `scale` (OPT passes 1.0). `keep_scaled`: the scaled query is
    also added to the output (a second reader: no fold)."""

    def __init__(self, factor=None, scale=1.0, keep_scaled=False, factor_first=False):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(32, 32) for _ in range(3))
        self.factor = 16 ** -0.5 if factor is None else factor
        self.scale, self.keep_scaled, self.factor_first = scale, keep_scaled, factor_first

    def forward(self, x):
        batch, length, _ = x.shape
        projected = self.q(x)
        q = self.factor * projected if self.factor_first else projected * self.factor
        heads = lambda t: t.view(batch, length, 2, 16).transpose(1, 2)
        out = F.scaled_dot_product_attention(heads(q), heads(self.k(x)), heads(self.v(x)),
                                             is_causal=True, scale=self.scale)
        out = out.transpose(1, 2).reshape(batch, length, 32)
        return out + q if self.keep_scaled else out


def _compile(model, x, target):
    with torch.no_grad():
        got = torch.compile(model, backend="mlir", options={"target": target})(x)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    assert stats["runtime_fallbacks"] == 0, stats
    return got, stats


@pytest.mark.parametrize("target", ["cpu", "triton"])
@pytest.mark.parametrize("factor_first", [False, True])
def test_a_scaled_query_becomes_attentions_scale(target, factor_first):
    torch.manual_seed(0)
    model = _ScaledQueryAttention(factor_first=factor_first).eval()
    x = torch.randn(2, 12, 32)
    with torch.no_grad():
        want = model(x)
    got, stats = _compile(model, x, target)
    assert stats.get("attention_scales") == 1, stats
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_a_bf16_scaled_query_folds_through_its_rounding(target):
    torch.manual_seed(0)
    model = _ScaledQueryAttention().to(torch.bfloat16).eval()
    x = torch.randn(2, 12, 32, dtype=torch.bfloat16)
    with torch.no_grad():
        want = model(x)
    got, stats = _compile(model, x, target)
    assert stats.get("attention_scales") == 1, stats
    torch.testing.assert_close(got, want, rtol=1.6e-2, atol=1e-2)


def test_a_factor_that_is_not_a_power_of_two_is_at_least_as_accurate_as_eager():
    torch.manual_seed(0)
    # scale=None: attention's default 1/sqrt(16) times the query's 0.3.
    model = _ScaledQueryAttention(factor=0.3, scale=None).to(torch.bfloat16).eval()
    x = torch.randn(4, 32, 32, dtype=torch.bfloat16)
    reference = _ScaledQueryAttention(factor=0.3, scale=None).double().eval()
    reference.load_state_dict(model.state_dict())
    with torch.no_grad():
        want = reference(x.double())
        eager_error = (model(x).double() - want).abs().max().item()
    got, stats = _compile(model, x, "cpu")
    assert stats.get("attention_scales") == 1, stats
    compiled_error = (got.double() - want).abs().max().item()
    assert compiled_error <= eager_error * 1.05, (compiled_error, eager_error)


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_a_scaled_query_read_elsewhere_stays(target):
    torch.manual_seed(0)
    model = _ScaledQueryAttention(keep_scaled=True).eval()
    x = torch.randn(2, 12, 32)
    with torch.no_grad():
        want = model(x)
    got, stats = _compile(model, x, target)
    assert "attention_scales" not in stats, stats
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_training_keeps_the_scaled_query_and_matches_eager_gradients():
    torch.manual_seed(0)
    model = _ScaledQueryAttention()
    x = torch.randn(2, 12, 32, requires_grad=True)
    want = model(x)
    want.sum().backward()
    want_grads = [x.grad.clone()] + [p.grad.clone() for p in model.parameters()]
    x.grad = None
    model.zero_grad()
    got = torch.compile(model, backend="mlir", options={"target": "cpu"})(x)
    got.sum().backward()
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    assert "attention_scales" not in stats, stats
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    for got_grad, want_grad in zip([x.grad] + [p.grad for p in model.parameters()],
                                   want_grads):
        torch.testing.assert_close(got_grad, want_grad, rtol=1e-4, atol=1e-5)
