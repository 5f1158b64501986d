"""Triton's interpreter (TRITON_INTERPRET=1), which runs kernels on CPU tensors: turned on
for one kernels file's import, and corrected where it departs from a GPU's results or is
needlessly slow. Interpreted runs only; compiled kernels never meet this."""
import contextlib
import os

import torch
import triton


@contextlib.contextmanager
def interpreted(enabled: bool):
    """Makes `@triton.jit` build interpreted kernels (TRITON_INTERPRET=1) or compiled ones
    while a kernels module is imported, without changing how any other Triton code in the
    process runs."""
    knobs = getattr(triton, "knobs", None)
    if knobs is not None and hasattr(knobs.runtime, "scope"):
        with knobs.runtime.scope():
            knobs.runtime.interpret = enabled
            yield
        return
    if not enabled:
        yield
        return
    previous = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        yield
    finally:
        if previous is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = previous


def _fold_reduce_over_blocks(self, input):
    """Triton's interpreter reduces with a custom combine function one element at a time
    in Python (ReduceOps.generic_reduce): 1.4 s for a 512x4 max in a pooling kernel. This
    folds along the axis in the same order (the accumulator first, positions 0, 1, ...),
    calling the combine function on whole slices: the same values, vectorized."""
    import numpy as np
    import triton.language as tl

    original_axis = self.axis
    input, axis = self.unravel(input, self.axis)
    data = [arg.handle.data for arg in input]
    accumulators = [np.take(d, 0, axis=axis) for d in data]
    for position in range(1, data[0].shape[axis]):
        combined = self.combine_fn.fn(
            *(self.to_tensor(a, arg.dtype) for a, arg in zip(accumulators, input)),
            *(self.to_tensor(np.take(d, position, axis=axis), arg.dtype)
              for d, arg in zip(data, input)))
        combined = combined if isinstance(combined, tuple) else (combined,)
        values = [c.handle.data if isinstance(c, tl.core.tensor) else np.asarray(c, dtype=a.dtype)
                  for c, a in zip(combined, accumulators)]
        # A 1-d block reduced to a scalar (tl.any's): the combined value comes back with
        # one element in a shape of its own.
        values = [v.reshape(a.shape) if v.shape != a.shape and v.size == a.size else v
                  for v, a in zip(values, accumulators)]
        accumulators = [np.broadcast_to(v, a.shape).astype(a.dtype, copy=False)
                        for v, a in zip(values, accumulators)]
    results = []
    for accumulator, arg in zip(accumulators, input):
        if self.keep_dims:
            if original_axis is not None:
                accumulator = np.expand_dims(accumulator, axis)
            else:
                for _ in range(len(data[0].shape)):
                    accumulator = np.expand_dims(accumulator, 0)
        elif original_axis is None:
            accumulator = accumulator.item()
        results.append(self.to_tensor(np.ascontiguousarray(accumulator)
                                      if isinstance(accumulator, np.ndarray) else accumulator,
                                      arg.dtype))
    return results


def _round_casts_into_bf16(self, src, dst_type):
    """Casts into and out of bf16 as the GPU does them. Triton's interpreter stores bf16
    as uint16 bits: it truncates float32 into them (the GPU's `cvt.rn.bf16.f32` rounds to
    nearest even), widens subnormal bf16 to wrong values (3e-39 became 3.7e-40), and any
    other source (float64, integers, booleans) kept the value as the bits (2.0 became
    1.8e-40). Into bf16, torch rounds once to nearest even, keeping subnormals (checked on
    an H200 with triton 3.6: f32, f64, int64, int32 and int8 sources); out of bf16 into
    float32, the bits are shifted into place, exactly."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    source = src.dtype.scalar
    if dst_type.scalar == tl.bfloat16 and source != tl.bfloat16 and \
            src.data.dtype.name in _TORCH_READS_FROM_NUMPY:
        # (ascontiguousarray makes 0-d data 1-d: the shape is put back.)
        data = np.ascontiguousarray(src.data)
        bits = torch.from_numpy(data).to(torch.bfloat16).view(torch.int16).numpy()
        return interpreter.TensorHandle(bits.view(np.uint16).reshape(src.data.shape),
                                        tl.bfloat16)
    if source == tl.bfloat16 and dst_type.scalar == tl.float32:
        return _bf16_widened(src)
    return _interpreted_cast(self, src, dst_type)


def _bf16_widened(handle):
    """An interpreter tensor of bf16 (uint16 bits) as the float32 values they are: the bits
    shifted into place, exactly."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    bits = np.ascontiguousarray(handle.data).astype(np.uint32) << np.uint32(16)
    return interpreter.TensorHandle(bits.view(np.float32).reshape(handle.data.shape),
                                    tl.float32)


_FLOAT_COMPARISONS = ("OLT", "OGT", "OLE", "OGE", "OEQ", "ONE", "ULT", "UGT", "ULE", "UGE",
                      "UEQ", "UNE")


def _compares_bf16_as_floats(compare):
    """A float comparison of the interpreter that compares bf16 operands as the values
    they are. It stores bf16 as uint16 bits and compared those: a NaN equalled itself and
    -1.0 was above 1.0 (a bf16 sort key's NaN check failed, so that a NaN with its sign
    bit set, which eager's vectorized float -> bf16 conversion makes on AMD Zen 4, sorted
    first: masked.median returned NaN). The GPU compares bf16 as floats."""
    import triton.language as tl

    def compare_as_floats(self, lhs, rhs):
        if lhs.dtype.scalar == tl.bfloat16:
            lhs, rhs = _bf16_widened(lhs), _bf16_widened(rhs)
        return compare(self, lhs, rhs)

    compare_as_floats.dyno_bf16_as_floats = True
    return compare_as_floats


_TORCH_READS_FROM_NUMPY = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8",
                           "bool")
_interpreted_cast = None


def correct_the_interpreter():
    """Patches Triton's interpreter (interpreted runs only): vectorized reductions, casts
    into bf16 rounded as on the GPU, bf16 compared as floats, and device assertions
    checked."""
    global _interpreted_cast
    from triton.runtime import interpreter

    reduce_ops = getattr(interpreter, "ReduceOps", None)
    if reduce_ops is not None and hasattr(reduce_ops, "generic_reduce") and \
            reduce_ops.generic_reduce is not _fold_reduce_over_blocks:
        reduce_ops.generic_reduce = _fold_reduce_over_blocks
    # Dyno's kernels assert their indices (tl.device_assert, kept by Triton only in
    # debug mode); integer overflow checks, which debug mode also asks for, stay off.
    # (Triton's interpreter keeps one builder for the process: other interpreted Triton
    # code in it asserts too.)
    shared_builder = getattr(interpreter, "interpreter_builder", None)
    options = getattr(shared_builder, "options", None)
    if options is not None:
        import dataclasses
        changes = {"debug": True}
        if getattr(options, "sanitize_overflow", False):
            changes["sanitize_overflow"] = False
        if any(getattr(options, key) != value for key, value in changes.items()):
            shared_builder.options = dataclasses.replace(options, **changes)
    builder = getattr(interpreter, "InterpreterBuilder", None)
    if builder is not None and hasattr(builder, "cast_impl") and \
            builder.cast_impl is not _round_casts_into_bf16:
        _interpreted_cast = builder.cast_impl
        builder.cast_impl = _round_casts_into_bf16
    for predicate in _FLOAT_COMPARISONS if builder is not None else ():
        compare = getattr(builder, f"create_fcmp{predicate}", None)
        if compare is not None and not getattr(compare, "dyno_bf16_as_floats", False):
            setattr(builder, f"create_fcmp{predicate}", _compares_bf16_as_floats(compare))
