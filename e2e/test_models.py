"""Small models end to end: an MLP and a transformer block with attention (the benchmark
suite's definitions, at test sizes)."""
import os
import sys

import pytest
import torch

from conftest import assert_compiled_matches

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from models import MLP, TransformerBlock  # noqa: E402

# Every case runs on the CPU target and on the Triton target (interpreted on CPU).
pytestmark = pytest.mark.usefixtures("each_target")


def test_mlp():
    model = MLP(inputs=64, hidden=128, classes=10).eval()
    assert_compiled_matches(model, torch.randn(32, 64), rtol=1e-4, atol=1e-4, extern_calls=3)


def test_transformer_block():
    # 4 linear layers and 2 batched matmuls (scores, attention @ v) are library calls.
    model = TransformerBlock(dim=64, heads=4, causal=True).eval()
    assert_compiled_matches(model, torch.randn(2, 16, 64), rtol=1e-4, atol=1e-4,
                            extern_calls=6)
