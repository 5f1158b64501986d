"""Decompositions Dyno applies in AOTAutograd, on top of torch-mlir's table.

GELU: torch-mlir's tanh form uses an inexact constant (see `gelu`).
var/var_mean: torch-mlir accumulates in f64; these compute in the input's
dtype with two passes (mean, then squared deviations), which is accurate and vectorizes at
full width, as Inductor's layernorm does. PyTorch's own decompositions would emit prims
that torch-mlir does not import.
"""
import math
from typing import List

import torch

aten = torch.ops.aten


def _reduced_dims(x: torch.Tensor, dim) -> List[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.dim()))
    if isinstance(dim, int):
        dim = [dim]
    return [d % max(x.dim(), 1) for d in dim]


def _var_and_mean(x, dim, correction, keepdim):
    dims = _reduced_dims(x, dim)
    count = math.prod(x.shape[d] for d in dims) if x.dim() else 1
    correction = 1 if correction is None else correction
    mean = aten.mean.dim(x, dims, True)
    deviation = aten.sub.Tensor(x, mean)
    squares = aten.mul.Tensor(deviation, deviation)
    total = aten.sum.dim_IntList(squares, dims, keepdim)
    var = aten.div.Scalar(total, max(count - correction, 0))
    if not keepdim:
        mean = aten.squeeze.dims(mean, dims)
    return var, mean


def var_mean_correction(x, dim=None, *, correction=None, keepdim=False):
    return _var_and_mean(x, dim, correction, keepdim)


def var_correction(x, dim=None, *, correction=None, keepdim=False):
    return _var_and_mean(x, dim, correction, keepdim)[0]


def gelu(x, approximate="none"):
    """GELU with exact constants. torch-mlir 20261001 lowers the tanh form with
    sqrt(2/pi) rounded to 0.797724 (true: 0.7978846), a 2e-4 relative error found by the
    OpInfo sweep; both forms are decomposed here instead."""
    half_x = aten.mul.Tensor(x, 0.5)
    if approximate == "tanh":
        cube = aten.mul.Tensor(aten.mul.Tensor(x, x), x)
        inner = aten.mul.Tensor(aten.add.Tensor(x, aten.mul.Tensor(cube, 0.044715)),
                                math.sqrt(2.0 / math.pi))
        return aten.mul.Tensor(half_x, aten.add.Tensor(aten.tanh.default(inner), 1.0))
    scaled = aten.mul.Tensor(x, math.sqrt(0.5))
    return aten.mul.Tensor(half_x, aten.add.Tensor(aten.erf.default(scaled), 1.0))


def table() -> dict:
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    decompositions = dict(get_decomposition_table())
    decompositions[aten.var_mean.correction] = var_mean_correction
    decompositions[aten.var.correction] = var_correction
    decompositions[aten.gelu.default] = gelu
    return decompositions
