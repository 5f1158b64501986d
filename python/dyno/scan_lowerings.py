"""Scans torch-mlir does not lower (cummax, cummin) or lowers in a way that overflows
(logcumsumexp), as scans with their own combiners (see aten_lowerings)."""
from .aten_lowerings import TensorType, Unsupported, dimension, lowering
from .errors import DynoCompileError


def _running_extreme(island, operands, results, greater: bool):
    """aten.cummax/cummin (ATen's cummax_cummin_helper, ReduceOpsKernel.cpp): the running
    value moves to the current element when it is NaN, or when the running value is not
    NaN and the element is >= (cummax) or <= (cummin) it; the index follows it.

    The index is where the running value last moved. The running value at i equals x[i]
    exactly when it moved there (if it stayed, x[i] is strictly beyond it or it is NaN
    while x[i] is not) unless x[i] is NaN, which always moves it; so the index is a
    running maximum of `i if x[i] == value[i] or x[i] is NaN else 0`."""
    x, dim_operand = operands
    values_type, indices_type = results
    if not x.is_tensor or x.tensor.element not in ("f32", "f64") or \
            indices_type.element != "i64":
        raise Unsupported()
    dim = dimension(dim_operand, x.tensor.rank) if x.tensor.rank else 0
    b = island.builder
    source = island.to_builtin(x)
    if x.tensor.rank == 0:  # a scalar is its own running value, at index 0
        zeros = island.elementwise([], indices_type, "i64", lambda args, index: b.constant(0, "i64"))
        return [(source, values_type.builtin()), (zeros, indices_type.builtin())]

    def combine(running, current):
        beyond = current.ge(running) if greater else current.le(running)
        moves = current.isnan() | (b.not_(running.isnan()) & beyond)
        return b.select(moves, current, running)

    values = island.scan(source, x.tensor, dim, combine, 0.0)

    def moved_at(args, index):
        element, running = args
        moved = element.eq(running) | element.isnan()
        return b.select(moved, index(dim), 0)

    positions = island.elementwise([(source, x.tensor), (values, values_type)], indices_type,
                                   "i64", moved_at)
    indices = island.scan(positions, indices_type, dim,
                          lambda running, current: b.op(
                              f"arith.maxsi {running.name}, {current.name} : i64", "i64"), 0)
    return [(values, values_type.builtin()), (indices, indices_type.builtin())]


@lowering("torch.aten.cummax")
def cummax(island, operands, results):
    return _running_extreme(island, operands, results, greater=True)


@lowering("torch.aten.cummin")
def cummin(island, operands, results):
    return _running_extreme(island, operands, results, greater=False)


@lowering("torch.aten.logcumsumexp")
def logcumsumexp(island, operands, results):
    """ATen's CPU kernel (logcumsumexp_cpu_kernel): cum = _log_add_exp_helper(x, cum) from
    cum = -inf, in double (at::acc_type<float, false>):
      min, max = (y, y) if y is NaN else (std::min(x, y), std::max(x, y))
      log1p(exp(min - max)) + max   if min != max or min is finite, else x
    (std::min(x, y) is `y < x ? y : x`, std::max(x, y) is `x < y ? y : x`). The first
    step from -inf gives x itself, which is what an inclusive scan starts from."""
    x, dim_operand = operands
    (result,) = results
    if result.element not in ("f32", "f64") or x.tensor.element != result.element:
        # torch-mlir would compute log(cumsum(exp(x))), which overflows where exp(x) does.
        raise DynoCompileError("frontend", f"aten.logcumsumexp of {x.tensor.element} runs "
                               "eagerly: Dyno lowers it for f32 and f64 only")
    element = result.element
    b = island.builder
    source = island.to_builtin(x)
    if x.tensor.rank == 0:
        return [(source, result.builtin())]
    dim = dimension(dim_operand, x.tensor.rank)
    wide_type = TensorType(x.tensor.torch.replace(f",{x.tensor.element}>", ",f64>"))
    wide = island.elementwise([(source, x.tensor)], wide_type, "f64",
                              lambda args, index: args[0].to("f64"))

    def combine(y, x):
        y_nan = y.isnan()
        low = b.select(y_nan, y, b.select(y.lt(x), y, x))
        high = b.select(y_nan, y, b.select(x.lt(y), y, x))
        finite = b.math("absf", low).lt(float("inf"))
        general = b.math("log1p", b.math("exp", low - high)) + high
        return b.select(low.ne(high) | finite, general, x)

    scanned = island.scan(wide, wide_type, dim, combine, float("-inf"))
    if element == "f64":
        return [(scanned, result.builtin())]
    narrow = island.elementwise([(scanned, wide_type)], result, element,
                                lambda args, index: args[0].to(element))
    return [(narrow, result.builtin())]
