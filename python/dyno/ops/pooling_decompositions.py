"""Max pooling with indices as eager computes them: NaN and -inf windows, where
torch-mlir's lowerings differ (miscompiles on both targets), and small windows as one
elementwise kernel of values and indices together."""
import itertools
import math

import torch
from torch._decomp import decomposition_table

from .decompositions import decomposes, declined, is_float, lowered_by_torch_mlir

aten = torch.ops.aten


def _as_list(value, dims, default=None):
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return list(default)
    if isinstance(value, int):
        return [value] * dims
    return list(value) if len(value) == dims else [value[0]] * dims


def _first_window_positions(x, out_shape, dims, starts):
    """Per output of a pooling, the flat position (within its plane) of its window's
    first element inside the input: `starts(dim, outputs)` gives the first row, column,
    ... per output along one spatial dimension."""
    spatial = x.shape[-dims:]
    position = None
    for dim in range(dims):
        outputs = aten.arange.default(out_shape[-dims + dim], dtype=torch.int64,
                                      device=x.device)
        start = starts(dim, outputs)
        stride = math.prod(spatial[dim + 1:])
        shape = [1] * dims
        shape[dim] = out_shape[-dims + dim]
        term = aten.view.default(aten.mul.Scalar(start, stride), shape)
        position = term if position is None else aten.add.Tensor(position, term)
    return position


def _max_pool_starts(x, dims, kernel_size, stride=(), padding=0, dilation=1, *unused):
    kernel = _as_list(kernel_size, dims)
    strides = _as_list(stride, dims, kernel)
    pads, dilations = _as_list(padding, dims), _as_list(dilation, dims)

    def starts(dim, outputs):
        # Eager's kernels step a window's start past the padding by whole dilations.
        start = aten.sub.Scalar(aten.mul.Scalar(outputs, strides[dim]), pads[dim])
        before = aten.clamp_min.default(aten.neg.default(start), 0)
        steps = aten.div.Tensor_mode(aten.add.Scalar(before, dilations[dim] - 1),
                                     dilations[dim], rounding_mode="floor")
        return aten.add.Tensor(start, aten.mul.Scalar(steps, dilations[dim]))
    return starts


def _adaptive_pool_starts(x, dims, output_size, *unused):
    spatial = x.shape[-dims:]
    out = _as_list(output_size, dims)

    def starts(dim, outputs):
        return aten.div.Tensor_mode(aten.mul.Scalar(outputs, spatial[dim]), out[dim],
                                    rounding_mode="floor")
    return starts


def _pool_with_eager_indices(op, dims, window_starts, inner=None, fix_values=False):
    """Max pooling with indices, with eager's rules where torch-mlir's lowerings differ
    (miscompiles on both targets, found with NaN and -inf inputs):
    - a window holding a NaN has the NaN as its value and the index of its last NaN
      (eager's kernels take every NaN they meet: `val > max || isnan(val)`); torch-mlir
      matched the maximum by equality (-1) or skipped NaN;
    - a window whose maximum is -inf has the index of its first element inside the
      input; torch-mlir gave a padding position (negative), or, for adaptive 3-d
      pooling, uninitialized memory (and, in some runs, -FLT_MAX as the value: its
      lowering of adaptive pooling varies between processes).
    Other windows keep torch-mlir's answer (the first maximum, as eager). `inner`
    computes the op where torch-mlir cannot (PyTorch's decomposition). Only adaptive
    pooling needs its values fixed (`fix_values`): max pooling's propagate NaN, so a
    graph that uses only them keeps none of this."""
    def decomposition(x, *args):
        if not is_float(x) or declined(op):
            return NotImplemented
        if x.dim() == dims + 1:  # unbatched: torch-mlir lowers only the batched form
            values, indices = decomposition(aten.unsqueeze.default(x, 0), *args)
            return aten.squeeze.dim(values, 0), aten.squeeze.dim(indices, 0)
        pool = inner or op
        with lowered_by_torch_mlir(op):
            values, indices = pool(x, *args)
            # One more pooling, of a code per element (float64, exact): a NaN's position
            # plus `count`, 0 for an element above -inf, -1 for -inf. A window's maximum
            # code says whether it holds a NaN (and its last one) or only -inf, whatever
            # the values pooling did with -inf (torch-mlir's adaptive pooling starts some
            # runs from -FLT_MAX, and returns it for an all -inf window).
            count = math.prod(x.shape[-dims:])
            positions = aten.arange.start(count, 2 * count, dtype=torch.float64,
                                          device=x.device)
            positions = aten.view.default(positions, list(x.shape[-dims:]))
            zero = aten.scalar_tensor(0.0, dtype=torch.float64, device=x.device)
            minus_one = aten.scalar_tensor(-1.0, dtype=torch.float64, device=x.device)
            code = aten.where.self(aten.isnan.default(x), positions, aten.where.self(
                aten.eq.Scalar(x, -math.inf), minus_one, zero))
            window_code = pool(code, *args)[0]
        first = _first_window_positions(x, values.shape, dims, window_starts(x, dims, *args))
        all_minus_inf = aten.eq.Scalar(window_code, -1.0)
        indices = aten.where.self(all_minus_inf, first, indices)
        has_nan = aten.ge.Scalar(window_code, float(count))
        if fix_values:
            nan = aten.scalar_tensor(math.nan, dtype=x.dtype, device=x.device)
            minus_inf = aten.scalar_tensor(-math.inf, dtype=x.dtype, device=x.device)
            values = aten.where.self(has_nan, nan, aten.where.self(all_minus_inf, minus_inf,
                                                                   values))
        last_nan = aten._to_copy.default(aten.sub.Scalar(window_code, float(count)),
                                         dtype=torch.int64)
        indices = aten.where.self(has_nan, last_nan, indices)
        return values, indices
    return decomposition


# Windows of at most this many elements are pooled by `_max_pool_by_window_offsets`.
_UNROLLED_POOL_WINDOW = 64


def _max_pool_by_window_offsets(dims, general):
    """Max pooling with indices as eager's loop computes it, one window offset at a time:
    every output starts at -inf with the index of its window's first element inside the
    input, and takes an element where `value > max || isnan(value)` (so a NaN is the
    value and the last NaN the index; an all -inf window keeps its first index). Each
    offset is a strided slice of the input padded with -inf (padding never wins), so
    the whole pooling is elementwise and forms one kernel, values and indices together,
    on both targets. Before, indices were torch-mlir's pooling repaired by a second
    pooling of a float64 code per input element (six kernels on the GPU, 4.3x slower
    than eager). Windows larger than `_UNROLLED_POOL_WINDOW` keep that form (`general`)."""
    from torch._meta_registrations import pooling_output_shape

    def decomposition(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        kernel = _as_list(kernel_size, dims)
        if is_float(x) and x.dim() == dims + 1:  # unbatched
            values, indices = decomposition(aten.unsqueeze.default(x, 0), kernel_size, stride,
                                            padding, dilation, ceil_mode)
            return aten.squeeze.dim(values, 0), aten.squeeze.dim(indices, 0)
        if (not is_float(x) or x.dim() != dims + 2
                or math.prod(kernel) > _UNROLLED_POOL_WINDOW
                or any(not isinstance(s, int) for s in x.shape)):
            return general(x, kernel_size, stride, padding, dilation, ceil_mode)
        strides = _as_list(stride, dims, kernel)
        pads, dilations = _as_list(padding, dims), _as_list(dilation, dims)
        spatial = list(x.shape[-dims:])
        out = [pooling_output_shape(spatial[d], kernel[d], pads[d], strides[d], dilations[d],
                                    ceil_mode) for d in range(dims)]
        # Pad with -inf so every window offset's slice is in range; crop what no window
        # reads (a stride larger than the window leaves the end unread).
        needed = [(out[d] - 1) * strides[d] + dilations[d] * (kernel[d] - 1) + 1
                  for d in range(dims)]
        padded = x
        for d in range(dims):
            axis = 2 + d
            after = needed[d] - spatial[d] - pads[d]
            if pads[d] or after > 0:
                padded = aten.constant_pad_nd.default(
                    padded, [0, 0] * (dims - 1 - d) + [pads[d], max(after, 0)], -math.inf)
        first = _first_window_positions(x, [*x.shape[:2], *out], dims,
                                        _max_pool_starts(x, dims, kernel_size, stride,
                                                         padding, dilation))
        values = aten.full.default([1] * (dims + 2), -math.inf, dtype=x.dtype,
                                   device=x.device)
        indices = first
        for offset in itertools.product(*(range(k) for k in kernel)):
            window = padded
            position = None
            for d, k in enumerate(offset):
                start = k * dilations[d]
                window = aten.slice.Tensor(window, 2 + d, start,
                                           start + (out[d] - 1) * strides[d] + 1, strides[d])
                coordinate = aten.add.Scalar(
                    aten.arange.start_step(0, out[d] * strides[d], strides[d],
                                           dtype=torch.int64, device=x.device),
                    start - pads[d])
                shape = [1] * dims
                shape[d] = out[d]
                term = aten.view.default(aten.mul.Scalar(coordinate, math.prod(spatial[d + 1:])),
                                         shape)
                position = term if position is None else aten.add.Tensor(position, term)
            takes = aten.logical_or.default(aten.gt.Tensor(window, values),
                                            aten.isnan.default(window))
            values = aten.where.self(takes, window, values)
            indices = aten.where.self(takes, position, indices)
        return values, indices
    return decomposition


_MAX_POOL_2D = aten.max_pool2d_with_indices.default
_MAX_POOL_3D = aten.max_pool3d_with_indices.default
decomposes(_MAX_POOL_2D)(_max_pool_by_window_offsets(
    2, _pool_with_eager_indices(_MAX_POOL_2D, 2, _max_pool_starts)))
decomposes(_MAX_POOL_3D)(_max_pool_by_window_offsets(
    3, _pool_with_eager_indices(_MAX_POOL_3D, 3, _max_pool_starts,
                                decomposition_table[_MAX_POOL_3D])))
for _adaptive, _dims in ((aten.adaptive_max_pool2d.default, 2),
                         (aten.adaptive_max_pool3d.default, 3)):
    decomposes(_adaptive)(_pool_with_eager_indices(_adaptive, _dims, _adaptive_pool_starts,
                                                   fix_values=True))
