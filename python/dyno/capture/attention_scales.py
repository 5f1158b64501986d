"""A query scaled by a constant before attention, as attention's own scale.

OPT, BART and other transformers decoders scale the query projection themselves
(`q = q_proj(x) * head_dim ** -0.5`) and call attention with `scale=1.0`. The graph then
multiplies every query element in a kernel of its own (on an H200, OPT's bench
configuration: one launch per layer, a bf16 read and write of [batch, tokens, width])
before attention, whose kernel scales the scores anyway.

`with_query_scales_in_attention` finds, for each inference attention (dyno::attention,
or the CPU flash kernel's forward in a graph without its backward), a query that is
`x * c` for a constant scalar c, through views (view, reshape, permute, transpose,
unsqueeze, squeeze, expand) each read by nothing else, and, in bf16/fp16, through the
multiply's rounding (`op_round(convert(x, float32) * c, dtype)`, how low-precision
decompositions write it); it then reads `x` through the same views and passes
`c * scale` (`c / sqrt(head_dim)` where scale is None) as the scale. Counted in
dyno.stats()["attention_scales"].

Numerics: attention computes `(q k^T) * scale` in float32 either way. Eager rounds
`x * c` to the query's dtype first; folded, that rounding is gone. For a power of two c
(OPT's 64 ** -0.5) the results are the same bit for bit barring overflow; for another
c the folded one is the closer to float64, never the farther.
"""
import functools
import math

import torch

from .graph_rewrites import rewritten_copy

aten = torch.ops.aten
prims = torch.ops.prims

_VIEWS = {aten.view.default, aten.reshape.default, aten._unsafe_view.default,
          aten.permute.default, aten.transpose.int, aten.unsqueeze.default,
          aten.squeeze.dim, aten.squeeze.dims, aten.expand.default, aten.alias.default}
_MULTIPLIES = {aten.mul.Tensor, aten.mul.Scalar}


def _attention_query_and_scale(node, has_backward):
    """(query node, scale, how to set (query, scale)) for an inference attention node,
    else None."""
    from ..ops.attention_decompositions import attention_op

    if node.op != "call_function":
        return None
    if node.target is attention_op() and len(node.args) >= 7:
        # dyno::attention(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa)
        def replace(args, kwargs, query, scale):
            args = list(args)
            args[0], args[6] = query, scale
            return tuple(args), kwargs
        return node.args[0], node.args[6], replace
    if node.target is aten._scaled_dot_product_flash_attention_for_cpu.default \
            and not has_backward:
        def replace(args, kwargs, query, scale):
            args, kwargs = list(args), dict(kwargs)
            args[0], kwargs["scale"] = query, scale
            return tuple(args), kwargs
        return node.args[0], node.kwargs.get("scale"), replace
    return None


def _single_user(node):
    return isinstance(node, torch.fx.Node) and len(node.users) == 1


def _constant_factor(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _dtype(node):
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value.dtype if isinstance(value, torch.Tensor) else None


def _unscaled(node):
    """(x, c) when `node` is x * c (c a constant scalar; in a low precision through the
    multiply's float32 rounding), each intermediate read only by the next; else None."""
    from ..ops.low_precision_lowerings import op_round

    if node.op != "call_function":
        return None
    if node.target is op_round():
        product, dtype = node.args[0], node.args[1]
        if not _single_user(product) or product.target not in _MULTIPLIES:
            return None
        widened, factor = product.args[0], _constant_factor(product.args[1])
        if factor is None:  # c * x
            widened, factor = product.args[1], _constant_factor(product.args[0])
        if factor is None or not isinstance(widened, torch.fx.Node) or not _single_user(widened) \
                or widened.target is not prims.convert_element_type.default \
                or widened.args[1] is not torch.float32:
            return None
        x = widened.args[0]
        return (x, factor) if _dtype(x) == dtype else None
    if node.target in _MULTIPLIES:
        x, factor = node.args[0], _constant_factor(node.args[1])
        if factor is None:  # c * x
            x, factor = node.args[1], _constant_factor(node.args[0])
        if factor is None or not isinstance(x, torch.fx.Node) or _dtype(x) != _dtype(node):
            return None
        return x, factor
    return None


def _fold(query):
    """(the views from the query back to the product, x, c), or None."""
    views, node = [], query
    while isinstance(node, torch.fx.Node) and node.op == "call_function" \
            and node.target in _VIEWS:
        if not _single_user(node):
            return None
        views.append(node)
        node = node.args[0]
    if not _single_user(node):
        return None
    found = _unscaled(node)
    if found is None:
        return None
    return views, found[0], found[1]


def with_query_scales_in_attention(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`gm` with each constant query scale of an inference attention moved into the
    attention's scale (see the module's notes); `gm` itself when there is none, else a
    changed copy."""
    has_backward = any(
        node.op == "call_function"
        and node.target is aten._scaled_dot_product_flash_attention_for_cpu_backward.default
        for node in gm.graph.nodes)
    rewrites = {}
    for node in gm.graph.nodes:
        found = _attention_query_and_scale(node, has_backward)
        if found is None:
            continue
        query, scale, _ = found
        folded = _fold(query)
        if folded is None:
            continue
        value = query.meta.get("val")
        if scale is None:
            if not isinstance(value, torch.Tensor) or not isinstance(value.shape[-1], int):
                continue
        elif not isinstance(scale, (int, float)):
            continue
        rewrites[node.name] = functools.partial(_read_unscaled, has_backward=has_backward)
    return rewritten_copy(gm, rewrites, "attention_scales")


def _read_unscaled(node, has_backward):
    """Rewrites attention `node` (of the copied graph) to read its query unscaled."""
    query, scale, replace = _attention_query_and_scale(node, has_backward)
    views, x, factor = _fold(query)
    if scale is None:
        scale = 1.0 / math.sqrt(query.meta["val"].shape[-1])
    # The views, innermost first, now read x (each had one reader: they move as is).
    if views:
        views[-1].replace_input_with(views[-1].args[0], x)
        new_query = views[0]
    else:
        new_query = x
    node.args, node.kwargs = replace(node.args, node.kwargs, new_query, scale * factor)
