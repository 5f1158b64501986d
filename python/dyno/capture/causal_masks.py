"""Attention under a constant causal mask, as causal attention.

Decoders (Llama, Mistral, GPT-2 in transformers) build their causal mask in the graph
from `arange`s and comparisons and hand it to scaled dot-product attention as an
`attn_mask` of [batch, 1, L, S]. Nothing of it depends on the inputs: it is a constant
of the graph. With a mask PyTorch's attention cannot run its flash kernel (on a GPU the
memory-efficient kernel reads the mask; on the CPU the fused kernel adds it to every
block of scores, the blocks above the diagonal included), and the graph computes and
stores the mask on every call: on an H200, Llama's bench configuration spent a kernel and
a 1 MB mask per call and 70-90 us of host time per attention call.

`with_causal_attention` evaluates each attention's mask when it depends on no input
(every operation of it a computation on constants, its size static and at most
`_MAX_ELEMENTS`), and when it is exactly the causal mask (True, or 0, where the key's
position is at most the query's; False, -inf or the dtype's lowest value elsewhere;
the same for every batch and head) for a square L x S (where PyTorch's upper-left causal
alignment and a lower-right one agree), calls the attention with `is_causal=True` and no
mask (counted in dyno.stats()["causal_masks"]). The mask's operations go with dead-code elimination when nothing else reads them.
The result is the same function: the masked scores' weights are exactly 0 either way
(exp of -inf, or of the lowest value minus a row's maximum, underflows), and no row is
fully masked (its diagonal is kept).

`options={"causal_masks": False}` (CompileOptions.causal_masks) leaves every mask as it
is: to compare, or to rule this rewrite out when looking for a miscompile.
"""
import math

import torch

from ..targets.host_runtime import outside_fake_mode
from .graph_rewrites import rewritten_copy

aten = torch.ops.aten

# Masks larger than this are not evaluated (the compile would hold them in memory).
_MAX_ELEMENTS = 1 << 25


def _attention_operands(node):
    """(query, key, mask node, is_causal, how to set (mask, is_causal)) for an attention
    node this pass knows, else None."""
    from ..ops.attention_decompositions import attention_op

    if node.op != "call_function":
        return None
    if node.target is attention_op():  # dyno::attention(q, k, v, mask, p, causal, ...)
        if len(node.args) < 6:
            return None

        def replace(args, kwargs):
            args = list(args)
            args[3], args[5] = None, True
            return tuple(args), kwargs
        return node.args[0], node.args[1], node.args[3], node.args[5], replace
    if node.target is aten._scaled_dot_product_flash_attention_for_cpu.default:
        # (query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask, scale)
        is_causal = node.args[4] if len(node.args) > 4 else node.kwargs.get("is_causal", False)

        def replace(args, kwargs):
            args, kwargs = list(args[:4]), dict(kwargs)
            while len(args) < 4:  # dropout_p, positional before is_causal
                args.append(0.0)
            kwargs["is_causal"], kwargs["attn_mask"] = True, None
            return tuple(args), kwargs
        return node.args[0], node.args[1], node.kwargs.get("attn_mask"), is_causal, replace
    return None


def _static_shape(node):
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if not isinstance(value, torch.Tensor):
        return None
    if not all(isinstance(size, int) for size in value.shape):
        return None
    return tuple(value.shape)


def _constant_value(mask: torch.fx.Node):
    """The mask's value, computed from its operations, or None when it depends on an
    input or cannot be computed here."""
    shape = _static_shape(mask)
    if shape is None or math.prod(shape) > _MAX_ELEMENTS:
        return None
    order, seen, stack = [], set(), [mask]
    while stack:  # the mask's operations, each after the ones it reads
        node = stack[-1]
        if node in seen:
            stack.pop()
            continue
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            return None  # an input, a parameter, or a Python function
        if torch.Tag.nondeterministic_seeded in node.target.tags:
            return None
        pending = [n for n in node.all_input_nodes if n not in seen]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        seen.add(node)
        order.append(node)
    values = {}
    try:
        with torch.no_grad():
            for node in order:
                args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs),
                                                     lambda n: values[n])
                values[node] = node.target(*args, **kwargs)
    except Exception:  # noqa: BLE001 (an operation this process cannot run: not folded)
        return None
    value = values[mask]
    return value if isinstance(value, torch.Tensor) else None


def _is_causal_mask(value: torch.Tensor, length: int, source: int) -> bool:
    if value.dim() < 2 or tuple(value.shape[-2:]) != (length, source):
        return False
    rows = torch.arange(length).unsqueeze(1)
    allowed = torch.arange(source).unsqueeze(0) <= rows
    value = value.cpu()
    if value.dtype == torch.bool:
        return bool((value == allowed).all())
    if not value.dtype.is_floating_point:
        return False
    lowest = torch.finfo(value.dtype).min
    masked = (value == float("-inf")) | (value == lowest)
    return bool(((value == 0) == allowed).all() and (masked == ~allowed).all())


def with_causal_attention(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`gm` with each attention under a constant causal mask made causal attention (see
    the module's notes); `gm` itself when none is, else a changed copy."""
    rewrites = {}
    for node in gm.graph.nodes:
        operands = _attention_operands(node)
        if operands is None:
            continue
        query, key, mask, is_causal, replace = operands
        if not isinstance(mask, torch.fx.Node) or is_causal is not False:
            continue
        query_shape, key_shape = _static_shape(query), _static_shape(key)
        if query_shape is None or key_shape is None or query_shape[-2] != key_shape[-2]:
            continue
        with outside_fake_mode():  # (the compiler may run under a tracer's fake mode)
            value = _constant_value(mask)
            causal = value is not None and _is_causal_mask(value, query_shape[-2],
                                                           key_shape[-2])
        if causal:
            def rewrite(node, replace=replace):
                node.args, node.kwargs = replace(node.args, node.kwargs)
            rewrites[node.name] = rewrite
    return rewritten_copy(gm, rewrites, "causal_masks")
