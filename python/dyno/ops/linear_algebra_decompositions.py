"""Linear algebra: matrix products over one element as outer products, and what torch-mlir
cannot lower: bilinear's _trilinear, pairwise distances
(cdist, pdist) as eager's kernels compute them, and PyTorch's own addmv and dist.
(Factorizations and solvers are LAPACK library calls: library_calls.)"""
import math

import torch

from .decompositions import decomposes, decomposes_as_pytorch, is_float

aten = torch.ops.aten


@decomposes(aten._trilinear.default)
def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """aten._trilinear (nn.functional.bilinear): the three operands, each unsqueezed at
    its `expand` dimensions, multiplied and summed over `sumdim`. torch-mlir has no
    lowering; Dyno fuses the product into the sum's kernel. `unroll_dim` only chooses
    how ATen loops."""
    def expanded(tensor, dims):
        for dim in sorted(dims):
            tensor = aten.unsqueeze.default(tensor, dim)
        return tensor

    product = aten.mul.Tensor(aten.mul.Tensor(expanded(i1, expand1), expanded(i2, expand2)),
                              expanded(i3, expand3))
    return aten.sum.dim_IntList(product, list(sumdim)) if sumdim else product


@decomposes(aten._cdist_forward.default)
def cdist_forward(x1, x2, p, compute_mode=None):
    """Pairwise p-norm distances as eager's kernels compute them (torch-mlir has no
    lowering): p = 2 on more than 25 rows (or compute_mode 1) through one matmul of
    padded operands with the squared norms, as ATen's _euclidean_dist; otherwise
    directly from the differences (p = 0 counts them, inf takes the largest)."""
    if not (is_float(x1) and isinstance(x2, torch.Tensor) and x2.dtype == x1.dtype):
        return NotImplemented
    rows1, rows2, features = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    if rows1 == 0 or rows2 == 0 or features == 0:
        return NotImplemented
    mode = compute_mode or 0
    if p == 2 and (mode == 1 or mode == 0 and (rows1 > 25 or rows2 > 25)):
        norm1 = aten.sum.dim_IntList(aten.mul.Tensor(x1, x1), [-1], True)
        norm2 = aten.sum.dim_IntList(aten.mul.Tensor(x2, x2), [-1], True)
        padded1 = aten.cat.default([aten.mul.Scalar(x1, -2), norm1,
                                    aten.ones_like.default(norm1)], -1)
        padded2 = aten.cat.default([x2, aten.ones_like.default(norm2), norm2], -1)
        products = aten.matmul.default(padded1, aten.transpose.int(padded2, -1, -2))
        return aten.sqrt.default(aten.clamp_min.default(products, 0))
    difference = aten.sub.Tensor(aten.unsqueeze.default(x1, -2),
                                 aten.unsqueeze.default(x2, -3))
    return _norm_of_differences(difference, p)


def _norm_of_differences(difference, p):
    """The p-norm along the last dimension, as ATen's cdist/pdist kernels compute it
    (p = 0 counts the nonzero differences, inf takes the largest)."""
    magnitude = aten.abs.default(difference)
    if p == 0:
        nonzero = aten._to_copy.default(aten.ne.Scalar(difference, 0),
                                        dtype=difference.dtype)
        return aten.sum.dim_IntList(nonzero, [-1])
    if p == 1:
        return aten.sum.dim_IntList(magnitude, [-1])
    if p == 2:
        return aten.sqrt.default(aten.sum.dim_IntList(aten.mul.Tensor(difference, difference),
                                                      [-1]))
    if p == math.inf:
        return aten.amax.default(magnitude, [-1])
    powered = aten.pow.Tensor_Scalar(magnitude, p)
    return aten.pow.Tensor_Scalar(aten.sum.dim_IntList(powered, [-1]), 1.0 / p)


@decomposes(aten._pdist_forward.default)
def pdist_forward(x, p=2.0):
    """The distances between rows i < j, in eager's order (0,1), (0,2), ... (1,2), ...:
    the rows gathered at the upper triangle's indices, then the norm of differences as
    eager's pdist kernel (torch-mlir has no lowering)."""
    if not is_float(x) or x.dim() != 2 or x.shape[0] < 2 or x.shape[1] == 0:
        return NotImplemented
    # Pair k's rows, in closed form (torch-mlir's triu_indices uses the same one, but
    # returns a concatenation the Triton target cannot write): row i starts at
    # k = i (2n - i - 1) / 2, so i = floor((2n - 1) / 2 - sqrt(((2n - 1) / 2)^2 - 2k)),
    # exact in float64 for any n that fits in memory.
    n = x.shape[0]
    k = aten.arange.default(n * (n - 1) // 2, dtype=torch.int64, device=x.device)
    half = (2 * n - 1) / 2.0
    root = aten.sqrt.default(aten.rsub.Scalar(aten.mul.Scalar(
        aten._to_copy.default(k, dtype=torch.float64), 2.0), half * half))
    rows = aten._to_copy.default(aten.floor.default(aten.rsub.Scalar(root, half)),
                                 dtype=torch.int64)
    starts = aten.floor_divide.default(
        aten.mul.Tensor(rows, aten.rsub.Scalar(rows, 2 * n - 1)), 2)
    columns = aten.add.Scalar(aten.add.Tensor(aten.sub.Tensor(k, starts), rows), 1)
    first = aten.index_select.default(x, 0, rows)
    second = aten.index_select.default(x, 0, columns)
    return _norm_of_differences(aten.sub.Tensor(first, second), p)


# PyTorch's own decompositions (reference implementations torch-mlir lowers).
decomposes_as_pytorch(aten.addmv.default, aten.dist.default)


@decomposes(aten.mm.default, aten.bmm.default)
def outer_product(a, b):
    """A matrix product over one element (a rotary embedding's angles, inv_freq[:, None]
    @ positions[None, :]) is an outer product: a broadcast multiply, which the kernels
    reading it compute, where a library GEMM needed its operands written out by kernels
    of their own (Llama, Mistral, Qwen2: 3 kernels per call). Each element is one product
    rounded once, as the GEMM rounds it."""
    contraction = a.shape[-1]
    if not (is_float(a) and is_float(b) and a.dtype == b.dtype and not a.is_complex()
            and isinstance(contraction, int) and contraction == 1):
        return NotImplemented
    return aten.mul.Tensor(a, b)
