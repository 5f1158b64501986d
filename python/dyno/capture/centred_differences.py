"""x - mean(x) without the mean's rounding error (issue 19).

On data with a large mean (values near 1e4, spread 1) the deviations x - mean(x) are
small, and the mean rounded to float32 is off by up to half an ulp of 1e4 (4.9e-4): a
relative error of 1e-3 in every deviation, whatever the sum's accuracy. Autograd's
var/std backward is `2 / (n - correction) * grad * (x - x.mean(dim, keepdim=True))`,
so their gradients carry it; so do hand-written normalizations
(`u = x.mean(-1, keepdim=True); (x - u) ...`). Eager has the same error bound, but not
always the same error: an eager mean that happens to round within 0.1 ulp (the 16M rows
of e2e/reduction_accuracy.py on an H100) is 7x more accurate than a Dyno mean whose sum
differs in the last bit.

The rewrite: d = x - m, then d - mean(d). With m = mean(x) rounded, x - m is exact
where x and m are within a factor of 2 (Sterbenz), mean(d) is the small residual
mean(x) - m, whose own rounding error is tiny, and d - mean(d) = x - mean(x) in real
arithmetic. One more row reduction, in the same kernel. Where the residual is not
finite (an inf or NaN in the row, or d overflowing), d itself is the result, as in
eager: x = [1, inf] gives [-inf, nan], not [nan, nan].

Applied to float32 and float64 only: a bf16/f16 mean rounds to its dtype in eager, and
the difference of bf16 values is eager's bf16 arithmetic.
"""
import copy
import math

import torch

aten = torch.ops.aten

_MEANS = (aten.mean.dim, aten.mean.default)


def _centring(node):
    """The mean node if `node` is sub.Tensor(x, mean(x, ..., keepdim)) of float32/64 x
    (no alpha, no dtype argument to the mean), else None."""
    if node.op != "call_function" or node.target is not aten.sub.Tensor or node.kwargs:
        return None
    if len(node.args) != 2 or not isinstance(node.args[1], torch.fx.Node):
        return None
    x, mean = node.args
    if mean.op != "call_function" or mean.target not in _MEANS or mean.args[0] is not x:
        return None
    if mean.kwargs.get("dtype") is not None:
        return None
    value = x.meta.get("val") if isinstance(x, torch.fx.Node) else None
    if not isinstance(value, torch.Tensor) or value.dtype not in (torch.float32,
                                                                   torch.float64):
        return None
    if mean.target is aten.mean.dim:
        keepdim = mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)
        if not keepdim and value.dim() > 0:
            return None  # broadcasts along other dimensions: not a centring
    return mean


def with_centred_differences(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Every x - mean(x) (see the module's doc) as d - mean(d), d = x - mean(x). Works on
    a copy; returns `gm` itself when there is none."""
    if not any(_centring(node) is not None for node in gm.graph.nodes):
        return gm
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    graph = copied.graph
    for node in [n for n in graph.nodes if _centring(n) is not None]:
        mean = node.args[1]
        with graph.inserting_after(node):
            residual = graph.call_function(mean.target, (node, *mean.args[1:]),
                                           dict(mean.kwargs))
        # isfinite as |r| < inf (torch-mlir does not lower aten.isfinite).
        with graph.inserting_after(residual):
            magnitude = graph.call_function(aten.abs.default, (residual,))
        with graph.inserting_after(magnitude):
            finite = graph.call_function(aten.lt.Scalar, (magnitude, math.inf))
        with graph.inserting_after(finite):
            corrected = graph.call_function(aten.sub.Tensor, (node, residual))
        with graph.inserting_after(corrected):
            centred = graph.call_function(aten.where.self, (finite, corrected, node))
        residual.meta["val"] = mean.meta.get("val")
        value = mean.meta.get("val")
        magnitude.meta["val"] = value.abs() if isinstance(value, torch.Tensor) else None
        finite.meta["val"] = value.isfinite() if isinstance(value, torch.Tensor) else None
        corrected.meta["val"] = node.meta.get("val")
        centred.meta["val"] = node.meta.get("val")
        added = (residual, magnitude, finite, corrected, centred)
        node.replace_all_uses_with(centred, delete_user_cb=lambda user: user not in added)
    copied.recompile()
    return copied
