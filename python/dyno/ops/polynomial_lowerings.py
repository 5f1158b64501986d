"""torch.special's orthogonal polynomials, as ATen computes them (ATen/native/Math.h,
*_polynomial_*_forward): special cases first, a closed form for some |x| < 1, otherwise
the three-term recurrence run n times in a loop (scf.while in the elementwise body, so
each element runs its own n). Written like ATen's source: each `cases` list is its early
returns in order; the recurrence runs only for elements that reach it."""
from .aten_lowerings import Unsupported, float_result, lowering


def _first(b, cases, otherwise):
    """ATen's early returns: the value of the first case whose condition holds."""
    result = otherwise
    for condition, value in reversed(cases):
        result = b.select(condition, value, result)
    return result


def _reaches_recurrence(b, cases):
    reached = b.constant(1, "i1")
    for condition, _ in cases:
        reached = reached & b.not_(condition)
    return reached


def _recurrence(b, cases, n, k_start, keep_going, step, p, q, r, k_step=1):
    """`for (k = k_start; keep_going(k, n, q); k += k_step) { r = step(k, p, q); p = q;
    q = r; } return r;` for elements no case took (the others run no iteration)."""
    runs = _reaches_recurrence(b, cases)
    limit = b.select(runs, n, -1)

    def advance(values):
        k, p, q, _ = values
        nxt = step(k, p, q)
        return [k + k_step, q, nxt, nxt]

    k0 = b.constant(k_start, "i64")
    _, _, _, r = b.while_loop([k0, p, q, r],
                              lambda v: b.and_(keep_going(v[0], limit, v[2]), runs), advance)
    return _first(b, cases, r)


def _until_nan(b):
    return lambda k, n, q: k.le(n) & b.not_(q.isnan())


def _u_closed_form(b, t, n, T):
    """U's closed form at t = cos(theta): sin((n+1) theta) / sin(theta), or, where that
    sine is 0, (n+1) cos((n+1) theta) / t."""
    n1 = (n + 1).to(T)
    theta = b.math("acos", t)
    sin_theta = b.math("sin", theta)
    return b.select(sin_theta.ne(0.0), b.math("sin", n1 * theta) / sin_theta,
                    n1 * b.math("cos", n1 * theta) / t)


def _half_angle_closed_form(b, t, n, T, otherwise, trig):
    """V's (trig "cos") and W's (trig "sin") closed forms at t = cos(theta):
    trig((n+1/2) theta) / trig(theta/2), `otherwise` where the other function of
    theta/2 is 1."""
    other = "sin" if trig == "cos" else "cos"
    theta = b.math("acos", t)
    return b.select(b.math(other, theta / 2.0).ne(1.0),
                    b.math(trig, (n.to(T) + 0.5) * theta) / b.math(trig, theta / 2.0),
                    otherwise)


def _alternating(b, n, T, value):
    """`value` for even n, -`value` for odd n (ATen's `n % 2 == 0 ? v : -v`)."""
    return b.select((n % 2).eq(0), value.to(T), (-value).to(T))


def chebyshev_t(b, x, n, T):
    one = b.constant(1.0, T)
    abs_x = b.math("absf", x)
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (abs_x.eq(1.0), b.select(x.gt(0.0) | (n % 2).eq(0), one, -1.0)),
        (n.gt(6) & abs_x.lt(1.0), b.math("cos", n.to(T) * b.math("acos", x))),
        (n.eq(0), one),
        (n.eq(1), x),
    ]
    return _recurrence(b, cases, n, 2, _until_nan(b),
                       lambda k, p, q: (x + x) * q - p, one, x, x)


def chebyshev_u(b, x, n, T):
    abs_x = b.math("absf", x)
    n1 = (n + 1).to(T)
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (abs_x.eq(1.0), b.select(x.gt(0.0) | (n % 2).eq(0), n1, (-(n + 1)).to(T))),
        (n.gt(8) & abs_x.lt(1.0), _u_closed_form(b, x, n, T)),
        (n.eq(0), b.constant(1.0, T)),
        (n.eq(1), x + x),
    ]
    return _recurrence(b, cases, n, 2, _until_nan(b),
                       lambda k, p, q: (x + x) * q - p, b.constant(1.0, T), x + x, x + x)


def chebyshev_v(b, x, n, T):
    abs_x = b.math("absf", x)
    odd_value = _alternating(b, n, T, n + n + 1)
    first = x + x - 1.0
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (abs_x.eq(1.0), b.select(x.gt(0.0), b.constant(1.0, T), odd_value)),
        (n.gt(8) & abs_x.lt(1.0), _half_angle_closed_form(b, x, n, T, odd_value, "cos")),
        (n.eq(0), b.constant(1.0, T)),
        (n.eq(1), first),
    ]
    return _recurrence(b, cases, n, 2, _until_nan(b),
                       lambda k, p, q: (x + x) * q - p, b.constant(1.0, T), first, first)


def chebyshev_w(b, x, n, T):
    abs_x = b.math("absf", x)
    one = b.constant(1.0, T)
    at_one = b.select(x.gt(0.0), (n + n + 1).to(T), b.select((n % 2).eq(0), one, -1.0))
    first = x + x + 1.0
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (abs_x.eq(1.0), at_one),
        (n.gt(8) & abs_x.lt(1.0), _half_angle_closed_form(b, x, n, T, at_one, "sin")),
        (n.eq(0), one),
        (n.eq(1), first),
    ]
    return _recurrence(b, cases, n, 2, _until_nan(b),
                       lambda k, p, q: (x + x) * q - p, one, first, first)


def _shifted(x):
    return x + x - 1.0


def shifted_chebyshev_t(b, x, n, T):
    s = _shifted(x)
    one = b.constant(1.0, T)
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (x.eq(1.0), one),
        (x.eq(0.0), b.select((n % 2).eq(0), one, -1.0)),
        (n.gt(6) & b.math("absf", s).lt(1.0), b.math("cos", n.to(T) * b.math("acos", s))),
        (n.eq(0), one),
        (n.eq(1), s),
    ]
    return _recurrence(b, cases, n, 2, _until_nan(b),
                       lambda k, p, q: (s + s) * q - p, one, s, s)


def shifted_chebyshev_u(b, x, n, T):
    s = _shifted(x)
    n1 = (n + 1).to(T)
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (x.eq(1.0), n1),
        (x.eq(0.0), _alternating(b, n, T, n + 1)),
        (n.gt(6) & b.math("absf", s).lt(1.0), _u_closed_form(b, s, n, T)),
        (n.eq(0), b.constant(1.0, T)),
        (n.eq(1), s + s),
    ]
    return _recurrence(b, cases, n, 2, _until_nan(b),
                       lambda k, p, q: (s + s) * q - p, b.constant(1.0, T), s + s, s + s)


def shifted_chebyshev_v(b, x, n, T):
    s = _shifted(x)
    signed = _alternating(b, n, T, n + n + 1)
    first = s + s - 1.0
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (x.eq(1.0), b.constant(1.0, T)),
        (x.eq(0.0), signed),
        (n.gt(6) & b.math("absf", s).lt(1.0), _half_angle_closed_form(b, s, n, T, signed, "cos")),
        (n.eq(0), b.constant(1.0, T)),
        (n.eq(1), first),
    ]
    return _recurrence(b, cases, n, 2, _until_nan(b),
                       lambda k, p, q: (s + s) * q - p, b.constant(1.0, T), first, first)


def shifted_chebyshev_w(b, x, n, T):
    s = _shifted(x)
    one = b.constant(1.0, T)
    parity = b.select((n % 2).eq(0), one, -1.0)
    first = s + s + 1.0
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (x.eq(1.0), (n + n + 1).to(T)),
        (x.eq(0.0), parity),
        (n.gt(4) & b.math("absf", s).lt(1.0), _half_angle_closed_form(b, s, n, T, parity, "sin")),
        (n.eq(0), one),
        (n.eq(1), first),
    ]
    return _recurrence(b, cases, n, 2, _until_nan(b),
                       lambda k, p, q: (s + s) * q - p, one, first, first)


# ATen's getHermitianLimit: beyond this degree the Hermite polynomials are NaN.
_HERMITE_LIMIT = {"f32": 128, "f64": 512}


def hermite_h(b, x, n, T):
    nan = b.constant(float("nan"), T)
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (n.eq(0), b.constant(1.0, T)),
        (n.eq(1), x + x),
        (n.gt(_HERMITE_LIMIT[T]), nan),
    ]
    # for (k = 2; k < n + n; k += 2) r = (x + x) * q - k * p  (no NaN check)
    return _recurrence(b, cases, n + n, 2, lambda k, limit, q: k.lt(limit),
                       lambda k, p, q: (x + x) * q - k.to(T) * p,
                       b.constant(1.0, T), x + x, b.constant(0.0, T), k_step=2)


def hermite_he(b, x, n, T):
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (n.eq(0), b.constant(1.0, T)),
        (n.eq(1), x),
        (n.gt(_HERMITE_LIMIT[T]), b.constant(float("nan"), T)),
    ]
    return _recurrence(b, cases, n, 1, lambda k, limit, q: k.lt(limit),
                       lambda k, p, q: x * q - k.to(T) * p, b.constant(1.0, T), x, x)


def laguerre_l(b, x, n, T):
    one = b.constant(1.0, T)
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (b.math("absf", x).eq(0.0), one),
        (n.eq(0), one),
        (n.eq(1), one - x),
    ]
    return _recurrence(
        b, cases, n, 1, lambda k, limit, q: k.lt(limit) & b.not_(q.isnan()),
        lambda k, p, q: (((k + k).to(T) + (one - x)) * q - k.to(T) * p) / (k + 1).to(T),
        one, one - x, one - x)


def legendre_p(b, x, n, T):
    one = b.constant(1.0, T)
    cases = [
        (n.lt(0), b.constant(0.0, T)),
        (b.math("absf", x).eq(1.0), b.select(x.gt(0.0) | (n % 2).eq(0), one, -1.0)),
        (n.eq(0), one),
        (n.eq(1), x),
    ]
    return _recurrence(
        b, cases, n, 1, lambda k, limit, q: k.lt(limit) & b.not_(q.isnan()),
        lambda k, p, q: ((k + k + 1).to(T) * x * q - k.to(T) * p) / (k + 1).to(T),
        one, x, x)


POLYNOMIALS = {
    "chebyshev_polynomial_t": chebyshev_t, "chebyshev_polynomial_u": chebyshev_u,
    "chebyshev_polynomial_v": chebyshev_v, "chebyshev_polynomial_w": chebyshev_w,
    "shifted_chebyshev_polynomial_t": shifted_chebyshev_t,
    "shifted_chebyshev_polynomial_u": shifted_chebyshev_u,
    "shifted_chebyshev_polynomial_v": shifted_chebyshev_v,
    "shifted_chebyshev_polynomial_w": shifted_chebyshev_w,
    "hermite_polynomial_h": hermite_h, "hermite_polynomial_he": hermite_he,
    "laguerre_polynomial_l": laguerre_l, "legendre_polynomial_p": legendre_p,
}


def _polynomial(function):
    def lower(island, operands, results):
        (result,) = results
        T = float_result(result)
        b = island.builder
        inputs, getters = [], []
        for operand in operands:
            if operand.is_tensor:
                position = len(inputs)
                inputs.append((island.to_builtin(operand), operand.tensor))
                getters.append(lambda args, position=position: args[position])
            else:
                scalar = island.scalar(operand)
                getters.append(lambda args, scalar=scalar: scalar)
        if len(getters) != 2:
            raise Unsupported()

        def body(args, index):
            x = getters[0](args).to(T)
            # ATen wraps n in a tensor of x's type, then static_casts it to int64.
            n = b.to_int(getters[1](args).to(T))
            return function(b, x, n, T)

        value = island.elementwise(inputs, result, T, body)
        return [(value, result.builtin())]
    return lower


for _name, _function in POLYNOMIALS.items():
    lowering(*(f"torch.aten.special_{_name}{suffix}"
               for suffix in ("", ".n_scalar", ".x_scalar")))(_polynomial(_function))
