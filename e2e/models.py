"""The CPU benchmark suite: small models that exercise fusion, reductions and libraries.

The e2e tests use the same model definitions at smaller sizes.
"""
import math

import torch
import torch.nn.functional as F


class MLP(torch.nn.Module):
    def __init__(self, inputs=512, hidden=1024, classes=10):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(inputs, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, hidden),
            torch.nn.ReLU(), torch.nn.Linear(hidden, classes))

    def forward(self, x):
        return F.log_softmax(self.net(x), dim=-1)


class NormActBlock(torch.nn.Module):
    """layernorm + GELU + softmax: pointwise and reduction heavy."""

    def __init__(self, dim=1024):
        super().__init__()
        self.ln = torch.nn.LayerNorm(dim)

    def forward(self, x):
        return torch.softmax(F.gelu(self.ln(x)), dim=-1)


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1))
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class TransformerBlock(torch.nn.Module):
    def __init__(self, dim=256, heads=4, causal=False):
        super().__init__()
        self.heads = heads
        self.causal = causal
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.ff = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                      torch.nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for y in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        if self.causal:
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
            scores = scores.masked_fill(mask, float("-inf"))
        attention = torch.softmax(scores, dim=-1)
        y = (attention @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.ff(self.ln2(x))


def suite():
    """(name, model, example inputs) at CPU-sized shapes."""
    return [
        ("mlp", MLP(), (torch.randn(64, 512),)),
        ("layernorm_gelu_softmax", NormActBlock(), (torch.randn(256, 1024),)),
        # The same block on 2048 tokens: 8 MiB activations no longer fit in cache.
        ("layernorm_gelu_softmax_2048", NormActBlock(), (torch.randn(2048, 1024),)),
        ("small_cnn", SmallCNN(), (torch.randn(8, 3, 32, 32),)),
        ("transformer_block", TransformerBlock(), (torch.randn(4, 128, 256),)),
    ]
