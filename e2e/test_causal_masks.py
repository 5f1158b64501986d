"""Attention under a constant causal mask runs as causal attention
(python/dyno/capture/causal_masks.py): the mask transformers' decoders build from
`arange`s is recognized, its kernels go, and the result is eager's; any other mask (a
sliding window, a non-square one, one read from the inputs) stays as it is."""
import pytest
import torch
import torch.nn.functional as F

import dyno
from dyno.capture.causal_masks import _is_causal_mask


class _MaskedDecoderAttention(torch.nn.Module):
    """Attention under a mask built in forward, as transformers' sdpa_mask builds it:
    `form` is "-inf" or "lowest" (additive) or "bool"; `window`: a sliding window of
    that many positions (Mistral's), None for causal only."""

    def __init__(self, form: str, window=None, keys=None):
        super().__init__()
        self.form, self.window, self.keys = form, window, keys
        self.qkv = torch.nn.Linear(32, 96)

    def forward(self, x):
        batch, length, _ = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, 2, 16).permute(2, 0, 3, 1, 4)
        if self.keys is not None:  # fewer queries than keys (L != S)
            q = q[:, :, :self.keys]
        rows = torch.arange(q.shape[2], device=x.device)[:, None]
        columns = torch.arange(length, device=x.device)[None, :]
        allowed = columns <= rows
        if self.window is not None:
            allowed = allowed & (rows - columns < self.window)
        if self.form == "bool":
            mask = allowed
        else:
            low = float("-inf") if self.form == "-inf" else torch.finfo(x.dtype).min
            mask = torch.where(allowed, 0.0, low).to(x.dtype)
        mask = mask[None, None].expand(batch, 1, -1, -1)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return out.transpose(1, 2).reshape(batch, q.shape[2], 32) * 2.0


def _compile_and_compare(model, x, target, rtol, atol):
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="mlir", options={"target": target})(x)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    assert stats["runtime_fallbacks"] == 0, stats
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol)
    return stats


@pytest.mark.parametrize("target", ["cpu", "triton"])
@pytest.mark.parametrize("form", ["-inf", "lowest", "bool"])
def test_a_constant_causal_mask_becomes_causal_attention(target, form):
    torch.manual_seed(0)
    model = _MaskedDecoderAttention(form).eval()
    stats = _compile_and_compare(model, torch.randn(2, 12, 32), target, 1e-5, 1e-5)
    assert stats.get("causal_masks") == 1, stats
    # The mask's kernel is gone: one kernel for the bias add, one for the scaling.
    assert stats["kernels"] <= 2, stats


def test_a_bf16_causal_mask_becomes_causal_attention():
    torch.manual_seed(0)
    model = _MaskedDecoderAttention("lowest").to(torch.bfloat16).eval()
    x = torch.randn(2, 12, 32, dtype=torch.bfloat16)
    stats = _compile_and_compare(model, x, "cpu", 1.6e-2, 1e-2)
    assert stats.get("causal_masks") == 1, stats


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_a_sliding_window_mask_stays_a_mask(target):
    model = _MaskedDecoderAttention("-inf", window=4).eval()
    stats = _compile_and_compare(model, torch.randn(2, 12, 32), target, 1e-5, 1e-5)
    assert stats.get("causal_masks", 0) == 0, stats


def test_a_non_square_causal_mask_stays_a_mask():
    """With fewer queries than keys, upper-left and lower-right causal alignments differ:
    the mask stays."""
    model = _MaskedDecoderAttention("-inf", keys=8).eval()
    stats = _compile_and_compare(model, torch.randn(2, 12, 32), "cpu", 1e-5, 1e-5)
    assert stats.get("causal_masks", 0) == 0, stats


class _PaddedAttention(torch.nn.Module):
    """A causal mask combined with the inputs' padding: it depends on an input."""

    def forward(self, q, k, v, keep):
        length = q.shape[2]
        allowed = torch.ones(length, length, dtype=torch.bool).tril() & keep[:, None, None, :]
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)


def test_a_mask_read_from_the_inputs_stays_a_mask():
    q, k, v = (torch.randn(2, 2, 6, 8) for _ in range(3))
    keep = torch.ones(2, 6, dtype=torch.bool)
    keep[1, 4:] = False
    model = _PaddedAttention()
    with torch.no_grad():
        want = model(q, k, v, keep)
        got = torch.compile(model, backend="mlir", options={"target": "cpu"})(q, k, v, keep)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert dyno.stats().get("causal_masks", 0) == 0


def test_causal_mask_recognition():
    allowed = torch.ones(5, 5, dtype=torch.bool).tril()
    additive = torch.zeros(5, 5).masked_fill(~allowed, float("-inf"))
    assert _is_causal_mask(allowed, 5, 5)
    assert _is_causal_mask(additive.expand(3, 1, 5, 5), 5, 5)
    assert _is_causal_mask(torch.zeros(5, 5).masked_fill(~allowed, torch.finfo().min), 5, 5)
    assert not _is_causal_mask(allowed, 5, 6)
    assert not _is_causal_mask(additive.masked_fill(~allowed, -1e4), 5, 5)  # not exact
    shifted = allowed.clone()
    shifted[3, 0] = False  # one position of a window
    assert not _is_causal_mask(shifted, 5, 5)
    batched = torch.stack([allowed, shifted])
    assert not _is_causal_mask(batched, 5, 5)  # every batch must be causal
    assert not _is_causal_mask(allowed.long(), 5, 5)


def test_cpu_training_under_a_causal_mask_matches_eager_gradients():
    """The forward runs causal attention; the backward kernel reads the forward's saved
    logsumexp (the same function's) and the mask: eager's gradients."""
    torch.manual_seed(0)
    model = _MaskedDecoderAttention("lowest")
    x = torch.randn(2, 12, 32, requires_grad=True)
    want = torch.autograd.grad(model(x).square().sum(), [x, *model.parameters()])
    compiled = torch.compile(model, backend="mlir", options={"target": "cpu"})
    got = torch.autograd.grad(compiled(x).square().sum(), [x, *model.parameters()])
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0 and stats.get("compiled_backward_graphs") == 1, stats
    assert stats.get("causal_masks") == 1, stats


def test_the_causal_masks_option_off_leaves_the_mask():
    model = _MaskedDecoderAttention("-inf").eval()
    x = torch.randn(2, 12, 32)
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="mlir",
                            options={"target": "cpu", "causal_masks": False})(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0 and stats.get("causal_masks", 0) == 0, stats
