"""Static layouts of the wrapper's views: which strides a view of a dense buffer has,
so that a chain of views (a transpose, then a reshape) is made by one call.

A wrapper's tensor views cost host time per call: on an H200 server `permute` or
`reshape` 2.0-2.6 us each, `as_strided` 3.8 us, and `torch._C._dynamo.guards.
_reinterpret_tensor` (what Inductor's wrappers call) 1.6 us. Llama's bench configuration
made 78 views per call, most of them a reshape of a permute of a kernel's output. Where
the wrapper knows a view's source as (dense buffer, shape, strides, offset), the view is
made from the buffer itself (`_view`, host_runtime.view) and the intermediate views are
not made at all.

A layout is (root, shape, strides, offset): the view is `root` (a dense row-major buffer
the wrapper allocated, or a library matmul's result) seen with `shape` and element
`strides`, starting `offset` elements into it.
"""
from typing import Optional, Sequence, Tuple

Layout = Tuple[str, Tuple[int, ...], Tuple[int, ...], int]


def dense_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def is_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """As torch's is_contiguous: the row-major strides, sizes of 1 aside."""
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def permuted(layout: Layout, permutation: Sequence[int]) -> Layout:
    root, shape, strides, offset = layout
    return (root, tuple(shape[i] for i in permutation),
            tuple(strides[i] for i in permutation), offset)


def reshaped(layout: Layout, new_shape: Sequence[int]) -> Optional[Layout]:
    """The layout of `reshape(new_shape)` when it is a view (torch's computeStride: each
    run of source dimensions that one group of result dimensions covers must be
    contiguous in memory), else None (reshape copies)."""
    root, shape, strides, offset = layout
    new_shape = tuple(new_shape)
    if 0 in shape or 0 in new_shape:
        return None
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1] if strides else 1
    tensor_numel, view_numel = 1, 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and
                             strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = strides[tensor_d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return root, new_shape, tuple(new_strides), offset


def sliced(layout: Layout, offsets: Sequence[int], sizes: Sequence[int],
           steps: Sequence[int], kept: Sequence[bool]) -> Layout:
    """The layout of a static slice (tensor.extract_slice): `offsets`, `sizes` and
    `steps` per source dimension, `kept[d]` False where a rank-reducing slice drops
    dimension d (its size is 1). Always a view."""
    root, shape, strides, offset = layout
    new_offset = offset + sum(o * s for o, s in zip(offsets, strides))
    new_shape = tuple(size for size, keep in zip(sizes, kept) if keep)
    new_strides = tuple(stride * step
                        for stride, step, keep in zip(strides, steps, kept) if keep)
    return root, new_shape, new_strides, new_offset
