"""Small models end to end: an MLP and a transformer block with attention (the benchmark
suite's definitions, at test sizes)."""
import copy
import os
import sys

import pytest
import torch

import dyno
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


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_mlp_and_transformer_block_in_low_precision(dtype):
    """bf16/fp16 parameters and inputs: kernels compute in float32 and round at stores,
    matmuls are library calls in the low precision (the linear layers' biases inside
    addmm), and the results are no less accurate than eager against float64."""
    def check(model, x, extern_calls):
        model.to(dtype)
        low = x.to(dtype)
        # The same (rounded) weights and inputs, computed in float64.
        reference = copy.deepcopy(model).double()(low.double())
        tolerance = 2e-2 if dtype == torch.bfloat16 else 2e-3
        got = assert_compiled_matches(model, low, rtol=tolerance, atol=tolerance,
                                      extern_calls=extern_calls)
        with torch.no_grad():
            eager = model(low)
        error = lambda t: ((t.double() - reference).norm() / reference.norm()).item()
        assert error(got) <= 1.25 * error(eager), (error(got), error(eager))

    with torch.no_grad():
        check(MLP(inputs=64, hidden=128, classes=10).eval(), torch.randn(32, 64), 3)
        torch._dynamo.reset()
        dyno.reset_stats()
        check(TransformerBlock(dim=64, heads=4, causal=True).eval(), torch.randn(2, 16, 64), 6)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_small_cnn_in_low_precision(dtype):
    """A bf16/fp16 CNN: convolutions and the linear layer are library calls in the low
    precision (they were direct-loop kernels: 25x slower than eager on an H100), batch
    norm and ReLU run in float32 between them, and max pooling is exact (in bf16 it
    read every window as -inf under Triton's interpreter, which compares bf16 blocks by
    their bits)."""
    from models import SmallCNN

    model = SmallCNN().eval().to(dtype)
    x = torch.randn(4, 3, 16, 16).to(dtype)
    tolerance = 2e-2 if dtype == torch.bfloat16 else 2e-3
    with torch.no_grad():
        assert_compiled_matches(model, x, rtol=tolerance, atol=tolerance, extern_calls=3)
        torch._dynamo.reset()
        dyno.reset_stats()
        pool = lambda t: torch.nn.functional.max_pool2d(torch.relu(t), 3, 2, 1)
        assert_compiled_matches(pool, torch.randn(2, 4, 8, 8).to(dtype), rtol=0, atol=0)
