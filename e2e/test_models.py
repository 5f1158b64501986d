"""Small models end to end: an MLP and a transformer block with attention."""
import math

import torch
import torch.nn.functional as F

from conftest import assert_compiled_matches


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 128),
            torch.nn.ReLU(), torch.nn.Linear(128, 10))

    def forward(self, x):
        return F.log_softmax(self.layers(x), dim=-1)


class TransformerBlock(torch.nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.ff = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                      torch.nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        attention = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        y = (attention @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.ff(self.ln2(x))


def test_mlp():
    assert_compiled_matches(MLP().eval(), torch.randn(32, 64), rtol=1e-4, atol=1e-4,
                            extern_calls=3)


def test_transformer_block():
    # 4 linear layers and 2 batched matmuls (scores, attention @ v) are library calls.
    assert_compiled_matches(TransformerBlock().eval(), torch.randn(2, 16, 64),
                            rtol=1e-4, atol=1e-4, extern_calls=6)
