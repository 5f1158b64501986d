"""Scaled dot-product attention. On the CPU target it stays one operation, PyTorch's fused
flash kernels as dyno.library_calls, forward and backward (library_calls.ATTENTION_OPS).
The Triton target, whose exports run on GPUs, never calls the CPU-only kernels: inference
calls aten.scaled_dot_product_attention (PyTorch's kernel for the device the program runs
on), training graphs compute it with Dyno's decomposition (attention_decompositions.py)."""
import os
import re
import tempfile

import pytest
import torch
import torch.nn.functional as F

import dyno

FLASH = "aten._scaled_dot_product_flash_attention_for_cpu.default"
FLASH_BACKWARD = "aten._scaled_dot_product_flash_attention_for_cpu_backward.default"
DEVICE_ATTENTION = "aten.scaled_dot_product_attention.default"
VARIANTS = ["causal", "additive_mask", "boolean_mask", "grouped_query", "scaled"]


def _inputs(variant, dtype, requires_grad=False):
    heads, kv_heads = (4, 2) if variant == "grouped_query" else (4, 4)
    q = torch.randn(2, heads, 9, 16, dtype=dtype, requires_grad=requires_grad)
    k = torch.randn(2, kv_heads, 11, 16, dtype=dtype, requires_grad=requires_grad)
    v = torch.randn(2, kv_heads, 11, 16, dtype=dtype, requires_grad=requires_grad)
    mask = {"additive_mask": torch.randn(9, 11, dtype=dtype),
            "boolean_mask": torch.rand(9, 11) > 0.3}.get(variant)
    return (q, k, v), mask


def _attention(variant, mask):
    def attention(q, k, v):
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=variant == "causal",
            scale=0.3 if variant == "scaled" else None,
            enable_gqa=variant == "grouped_query")
        return out * 2.0 + 1.0  # a kernel after the call
    return attention


def _assert_compiled_whole():
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    assert stats.get("partially_compiled_graphs", 0) == 0, stats["fallback_ops"]
    assert stats["runtime_fallbacks"] == 0, stats
    return stats


def _assert_gradients_match_eager(loss, inputs, rtol, atol):
    """Gradients of `loss` compiled for the CPU match eager's; returns dyno.stats()."""
    want = torch.autograd.grad(loss(*inputs), inputs)
    compiled = torch.compile(loss, backend="mlir", options={"target": "cpu"})
    got = torch.autograd.grad(compiled(*inputs), inputs)
    for name, g, w in zip("qkv", got, want):
        torch.testing.assert_close(g, w, rtol=rtol, atol=atol, msg=f"gradient of {name}")
    return _assert_compiled_whole()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_cpu_attention_is_the_flash_kernel(variant, dtype):
    """The same kernel as eager, so the same bits; one call, no [N, H, L, S] scores."""
    (q, k, v), mask = _inputs(variant, dtype)
    attention = _attention(variant, mask)
    with torch.no_grad():
        want = attention(q, k, v)
        got = torch.compile(attention, backend="mlir", options={"target": "cpu"})(q, k, v)
    stats = _assert_compiled_whole()
    assert stats["library_calls"] == {FLASH: 1}, stats["library_calls"]
    assert stats["cpu_graphs"] == 1 and stats["kernels"] >= 1, stats
    assert got.dtype == want.dtype and got.stride() == want.stride()
    assert torch.equal(got, want)


@pytest.mark.parametrize("variant", VARIANTS)
def test_cpu_attention_training_calls_the_flash_backward(variant):
    """The forward saves the flash kernel's logsumexp and the backward graph calls its
    backward kernel with it: gradients as eager's."""
    (q, k, v), mask = _inputs(variant, torch.float32, requires_grad=True)
    attention = _attention(variant, mask)

    def loss(q, k, v):
        out = attention(q, k, v)
        return (out * out.sin()).sum()

    stats = _assert_gradients_match_eager(loss, (q, k, v), rtol=1e-4, atol=1e-5)
    assert stats.get("compiled_backward_graphs", 0) == 1, stats
    assert stats["library_calls"] == {FLASH: 1, FLASH_BACKWARD: 1}, stats["library_calls"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_triton_inference_attention_is_pytorchs_device_kernel(variant):
    """The Triton target's inference graphs call aten.scaled_dot_product_attention, which
    PyTorch dispatches per device when the program runs (flash on CUDA; the fused CPU
    kernel here): eager's own result, and no [N, H, L, S] scores in Dyno's kernels."""
    (q, k, v), mask = _inputs(variant, torch.float32)
    attention = _attention(variant, mask)
    with torch.no_grad():
        want = attention(q, k, v)
        got = torch.compile(attention, backend="mlir", options={"target": "triton"})(q, k, v)
    stats = _assert_compiled_whole()
    assert stats["library_calls"] == {DEVICE_ATTENTION: 1}, stats["library_calls"]
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("variant", ["causal", "grouped_query"])
def test_triton_training_decomposes_attention(variant):
    """A training graph's backward reads the forward's logsumexp: both are Dyno's
    decomposition (attention_decompositions.py), and no attention library call is made."""
    inputs, mask = _inputs(variant, torch.float32, requires_grad=True)
    attention = _attention(variant, mask)

    def loss(q, k, v):
        return attention(q, k, v).square().sum()
    want = torch.autograd.grad(loss(*inputs), inputs)
    compiled = torch.compile(loss, backend="mlir", options={"target": "triton"})
    got = torch.autograd.grad(compiled(*inputs), inputs)
    for name, g, w in zip("qkv", got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4, msg=f"gradient of {name}")
    stats = _assert_compiled_whole()
    assert not stats.get("library_calls"), stats["library_calls"]


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(32, 96)

    def forward(self, x):
        q, k, v = self.qkv(x).view(2, 7, 3, 2, 16).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_gpu_export_has_no_cpu_attention_call():
    """export_triton traces on CPU tensors, where attention is the CPU flash kernel: the
    export must call the device-generic op, which runs on the GPU, not the CPU-only one."""
    from dyno.targets.triton import runtime as triton_runtime

    model, x = _Block().eval(), torch.randn(2, 7, 32)
    with tempfile.TemporaryDirectory() as directory:
        dyno.export_triton(model, (x,), directory)
        with open(os.path.join(directory, "wrapper.py")) as file:
            wrapper = file.read()
        program = triton_runtime.load(directory, device="cpu")
        with torch.no_grad():
            torch.testing.assert_close(program(x), model(x), rtol=1e-5, atol=1e-5)
    assert "flash_attention" not in wrapper
    assert re.findall(r"_library_call\(torch\.ops\.([\w.]+),", wrapper) == [DEVICE_ATTENTION]


@pytest.mark.parametrize("tokens", [128, 256])
def test_cpu_bf16_attention_backward_decomposed_where_it_measured_faster(tokens):
    """In bf16 the CPU flash backward is slower than Dyno's decomposition up to about
    192 x 192 scores per head (benchmarks/experiments/attention.py): shorter backwards are
    decomposed, longer ones call the kernel; the forward is the kernel either way."""
    q, k, v = (torch.randn(1, 2, tokens, 16).to(torch.bfloat16).requires_grad_(True)
               for _ in range(3))

    def loss(q, k, v):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out.float().square().sum()

    stats = _assert_gradients_match_eager(loss, (q, k, v), rtol=2e-2, atol=2e-2)
    expected = {FLASH: 1} if tokens == 128 else {FLASH: 1, FLASH_BACKWARD: 1}
    assert stats["library_calls"] == expected, stats["library_calls"]
