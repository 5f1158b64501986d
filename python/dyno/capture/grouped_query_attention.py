"""Keys and values repeated for grouped-query attention, as attention's own grouping.

Llama, Mistral, Qwen2 and Mixtral keep fewer key/value heads than query heads and, before
attention under a mask, repeat each key/value head for its group of query heads
(transformers' `repeat_kv`: `x[:, :, None].expand(b, kv_heads, groups, s, d)` reshaped to
`(b, kv_heads * groups, s, d)`): a copy kernel per layer for the values (the keys' copy
rides in the rotary embedding's kernel, which then writes twice the elements), on an
H200 in Llama's bench configuration 1 MB written and read again per layer.

PyTorch's attention does the same grouping itself (`enable_gqa=True`: query head h reads
key/value head h // groups, exactly `repeat_kv`'s order), and its flash kernel, which
runs bf16/fp16 attention on CUDA GPUs, supports it. `with_grouped_query_attention`
finds, for each inference attention of the Triton target (dyno::attention) in bf16 or
fp16 without a mask (causal or none: what flash runs; a constant causal mask is gone by
then, causal_masks.py), keys and values that are both such repeats of the same grouping;
the attention then reads the unrepeated tensors with `enable_gqa=True`. (Under a mask,
or in float32, PyTorch runs the memory-efficient kernel, whose grouped-query support was
not measured: those repeats stay.) Counted in
dyno.stats()["grouped_query_attention"]. The result is the same computation.
"""
import torch

from .graph_rewrites import rewritten_copy

aten = torch.ops.aten

_RESHAPES = {aten.view.default, aten.reshape.default, aten._unsafe_view.default}
_LOW_PRECISION = (torch.bfloat16, torch.float16)


def _shape(node):
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return tuple(value.shape) if isinstance(value, torch.Tensor) else None


def _repeat(node):
    """(x, groups) when `node` is `repeat_kv(x, groups)` (unsqueeze at 2, expand, a
    contiguous copy or none, reshape to [b, heads * groups, s, d]); else None."""
    if not isinstance(node, torch.fx.Node) or node.op != "call_function" \
            or node.target not in _RESHAPES:
        return None
    source = node.args[0]
    if isinstance(source, torch.fx.Node) and source.target is aten.clone.default:
        source = source.args[0]
    if not isinstance(source, torch.fx.Node) or source.target is not aten.expand.default:
        return None
    unsqueezed = source.args[0]
    if not isinstance(unsqueezed, torch.fx.Node) \
            or unsqueezed.target is not aten.unsqueeze.default or unsqueezed.args[1] != 2:
        return None
    x = unsqueezed.args[0]
    shape, expanded, repeated = _shape(x), _shape(source), _shape(node)
    if shape is None or expanded is None or repeated is None or len(shape) != 4 \
            or not all(isinstance(size, int) for size in (*shape, *expanded, *repeated)):
        return None
    batch, heads, length, dim = shape
    if len(expanded) != 5 or expanded[:2] != (batch, heads) or expanded[3:] != (length, dim):
        return None
    groups = expanded[2]
    if repeated != (batch, heads * groups, length, dim) or groups < 2:
        return None
    return x, groups


def _foldable(node):
    """(unrepeated keys, unrepeated values) for an attention this pass folds, else None."""
    from ..ops.attention_decompositions import attention_op

    if node.op != "call_function" or node.target is not attention_op() \
            or len(node.args) < 8 or node.args[7] is not False or node.args[3] is not None:
        return None  # (under a mask PyTorch runs the memory-efficient kernel, not flash)
    query, key, value = node.args[:3]
    value_meta = query.meta.get("val") if isinstance(query, torch.fx.Node) else None
    if not isinstance(value_meta, torch.Tensor) or value_meta.dtype not in _LOW_PRECISION:
        return None
    keys, values = _repeat(key), _repeat(value)
    if keys is None or values is None or keys[1] != values[1]:
        return None
    if _shape(query)[1] != _shape(key)[1]:
        return None
    return keys[0], values[0]


def with_grouped_query_attention(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`gm` with each low-precision inference attention over repeated keys and values
    reading them unrepeated, with `enable_gqa=True` (see the module's notes); `gm` itself
    when there is none, else a changed copy."""
    return rewritten_copy(gm, {node.name: _read_unrepeated for node in gm.graph.nodes
                               if _foldable(node) is not None},
                          "grouped_query_attention")


def _read_unrepeated(node):
    """Rewrites attention `node` (of the copied graph) to read its keys and values
    unrepeated, grouping the heads itself."""
    keys, values = _foldable(node)
    args = list(node.args)
    args[1], args[2], args[7] = keys, values, True
    node.args = tuple(args)
