"""The prelude of every Triton kernels module Dyno generates (dyno-translate
--mlir-to-triton prints this file's text before the kernels; TritonPrelude.inc embeds it
at build time, lib/Target/Triton/CMakeLists.txt).

Combine functions for reductions Triton has no builtin with ATen's semantics for
(NaN-propagating max/min, NaN-ignoring maxnum/minnum, product, logical and), and the
helpers the kernels call. It needs only triton.
"""
import triton
import triton.language as tl


@triton.jit
def _dyno_max(a, b):
    return tl.where((a != a) | (a > b), a, b)


@triton.jit
def _dyno_min(a, b):
    return tl.where((a != a) | (a < b), a, b)


@triton.jit
def _dyno_maxnum(a, b):
    return tl.where((b != b) | (a > b), a, b)


@triton.jit
def _dyno_minnum(a, b):
    return tl.where((b != b) | (a < b), a, b)


@triton.jit
def _dyno_prod(a, b):
    return a * b


@triton.jit
def _dyno_and(a, b):
    return a & b


@triton.jit
def _dyno_or(a, b):
    return a | b


@triton.jit
def _dyno_sum(a, b):
    return a + b


@triton.jit
def _dyno_scan_int_max(a, b):
    return tl.maximum(a, b)


@triton.jit
def _dyno_scan_int_min(a, b):
    return tl.minimum(a, b)


@triton.jit
def _dyno_xor(a, b):
    return a ^ b


@triton.jit
def _dyno_bitonic_step(x, STAGE: tl.constexpr, J: tl.constexpr):
    # One compare-exchange step of a bitonic sort along dimension 1 of a 2-d block:
    # lanes 2**J apart pair up; within blocks of 2**(STAGE+1) lanes the order alternates.
    X: tl.constexpr = x.shape[0]
    N: tl.constexpr = x.shape[1]
    pairs = tl.reshape(x, [X, N >> (J + 1), 2, 1 << J])
    side = tl.arange(0, 2)[None, None, :, None]
    low = tl.reduce(tl.where(side == 0, pairs, 0), 2, _dyno_sum, keep_dims=True)
    high = tl.reduce(tl.where(side == 1, pairs, 0), 2, _dyno_sum, keep_dims=True)
    low = tl.reshape(tl.broadcast_to(low, [X, N >> (J + 1), 2, 1 << J]), [X, N])
    high = tl.reshape(tl.broadcast_to(high, [X, N >> (J + 1), 2, 1 << J]), [X, N])
    position = tl.arange(0, N)[None, :]
    takes_larger = (((position >> J) & 1) != 0) != (((position >> STAGE) & 1) != 0)
    return tl.where(takes_larger, tl.maximum(low, high), tl.minimum(low, high))


@triton.jit
def _dyno_sort(x):
    # Ascending bitonic sort of each row of a 2-d block of integer keys (rows of up to
    # 16384 lanes, a power of 2). Triton's tl.sort is a jit function of its standard library, which a
    # kernel interpreted on its own (Dyno's CPU-tensor path) cannot call.
    N: tl.constexpr = x.shape[1]
    for stage in tl.static_range(1, 15):
        if (1 << stage) <= N:
            for j in tl.static_range(stage):
                x = _dyno_bitonic_step(x, stage, stage - 1 - j)
    return x


@triton.jit
def _dyno_copysign(a, b):
    # The magnitude of a with the sign bit of b (also of -0.0 and of a negative NaN).
    a, b = tl.broadcast(a, b)
    if a.dtype == tl.float64:
        ua = a.to(tl.uint64, bitcast=True)
        ub = b.to(tl.uint64, bitcast=True)
        return (((ua << 1) >> 1) | ((ub >> 63) << 63)).to(tl.float64, bitcast=True)
    ua = a.to(tl.float32).to(tl.uint32, bitcast=True)
    ub = b.to(tl.float32).to(tl.uint32, bitcast=True)
    return (((ua << 1) >> 1) | ((ub >> 31) << 31)).to(tl.float32, bitcast=True).to(a.dtype)


@triton.jit
def _dyno_rounded(x, HALF_TO_EVEN: tl.constexpr):
    # Exact rounding (upstream's expansion computes trunc(x + 0.5), which rounds
    # 0.49999997 to 1). Half to even: |x| + 2^23 - 2^23 (2^52 for float64) rounds
    # |x| < 2^23 in round-to-nearest-even arithmetic. Half away from zero: |x| - floor(|x|)
    # is exact there. Larger magnitudes are integers already.
    if x.dtype == tl.float64:
        v = x
        big = 4503599627370496.0
    else:
        v = x.to(tl.float32)
        big = 8388608.0
    a = tl.abs(v)
    if HALF_TO_EVEN:
        r = (a + big) - big
    else:
        f = tl.floor(a)
        r = tl.where(a - f >= 0.5, f + 1, f)
    r = tl.where(v < 0, -r, r)
    return tl.where((a >= big) | (v == 0), v, r).to(x.dtype)


@triton.jit
def _dyno_roundeven(x):
    return _dyno_rounded(x, True)


@triton.jit
def _dyno_round(x):
    return _dyno_rounded(x, False)


@triton.jit
def _dyno_signbit(x):
    if x.dtype == tl.float64:
        return (x.to(tl.uint64, bitcast=True) >> 63) == 1
    return (x.to(tl.float32).to(tl.uint32, bitcast=True) >> 31) == 1


@triton.jit
def _dyno_pow(a, b):
    # C99 pow, as eager's: exp(b log|a|) with the sign of a negative base for odd integer
    # exponents, NaN for a finite negative base and a non-integer exponent, and 1 for
    # pow(x, 0), pow(1, y) and pow(-1, +-inf). (Upstream's expansion, exp(b log a), gave
    # NaN for pow(-2, 3), pow(0, 0) and pow(1, nan).) A constant operand is a 0-d tensor;
    # the interpreter cannot combine booleans of a block and of a 0-d tensor: broadcast.
    a, b = tl.broadcast(a, b)
    # exp(b log|a|) in float64 for narrower types: its error grows with |b log a| (2e-6
    # relative at 1e14 in float32), which a later cancellation magnifies (fuzzer seed 249).
    if a.dtype == tl.float64:
        r = tl.exp(b * tl.log(tl.abs(a)))
    else:
        r = tl.exp(b.to(tl.float64) * tl.log(tl.abs(a).to(tl.float64))).to(a.dtype)
    integer = tl.floor(b) == b
    odd = integer & (tl.floor(b * 0.5) * 2.0 != b)
    r = tl.where(_dyno_signbit(a) & odd, -r, r)
    r = tl.where((a < 0) & (a != float("-inf")) & (b == b) & ~integer, float("nan"), r)
    r = tl.where((a == -1.0) & (tl.abs(b) == float("inf")), 1.0, r)
    return tl.where((b == 0) | (a == 1.0), 1.0, r)


# Hyperbolic functions. Upstream's expansions lose the sign and overflow (asinh(-1e4) gave
# -inf, acosh(-1e4) -inf instead of NaN) or all relative accuracy near 0 (sinh, tanh and
# atanh of 1e-8 gave 0); these follow the usual careful forms, odd ones on |x| with the
# sign copied back.
@triton.jit
def _dyno_log1p(y):
    # log(1 + y) for y >= 0 (Goldberg: the rounding of 1 + y cancels).
    u = 1.0 + y
    r = tl.log(u) * y / (u - 1.0)
    r = tl.where(u == 1.0, y, r)
    return tl.where(u == float("inf"), u, r)


@triton.jit
def _dyno_expm1(x):
    # exp(x) - 1 (Kahan: (u - 1) * x / log(u) with u = exp(x)).
    u = tl.exp(x)
    r = (u - 1.0) * x / tl.log(u)
    r = tl.where(u == 1.0, x, r)
    r = tl.where(u == 0.0, -1.0, r)
    return tl.where(u == float("inf"), u, r)


@triton.jit
def _dyno_sinh(x):
    a = tl.abs(x)
    e = _dyno_expm1(a)
    r = 0.5 * (e + e / (e + 1.0))
    h = tl.exp(0.5 * a)
    r = tl.where(a > 88.0, h * (0.5 * h), r)  # exp(a) / 2 without overflowing exp(a)
    return _dyno_copysign(r, x)


@triton.jit
def _dyno_cosh(x):
    a = tl.abs(x)
    r = 0.5 * (tl.exp(a) + tl.exp(-a))
    h = tl.exp(0.5 * a)
    return tl.where(a > 88.0, h * (0.5 * h), r)


@triton.jit
def _dyno_tanh(x):
    if x.dtype == tl.float32:
        return _dyno_tanh_f32(x)
    a = tl.abs(x)
    e = _dyno_expm1(2.0 * a)
    r = tl.where(a > 20.0, 1.0, e / (e + 2.0))
    return _dyno_copysign(r, x)


@triton.jit
def _dyno_tanh_f32(x):
    # Eigen's float tanh (generic_fast_tanh_float):
    # an odd degree-13 over an even degree-6 polynomial on [-7.9053, 7.9053], beyond
    # which tanh rounds to +-1; x itself below 4e-4 (so tiny values and -0.0 keep their
    # bits). One division where the expm1 form took an exp, a log and two: GPT-2's GELU
    # kernel spent 1.7x Inductor's time (libdevice's tanh) on an H200.
    c = tl.minimum(tl.maximum(x, -7.90531110763549805), 7.90531110763549805)
    x2 = c * c
    p = x2 * -2.76076847742355e-16 + 2.00018790482477e-13
    p = p * x2 + -8.60467152213735e-11
    p = p * x2 + 5.12229709037114e-08
    p = p * x2 + 1.48572235717979e-05
    p = p * x2 + 6.37261928875436e-04
    p = p * x2 + 4.89352455891786e-03
    q = x2 * 1.19825839466702e-06 + 1.18534705686654e-04
    q = q * x2 + 2.26843463243900e-03
    q = q * x2 + 4.89352518554385e-03
    r = (p * c) / q
    r = tl.where(tl.abs(x) < 0.0004, x, r)
    return tl.where(x != x, x, r)  # NaN stays NaN (the clamp would drop it)


@triton.jit
def _dyno_asinh(x):
    a = tl.abs(x)
    # log1p(a + a^2 / (1 + sqrt(1 + a^2))); log(2a) where a^2 would overflow
    r = _dyno_log1p(a + a * a / (1.0 + tl.sqrt(1.0 + a * a)))
    r = tl.where(a > 1.0e18, tl.log(a) + 0.6931471805599453, r)
    return _dyno_copysign(r, x)


@triton.jit
def _dyno_acosh(x):
    t = x - 1.0
    # log1p(t + sqrt(2t + t^2)); log(2x) where x^2 would overflow; NaN below 1
    r = _dyno_log1p(t + tl.sqrt(2.0 * t + t * t))
    r = tl.where(x > 1.0e18, tl.log(x) + 0.6931471805599453, r)
    return tl.where(x < 1.0, float("nan"), r)


@triton.jit
def _dyno_atanh(x):
    a = tl.abs(x)
    # 0.5 * log1p(2a / (1 - a)): +inf at 1, NaN above
    r = 0.5 * _dyno_log1p(2.0 * a / (1.0 - a))
    r = tl.where(a == 1.0, float("inf"), r)
    r = tl.where(a > 1.0, float("nan"), r)
    return _dyno_copysign(r, x)


# tl.pick_reduce: (value, position) pairs; the larger (smaller) value wins, and of equal
# values the smaller (_first) or larger position. Values are never NaN here.
@triton.jit
def _dyno_pick_max_first(v1, p1, v2, p2):
    second = (v2 > v1) | ((v2 == v1) & (p2 < p1))
    return tl.where(second, v2, v1), tl.where(second, p2, p1)


@triton.jit
def _dyno_pick_max_last(v1, p1, v2, p2):
    second = (v2 > v1) | ((v2 == v1) & (p2 > p1))
    return tl.where(second, v2, v1), tl.where(second, p2, p1)


@triton.jit
def _dyno_pick_min_first(v1, p1, v2, p2):
    second = (v2 < v1) | ((v2 == v1) & (p2 < p1))
    return tl.where(second, v2, v1), tl.where(second, p2, p1)


@triton.jit
def _dyno_pick_min_last(v1, p1, v2, p2):
    second = (v2 < v1) | ((v2 == v1) & (p2 > p1))
    return tl.where(second, v2, v1), tl.where(second, p2, p1)


# Reductions go through tl.reduce with these combine functions, not tl.sum and friends:
# those are @triton.jit functions of triton.language itself, which cannot run when only
# these kernels are interpreted (TRITON_INTERPRET=1 is read when triton is imported).
# Triton's own combine functions, where it has them, have fast interpreter paths.
_dyno_sum = getattr(tl.standard, "_sum_combine", _dyno_sum)
_dyno_prod = getattr(tl.standard, "_prod_combine", _dyno_prod)
_dyno_int_max = getattr(tl.standard, "_elementwise_max", _dyno_maxnum)
_dyno_int_min = getattr(tl.standard, "_elementwise_min", _dyno_minnum)

