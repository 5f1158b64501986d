"""Keys and values repeated for grouped-query attention (transformers' repeat_kv) are read
unrepeated by the Triton target's bf16/fp16 attention, with enable_gqa=True
(python/dyno/capture/grouped_query_attention.py): the copy kernel goes, the result is
eager's; float32 attention, and repeats of different groupings, stay as they are."""
import pytest
import torch
import torch.nn.functional as F

import dyno


def _repeat_kv(x, groups):
    batch, heads, length, dim = x.shape
    return x[:, :, None, :, :].expand(batch, heads, groups, length, dim).reshape(
        batch, heads * groups, length, dim)


class _GroupedQueryAttention(torch.nn.Module):
    """4 query heads over 2 key/value heads of 16 (Llama's attention, without rotary
    embedding); `tiled_values`: the values' heads tiled (v0 v1 v0 v1), not repeated per
    group (v0 v0 v1 v1) as the keys are: no fold. `window`: a sliding-window mask of
    that many positions (Mistral's beyond its window): no fold either."""

    def __init__(self, tiled_values=False, window=None):
        super().__init__()
        self.q = torch.nn.Linear(32, 64)
        self.kv = torch.nn.Linear(32, 64)
        self.tiled_values, self.window = tiled_values, window

    def forward(self, x):
        batch, length, _ = x.shape
        q = self.q(x).view(batch, length, 4, 16).transpose(1, 2)
        k, v = self.kv(x).view(batch, length, 2, 2, 16).permute(2, 0, 3, 1, 4)
        v = torch.cat([v, v], dim=1) if self.tiled_values else _repeat_kv(v, 2)
        if self.window is None:
            out = F.scaled_dot_product_attention(q, _repeat_kv(k, 2), v, is_causal=True)
        else:
            rows = torch.arange(length, device=x.device)[:, None]
            columns = torch.arange(length, device=x.device)[None, :]
            mask = (columns <= rows) & (rows - columns < self.window)
            out = F.scaled_dot_product_attention(q, _repeat_kv(k, 2), v, attn_mask=mask)
        return out.transpose(1, 2).reshape(batch, length, 64)


def _compile(model, x):
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="mlir", options={"target": "triton"})(x)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    assert stats["runtime_fallbacks"] == 0, stats
    return got, want, stats


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_attention_reads_keys_and_values_unrepeated(dtype):
    torch.manual_seed(0)
    model = _GroupedQueryAttention().to(dtype).eval()
    got, want, stats = _compile(model, torch.randn(2, 12, 32, dtype=dtype))
    assert stats.get("grouped_query_attention") == 1, stats
    torch.testing.assert_close(got, want, rtol=1.6e-2, atol=1e-2)


def test_float32_attention_keeps_its_repeats():
    torch.manual_seed(0)
    model = _GroupedQueryAttention().eval()
    got, want, stats = _compile(model, torch.randn(2, 12, 32))
    assert "grouped_query_attention" not in stats, stats
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_values_tiled_otherwise_stay():
    torch.manual_seed(0)
    model = _GroupedQueryAttention(tiled_values=True).to(torch.bfloat16).eval()
    got, want, stats = _compile(model, torch.randn(2, 12, 32, dtype=torch.bfloat16))
    assert "grouped_query_attention" not in stats, stats
    torch.testing.assert_close(got, want, rtol=1.6e-2, atol=1e-2)


def test_attention_under_a_mask_keeps_its_repeats():
    torch.manual_seed(0)
    model = _GroupedQueryAttention(window=4).to(torch.bfloat16).eval()
    got, want, stats = _compile(model, torch.randn(2, 12, 32, dtype=torch.bfloat16))
    assert "grouped_query_attention" not in stats, stats
    torch.testing.assert_close(got, want, rtol=1.6e-2, atol=1e-2)
