"""Ops that read or write a float's bits (torch-mlir lowers none: it would need
aten.view.dtype), as elementwise ops with arith.bitcast (see aten_lowerings)."""
from .aten_lowerings import _BITS, Unsupported, lowering

_INTEGER_OF = {"f16": "i16", "bf16": "i16", "f32": "i32", "f64": "i64"}
_SIGN_BIT = {"f16": -(2 ** 15), "bf16": -(2 ** 15), "f32": -(2 ** 31), "f64": -(2 ** 63)}
# Fraction bits and exponent bias (of frexp's mantissa in [0.5, 1)) per float type.
_FRACTION_AND_BIAS = {"f16": (10, 14), "bf16": (7, 126), "f32": (23, 126), "f64": (52, 1022)}


def _bit_float_result(result) -> str:
    """The float type a bit-level op works in: its result's own (these ops are exact in
    any float type; dyno-widen-low-precision-floats computes their arithmetic in f32 and
    keeps the bitcasts in the narrow type)."""
    if result.element not in _INTEGER_OF:
        raise Unsupported()
    return result.element


def _tensor_inputs(island, operands, element):
    """Builtin tensors of the tensor operands, and for each operand a function giving
    its element (converted to `element`) from the generic body's arguments."""
    inputs, getters = [], []
    for operand in operands:
        if operand.is_tensor:
            position = len(inputs)
            inputs.append((island.to_builtin(operand), operand.tensor))
            getters.append(lambda args, position=position: args[position].to(element))
        else:
            scalar = island.scalar(operand)
            getters.append(lambda args, scalar=scalar: scalar.to(element))
    return inputs, getters


@lowering("torch.aten.signbit")
def signbit(island, operands, results):
    """std::signbit: the sign bit, also of -0.0 and of NaNs."""
    (x,), (result,) = operands, results
    element = x.tensor.element if x.is_tensor else None
    if element not in _INTEGER_OF:
        raise Unsupported()
    b = island.builder
    source = island.to_builtin(x)
    integer = _INTEGER_OF[element]
    value = island.elementwise([(source, x.tensor)], result, "i1",
                               lambda args, index: b.bitcast(args[0], integer).lt(0))
    return [(value, result.builtin())]


@lowering("torch.aten.copysign.Tensor", "torch.aten.copysign.Scalar")
def copysign(island, operands, results):
    """std::copysign in the promoted float type (a Scalar `other` is a double, cast)."""
    (result,) = results
    element = _bit_float_result(result)
    b = island.builder
    inputs, (magnitude, sign) = _tensor_inputs(island, operands, element)
    value = island.elementwise(inputs, result, element,
                               lambda args, index: b.math("copysign", magnitude(args),
                                                          sign(args)))
    return [(value, result.builtin())]


@lowering("torch.aten.frexp.Tensor")
def frexp(island, operands, results):
    """std::frexp: x = mantissa * 2^exponent with |mantissa| in [0.5, 1); zero, infinities
    and NaN give (x, 0). A subnormal x is first scaled by 2^(mantissa bits + 2), exactly,
    so that its exponent field is nonzero."""
    (x,) = operands
    mantissa_type, exponent_type = results
    element = _bit_float_result(mantissa_type)
    if not x.is_tensor or x.tensor.element != element or exponent_type.element != "i32":
        raise Unsupported()
    b = island.builder
    integer = _INTEGER_OF[element]
    fraction_bits, bias = _FRACTION_AND_BIAS[element]
    exponent_mask = (1 << (_BITS[element] - 1 - fraction_bits)) - 1
    source = island.to_builtin(x)

    def fields(x):
        bits = b.bitcast(x, integer)
        field = bits.shift_right_unsigned(fraction_bits) & exponent_mask
        return bits, field

    def parts(x):
        _, field = fields(x)
        subnormal = field.eq(0)
        scaled = b.select(subnormal, x * float(2 ** (fraction_bits + 2)), x)
        bits, scaled_field = fields(scaled)
        exponent = scaled_field - b.select(subnormal, b.constant(bias + fraction_bits + 2, integer), bias)
        keep = (bits & ~(exponent_mask << fraction_bits)) | (bias << fraction_bits)
        special = x.eq(0) | field.eq(exponent_mask)  # zero, infinity, NaN
        mantissa = b.select(special, x, b.bitcast(keep, element))
        return mantissa, b.select(special, b.constant(0, integer), exponent)

    mantissa = island.elementwise([(source, x.tensor)], mantissa_type, element,
                                  lambda args, index: parts(args[0])[0])
    exponent = island.elementwise([(source, x.tensor)], exponent_type, "i32",
                                  lambda args, index: parts(args[0])[1].to("i32"))
    return [(mantissa, mantissa_type.builtin()), (exponent, exponent_type.builtin())]


@lowering("torch.aten.nextafter")
def nextafter(island, operands, results):
    """std::nextafter(a, b): the next representable value after a towards b; NaN if
    either is NaN, b if they are equal, the smallest subnormal with b's sign after a
    zero; otherwise a's bits move by one (up when moving away from zero)."""
    (result,) = results
    element = _bit_float_result(result)
    b = island.builder
    integer = _INTEGER_OF[element]
    inputs, (first, second) = _tensor_inputs(island, operands, element)

    def next_after(args):
        a, towards = first(args), second(args)
        bits = b.bitcast(a, integer)
        away = b.not_(a.lt(towards) ^ a.gt(0.0))
        stepped = b.bitcast(b.select(away, bits + 1, bits - 1), element)
        smallest = b.bitcast((b.bitcast(towards, integer) & _SIGN_BIT[element]) | 1, element)
        value = b.select(a.eq(0.0), smallest, stepped)
        value = b.select(a.eq(towards), towards, value)
        return b.select(a.isnan() | towards.isnan(), a + towards, value)

    value = island.elementwise(inputs, result, element, lambda args, index: next_after(args))
    return [(value, result.builtin())]
