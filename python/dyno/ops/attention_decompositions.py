"""Scaled dot-product attention on the CPU's flash kernel ops, as matmuls and a softmax:
the Triton target's attention (its exports, traced on CPU tensors, run on GPUs, where the
CPU-only kernels cannot). The CPU target calls the kernels themselves
(library_calls.ATTENTION_OPS).

`F.scaled_dot_product_attention` on CPU tensors dispatches to
`aten._scaled_dot_product_flash_attention_for_cpu`, which returns the output and the
rows' logsumexp; autograd saves both for `..._for_cpu_backward`. PyTorch's decomposition
of the forward returns the attention *probabilities* in place of the logsumexp, which is
harmless in inference but, in a training graph, fed a [N, H, L, S] tensor to the eager
backward kernel where it reads a [N, H, L] logsumexp: gradients of every layer before an
attention were wrong (GPT-2's first layer norm 66x off, found by e2e/test_zoo.py). Here
the forward returns the true logsumexp and the backward is decomposed too, so training
graphs compile whole: dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO O)),
dQ = scale dS K, dK = scale dS^T Q (summed over the query heads of a group under
grouped-query attention).
"""
import functools
import math
from typing import Optional

import torch

from .decompositions import TARGETS, decomposes, keeps_whole

aten = torch.ops.aten
_FORWARD = aten._scaled_dot_product_flash_attention_for_cpu.default
_BACKWARD = aten._scaled_dot_product_flash_attention_for_cpu_backward.default

# Targets on which attention stays one operation, PyTorch's fused CPU flash kernel (a
# dyno.library_call, forward and backward; see library_calls.ATTENTION_OPS for why).
# Elsewhere (the Triton target, whose exports run on GPUs) it is computed here as matmuls
# and a softmax. PyTorch's decomposition of the forward is wrong in training graphs (see
# above): on library targets it is not applied either.
LIBRARY_TARGETS = ("cpu",)
_DECOMPOSED_TARGETS = tuple(t for t in TARGETS if t not in LIBRARY_TARGETS)
keeps_whole(_FORWARD, _BACKWARD, targets=LIBRARY_TARGETS)


def _scores(query, key, is_causal, attn_mask, scale):
    """scale * Q K^T plus the mask, in float32 for low-precision inputs (as the kernel)."""
    compute = torch.float32 if query.dtype in (torch.bfloat16, torch.float16) else query.dtype
    q, k = query.to(compute), key.to(compute)
    groups = q.shape[1] // k.shape[1]
    if groups > 1:  # grouped-query attention: each key head serves `groups` query heads
        k = k.repeat_interleave(groups, dim=1)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    length, source = q.shape[-2], k.shape[-2]
    if is_causal:
        allowed = torch.ones(length, source, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask.to(compute)
    return scores, scale, groups, compute


def _probabilities(scores, logsumexp):
    # A row with every score masked has logsumexp -inf: its probabilities are 0.
    shifted = scores - torch.where(torch.isinf(logsumexp), 0.0, logsumexp).unsqueeze(-1)
    return torch.exp(shifted)


def flash_attention_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *,
                            attn_mask=None, scale=None):
    if dropout_p != 0.0:
        return NotImplemented
    scores, _, groups, compute = _scores(query, key, is_causal, attn_mask, scale)
    logsumexp = torch.logsumexp(scores, dim=-1)
    probabilities = _probabilities(scores, logsumexp)
    v = value.to(compute)
    if groups > 1:
        v = v.repeat_interleave(groups, dim=1)
    output = torch.matmul(probabilities, v).to(query.dtype)
    return output, logsumexp.to(torch.float32)


@decomposes(_BACKWARD, targets=_DECOMPOSED_TARGETS)
def flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp,
                                     dropout_p, is_causal, *, attn_mask=None, scale=None):
    if dropout_p != 0.0:
        return NotImplemented
    scores, scale, groups, compute = _scores(query, key, is_causal, attn_mask, scale)
    probabilities = _probabilities(scores, logsumexp.to(compute))
    grad = grad_out.to(compute)
    q, k, v = query.to(compute), key.to(compute), value.to(compute)
    if groups > 1:
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
    grad_value = torch.matmul(probabilities.transpose(-2, -1), grad)
    grad_probabilities = torch.matmul(grad, v.transpose(-2, -1))
    row = (grad * out.to(compute)).sum(dim=-1, keepdim=True)
    grad_scores = probabilities * (grad_probabilities - row)
    grad_query = torch.matmul(grad_scores, k) * scale
    grad_key = torch.matmul(grad_scores.transpose(-2, -1), q) * scale
    if groups > 1:
        n, heads, source, dim = grad_key.shape
        grad_key = grad_key.view(n, heads // groups, groups, source, dim).sum(2)
        grad_value = grad_value.view(n, heads // groups, groups, source, dim).sum(2)
    return (grad_query.to(query.dtype), grad_key.to(key.dtype), grad_value.to(value.dtype))


# Where the CPU target (which calls the flash kernels, library_calls.ATTENTION_OPS)
# decomposes the backward all the same: in bf16/fp16 PyTorch's CPU flash backward is
# slower than this decomposition compiled, up to about 192 x 192 scores per head
# (benchmarks/experiments/attention.py and its results, 2 threads, bf16 causal training: 64 tokens
# 2.0 vs 3.8 ms, 128: 5.3 vs 8.2 ms, 192: 8.9 vs 10.4 ms; at 256 the kernel wins,
# 14.8 vs 20.2 ms). In float32 the kernel won at every size measured.
LOW_PRECISION_BACKWARD_SCORES = 192 * 192


@decomposes(_BACKWARD, targets=LIBRARY_TARGETS)
def short_low_precision_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                 is_causal, *, attn_mask=None, scale=None):
    if query.dtype not in (torch.bfloat16, torch.float16) or \
            query.shape[-2] * key.shape[-2] > LOW_PRECISION_BACKWARD_SCORES:
        return NotImplemented  # the flash kernel's backward
    return flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp,
                                            dropout_p, is_causal, attn_mask=attn_mask,
                                            scale=scale)


@functools.lru_cache(maxsize=None)
def attention_op():
    """dyno::attention: aten.scaled_dot_product_attention (whose schema it shares) under a
    name torch-mlir imports as a `torch.operator`; library_calls lowers it to a call of
    the aten op, which PyTorch dispatches per device: its flash or memory-efficient kernels
    on CUDA, its fused kernel on the CPU."""
    def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                  attn_mask: Optional[torch.Tensor], dropout_p: float, is_causal: bool,
                  scale: Optional[float], enable_gqa: bool) -> torch.Tensor:
        return aten.scaled_dot_product_attention.default(
            query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
            enable_gqa=enable_gqa)

    # The aten op computes its fake tensors too.
    torch.library.custom_op("dyno::attention", mutates_args=())(attention).register_fake(
        attention)
    return torch.ops.dyno.attention.default


@decomposes(_FORWARD, targets=_DECOMPOSED_TARGETS)
def inference_attention(query, key, value, dropout_p=0.0, is_causal=False, *,
                        attn_mask=None, scale=None):
    """The Triton target's forward. In an inference graph (traced without grad, the only
    case in which no backward reads the logsumexp) the output is a library call of PyTorch's
    fused attention (dyno::attention), which never holds the [N, H, L, S] scores: on an
    H100 (benchmarks/gpu_zoo.py) bf16 GPT-2 ran 0.54 ms with the decomposition where
    Inductor's CUDA graph, calling the flash kernel, ran 0.28 ms. The logsumexp stays the
    decomposition's, which nothing reads there and dead-code elimination removes. A
    training graph (grad enabled while tracing) decomposes the whole forward, so that the
    backward's decomposition reads the probabilities of the same computation."""
    if dropout_p != 0.0:
        return NotImplemented
    if torch.is_grad_enabled():
        return flash_attention_for_cpu(query, key, value, dropout_p, is_causal,
                                       attn_mask=attn_mask, scale=scale)
    output = attention_op()(query, key, value, attn_mask, dropout_p, is_causal, scale,
                            query.shape[1] != key.shape[1])
    scores, _, _, _ = _scores(query, key, is_causal, attn_mask, scale)
    return output, torch.logsumexp(scores, dim=-1).to(torch.float32)
