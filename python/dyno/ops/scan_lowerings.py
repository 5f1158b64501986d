"""Scans torch-mlir does not lower (cummax, cummin) or lowers in a way that overflows
(logcumsumexp), as scans with their own combiners (see aten_lowerings)."""
from .aten_lowerings import TensorType, Unsupported, dimension, lowering
from ..errors import DynoCompileError


def _running_extreme(island, operands, results, greater: bool):
    """aten.cummax/cummin (ATen's cummax_cummin_helper, ReduceOpsKernel.cpp): the running
    value moves to the current element when it is NaN, or when the running value is not
    NaN and the element is >= (cummax) or <= (cummin) it; the index follows it.

    One scan over int64 keys computes both: a key holds an order-preserving image of the
    element (-0.0 as +0.0, so that zeros tie; reversed for cummin; every NaN above all
    numbers) above its position, and a running maximum of keys picks the extreme with the
    latest position among ties, and the latest NaN once there is one, as ATen's loop
    does. The index is the key's low half; the value is the element at that index. (Two
    scans, values and then where they moved, compared elements with the values: an
    element recomputed in two kernels can differ by an ulp between them, and the indices
    were wrong; found by the fuzzer, seed 273.) float32 only: a float64 image and a
    position do not fit in 64 bits. bf16 and f16 elements are keyed by their (exact)
    float32 values."""
    x, dim_operand = operands
    values_type, indices_type = results
    if (not x.is_tensor or x.tensor.element not in ("f32", "bf16", "f16") or
            indices_type.element != "i64"):
        raise Unsupported()
    element_type = x.tensor.element
    rank = x.tensor.rank
    dim = dimension(dim_operand, rank) if rank else 0
    b = island.builder
    source = island.to_builtin(x)
    if rank == 0:  # a scalar is its own running value, at index 0
        zeros = island.elementwise([], indices_type, "i64", lambda args, index: b.constant(0, "i64"))
        return [(source, values_type.builtin()), (zeros, indices_type.builtin())]

    def key(args, index):
        (element,) = args
        if element_type != "f32":
            element = element.to("f32")
        canonical = b.select(element.eq(0.0), b.constant(0.0, "f32"), element)
        bits = b.bitcast(canonical, "i32").to("i64") & 0xFFFFFFFF  # the float's bits
        negative = bits.ge(0x80000000)
        image = b.select(negative, bits ^ 0xFFFFFFFF, bits | 0x80000000)  # increasing
        if not greater:
            image = image ^ 0xFFFFFFFF  # decreasing: the running maximum is the minimum
        image = b.select(element.isnan(), b.constant(0xFFFFFFFF, "i64"), image)
        shifted = image << 32
        # Signed order of (image << 32) ^ sign bit is the unsigned order of the image.
        return (shifted | index(dim)) ^ b.constant(-(2 ** 63), "i64")

    keys = island.elementwise([(source, x.tensor)], indices_type, "i64", key)
    running = island.scan(keys, indices_type, dim,
                          lambda previous, current: previous.max_signed(current), 0)
    indices = island.elementwise([(running, indices_type)], indices_type, "i64",
                                 lambda args, index: args[0] & 0xFFFFFFFF)

    def gathered(args, index):
        position = args[0].to("index")
        at = [position if d == dim else b.op("linalg.index", [], "index", dim=d)
              for d in range(rank)]
        return b.extract(source, at, element_type)

    values = island.elementwise([(indices, indices_type)], values_type, element_type, gathered)
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
    step from -inf gives x itself, which is what an inclusive scan starts from. bf16 and
    f16 accumulate in float (their acc_type) and round each result."""
    x, dim_operand = operands
    (result,) = results
    accumulators = {"f16": "f32", "bf16": "f32", "f32": "f64", "f64": "f64"}
    if result.element not in accumulators or x.tensor.element != result.element:
        # torch-mlir would compute log(cumsum(exp(x))), which overflows where exp(x) does.
        raise DynoCompileError("frontend", f"aten.logcumsumexp of {x.tensor.element} runs "
                               "eagerly: Dyno lowers it for float types only")
    element = result.element
    accumulator = accumulators[element]
    b = island.builder
    source = island.to_builtin(x)
    if x.tensor.rank == 0:
        return [(source, result.builtin())]
    dim = dimension(dim_operand, x.tensor.rank)
    wide_type = TensorType(x.tensor.torch.replace(f",{x.tensor.element}>", f",{accumulator}>"))
    wide = island.elementwise([(source, x.tensor)], wide_type, accumulator,
                              lambda args, index: args[0].to(accumulator))

    def combine(y, x):
        y_nan = y.isnan()
        low = b.select(y_nan, y, b.select(y.lt(x), y, x))
        high = b.select(y_nan, y, b.select(x.lt(y), y, x))
        finite = b.math("absf", low).lt(float("inf"))
        general = b.math("log1p", b.math("exp", low - high)) + high
        return b.select(low.ne(high) | finite, general, x)

    scanned = island.scan(wide, wide_type, dim, combine, float("-inf"))
    if element == accumulator:
        return [(scanned, result.builtin())]
    narrow = island.elementwise([(scanned, wide_type)], result, element,
                                lambda args, index: args[0].to(element))
    return [(narrow, result.builtin())]
