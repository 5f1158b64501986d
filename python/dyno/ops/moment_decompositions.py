"""Moments: var, var_mean and batch norm's training statistics (issue 19).

torch-mlir accumulates var in f64; PyTorch's own decompositions emit prims torch-mlir
does not import. These compute in the input's dtype (float32 for bf16/f16, as eager)
with a corrected two-pass form, shifted (see `_moments`): as accurate as eager's
Welford, and it vectorizes at full width. Long sums run in blocks (dyno-block-long-sums).

Batch norm in training normalizes with the deviations `_moments` already has, not with
x minus the rounded mean: eager's CPU kernel subtracts a double mean, so on values near
100 its output is 14x more accurate than (x - float32 mean) * rstd (4.1e-7 against
5.9e-6 over 1M values, e2e/reduction_accuracy.py's batch_norm).
"""
import math
from typing import List

import torch

from .decompositions import decomposes, decomposes_as_pytorch

aten = torch.ops.aten


def _reduced_dims(x: torch.Tensor, dim) -> List[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.dim()))
    if isinstance(dim, int):
        dim = [dim]
    return [d % max(x.dim(), 1) for d in dim]


def _moments(x, dims, correction):
    """(var, mean, centred) of float32/float64 `x` over `dims`, kept as dimensions of
    size 1; `centred` is x - mean without the mean's rounding.

    Corrected two-pass variance (Chan, Golub and LeVeque), shifted by K: with
    d = x - K, var = (sum(d^2) - sum(d)^2 / n) / (n - correction), exact in real
    arithmetic for any K. K is the sum of x * (1 / n): a reduction's result, which
    kernels read (recomputed from a sum, LLVM may fuse sum * (1 / n) into x - K
    differently in each loop, and the two sums would stop matching). The correction
    cancels K's error, which on data with a large mean (values near 1e4) is larger than
    the spread it would square into the variance.

    The mean is K, or K + sum(d) / n where |K| >= 4 standard deviations: there x - K is
    exact for most x (Sterbenz), and the sum of d removes K's error (1 / n rounded is
    off by up to 6e-8 relative: 6e-4 at 1e4, twice the spread of the data in [1e4,
    1e4 + 1]). Near 0 the rounding of x - K is the same for every x of a binade, does
    not average out, and would cost the mean of 1M centred values 7e-6 relative. There,
    centred is d; elsewhere d - sum(d) / n, which a rounded mean cannot match."""
    count = math.prod(x.shape[d] for d in dims) if x.dim() else 1
    if isinstance(correction, float) and correction.is_integer():
        # std's correction arrives as 1.0; n - 1.0 of a symbolic n is a SymFloat, which a
        # dynamic graph cannot divide by.
        correction = int(correction)
    inverse_count = _inverse_count(count, x)
    shift = aten.sum.dim_IntList(aten.mul.Tensor(x, inverse_count), dims, True)
    deviation = aten.sub.Tensor(x, shift)
    deviation_sum = aten.sum.dim_IntList(deviation, dims, True)
    squares = aten.sum.dim_IntList(aten.mul.Tensor(deviation, deviation), dims, True)
    mean_deviation = aten.div.Scalar(deviation_sum, max(count, 1))
    centred_squares = aten.sub.Tensor(squares, aten.mul.Tensor(deviation_sum, mean_deviation))
    # Rounding can leave -tiny where the deviations are all equal; a variance is >= 0.
    centred_squares = aten.where.self(aten.lt.Scalar(centred_squares, 0),
                                      aten.zeros_like(centred_squares), centred_squares)
    var = aten.div.Scalar(centred_squares, max(count - correction, 0))
    far_from_zero = aten.ge.Tensor(aten.mul.Tensor(shift, shift),
                                   aten.mul.Tensor(aten.mul.Scalar(centred_squares, 16.0),
                                                   inverse_count))
    mean = aten.where.self(far_from_zero, aten.add.Tensor(shift, mean_deviation), shift)
    centred = aten.where.self(far_from_zero, aten.sub.Tensor(deviation, mean_deviation),
                              deviation)
    return var, mean, centred


def _var_and_mean(x, dim, correction, keepdim):
    dims = _reduced_dims(x, dim)
    correction = 1 if correction is None else correction
    dtype = x.dtype
    if dtype in (torch.bfloat16, torch.float16):
        x = aten._to_copy.default(x, dtype=torch.float32)
    var, mean, _ = _moments(x, dims, correction)
    if not keepdim:
        var = aten.squeeze.dims(var, dims)
        mean = aten.squeeze.dims(mean, dims)
    if dtype != x.dtype:
        var = aten._to_copy.default(var, dtype=dtype)
        mean = aten._to_copy.default(mean, dtype=dtype)
    return var, mean


def _inverse_count(count, like):
    """1 / count, as a Python float, or for a symbolic count (a dynamic graph) as a 0-d
    tensor of like's dtype: a float computed from a SymInt becomes a division of 0-d
    float64 tensors (aten.true_divide.Tensor), which torch-mlir does not lower."""
    if isinstance(count, int):
        return 1.0 / max(count, 1)
    return aten.reciprocal.default(aten.scalar_tensor.default(count, dtype=like.dtype))


@decomposes(aten.var_mean.correction)
def var_mean_correction(x, dim=None, *, correction=None, keepdim=False):
    return _var_and_mean(x, dim, correction, keepdim)


@decomposes(aten.var.correction)
def var_correction(x, dim=None, *, correction=None, keepdim=False):
    return _var_and_mean(x, dim, correction, keepdim)[0]


def _channel_shape(t, input):
    """A per-channel tensor as [C, 1, ...] to broadcast against `input` [N, C, ...]."""
    return aten.view.default(t, [t.numel()] + [1] * (input.dim() - 2))


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                functional):
    """PyTorch's native_batch_norm_helper, with the training output computed from the
    centred deviations (see the module's doc); evaluation is PyTorch's."""
    from torch._decomp.decompositions import native_batch_norm_helper

    if not training:
        return native_batch_norm_helper(input, weight, bias, running_mean, running_var,
                                        training, momentum, eps, functional)
    dims = [0] + list(range(2, input.dim()))
    computed = input if input.dtype in (torch.float32, torch.float64) else \
        aten._to_copy.default(input, dtype=torch.float32)
    biased_var, mean, centred = _moments(computed, dims, 0)
    rstd = aten.rsqrt.default(aten.add.Tensor(biased_var, eps))
    output = aten.mul.Tensor(centred, rstd)
    save_mean = aten.squeeze.dims(mean, dims)
    save_rstd = aten.squeeze.dims(rstd, dims)
    new_running_mean, new_running_var = running_mean, running_var
    if running_mean is not None:
        new_running_mean = aten.add.Tensor(aten.mul.Tensor(save_mean, momentum),
                                           aten.mul.Tensor(running_mean, 1 - momentum))
        if not functional:
            running_mean.copy_(new_running_mean)
    if running_var is not None:
        n = input.numel() / input.shape[1]
        unbiased = aten.mul.Tensor(aten.squeeze.dims(biased_var, dims), n / (n - 1))
        new_running_var = aten.add.Tensor(aten.mul.Tensor(unbiased, momentum),
                                          aten.mul.Tensor(running_var, 1 - momentum))
        if not functional:
            running_var.copy_(new_running_var)
    if weight is not None:
        output = aten.mul.Tensor(output, _channel_shape(weight, input))
    if bias is not None:
        output = aten.add.Tensor(output, _channel_shape(bias, input))
    if input.device.type == "cpu":
        save_mean = aten._to_copy.default(save_mean, dtype=input.dtype)
        save_rstd = aten._to_copy.default(save_rstd, dtype=input.dtype)
    return (aten._to_copy.default(output, dtype=input.dtype), save_mean, save_rstd,
            new_running_mean, new_running_var)


@decomposes(aten._native_batch_norm_legit_functional.default)
def batch_norm_functional(input, weight, bias, running_mean, running_var, training,
                          momentum, eps):
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                       eps, True)


@decomposes(aten._native_batch_norm_legit.default)
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                       eps, False)[:3]


@decomposes(aten._native_batch_norm_legit.no_stats)
def batch_norm_no_stats(input, weight, bias, training, momentum, eps):
    return _batch_norm(input, weight, bias, None, None, training, momentum, eps, False)[:3]


@decomposes(aten._batch_norm_with_update_functional.default)
def batch_norm_with_update_functional(input, weight, bias, running_mean, running_var,
                                      momentum, eps):
    """Training batch norm as torch.export and pre-dispatch traces spell it; the reserve
    tensor (cuDNN's, here empty: no cuDNN call remains) as PyTorch's decomposition makes
    it."""
    from torch._decomp.decompositions import _get_batch_norm_reserve_tensor

    output, save_mean, save_rstd, new_mean, new_var = _batch_norm(
        input, weight, bias, running_mean, running_var, True, momentum, eps, True)
    reserve = _get_batch_norm_reserve_tensor(input, weight, bias, running_mean, running_var,
                                             eps, training=True)
    return output, save_mean, save_rstd, reserve, new_mean, new_var


@decomposes(aten.norm.Scalar)
def norm_scalar(x, p=2):
    """aten.norm.Scalar (torch.dist's): the vector norm of all elements, as
    linalg.vector_norm computes it; torch-mlir lowers norm.Scalar only for f32/f64."""
    return torch.linalg.vector_norm(x, p)


# PyTorch's own decomposition of batch norm in evaluation (no statistics updated), which
# produces ops torch-mlir lowers.
decomposes_as_pytorch(aten._batch_norm_no_update.default)
