"""Ops torch-mlir cannot lower that Dyno lowers itself (dyno/aten_lowerings.py and the
modules it registers): compiled vs eager, with the special values where ATen's kernels
branch, on both targets."""
import pytest
import torch

from conftest import assert_compiled_matches

pytestmark = pytest.mark.usefixtures("each_target")

nan, inf = float("nan"), float("inf")
FLOAT_TYPES = [torch.float32, torch.bfloat16, torch.float16]

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]




def _bits_equal(actual, expected):
    """Same values bit for bit, also -0.0 against 0.0 (NaN payloads aside)."""
    assert torch.equal(actual.isnan(), expected.isnan())
    finite = ~expected.isnan()
    assert torch.equal(actual[finite], expected[finite])
    assert torch.equal(torch.signbit(actual[finite]), torch.signbit(expected[finite]))


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials_follow_aten_special_cases_and_recurrences(name):
    # Degrees below and above ATen's switch to closed forms (4, 6 or 8), negative (0),
    # fractional (truncated), beyond Hermite's limit of 128 (NaN), NaN and infinite
    # (cast to the most negative integer: 0); x at +-1, 0, 1/2 (the shifted ones' special
    # points), outside [-1, 1] (the recurrence grows). A NaN x only with degrees below 2:
    # above, most of ATen's loops stop before their first step and return an
    # uninitialized value (eager gives 5.8e-18 for chebyshev_polynomial_u; Dyno NaN).
    polynomial = getattr(torch.special, name)
    x = torch.tensor([-2.5, -1.0, -0.999, -0.6, -0.0, 0.0, 0.25, 0.5, 0.75, 0.999, 1.0,
                      1.5, 3.0, 1e-3])
    n = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 12.0, 25.0, 2.7,
                      -1.0, 129.0, nan, inf])

    def fn(x, n, nans):
        return (polynomial(x[:, None], n[None, :]), polynomial(x, 5), polynomial(0.3, n),
                polynomial(nans, torch.tensor([0.0, 1.0, -1.0])))
    assert_compiled_matches(fn, x, n, torch.full((3,), nan), rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=str)
def test_cummax_and_cummin_follow_nans_ties_and_signed_zeros(dtype):
    # ATen moves the running value to a NaN element (even after an earlier NaN), and on
    # ties to the later element (indices are exact; -0.0 after 0.0 replaces it). bf16/f16
    # elements are compared by their float32 values (ties in bf16 stay ties).
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0, nan, 5.0, nan, 0.0],
                      [0.0, -0.0, 0.0, -1.0, -inf, inf, inf, -2.0],
                      [-inf, -inf, nan, nan, 1.0, 1.0, -1.0, 7.0]], dtype=dtype)

    def fn(x, y):
        return (*torch.cummax(x, 1), *torch.cummin(x, 1), *torch.cummax(x, 0),
                *torch.cummin(y, -1), *torch.cummax(y, 1), *torch.cummax(x[0, 0], 0))
    y = torch.randint(-3, 4, (2, 7, 5)).to(dtype) / 2  # many ties
    actual = assert_compiled_matches(fn, x, y, rtol=0, atol=0)
    with torch.no_grad():
        _bits_equal(actual[2], torch.cummin(x, 1)[0])


def test_logcumsumexp_stays_finite_where_exp_overflows():
    # torch-mlir's log(cumsum(exp(x))) gives inf at x = 100; ATen's pairwise
    # log-add-exp in double keeps 400.0; infinities and NaN as ATen treats them.
    x = torch.tensor([[100.0, 200.0, 400.0, -50.0, 399.0],
                      [-inf, -inf, 0.0, -inf, 1.0],
                      [1.0, inf, 2.0, inf, -inf],
                      [0.5, nan, 1.0, -inf, inf]])

    def fn(x, y):
        return torch.logcumsumexp(x, 1), torch.logcumsumexp(y, 0), torch.logcumsumexp(y, -1)
    assert_compiled_matches(fn, x, torch.randn(6, 33) * 30, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_logcumsumexp_in_low_precision_accumulates_in_float32(dtype):
    """bf16/f16 accumulate in float (ATen's acc_type) and round each result; finite
    where exp overflows the low precision (fp16's exp(12) is inf)."""
    x = torch.tensor([[10.0, 12.0, 30.0, -5.0, 29.0], [-inf, 0.0, -inf, 1.0, 2.0]])

    def fn(x, y):
        return torch.logcumsumexp(x, 1), torch.logcumsumexp(y, -1)
    assert_compiled_matches(fn, x.to(dtype), (torch.randn(4, 40) * 5).to(dtype),
                            rtol=torch.finfo(dtype).eps, atol=0)


def _bit_patterns(dtype=torch.float32):
    """Signed zeros, subnormals, the extremes of `dtype`, infinities, NaNs of both signs."""
    info = torch.finfo(dtype)
    smallest = info.smallest_normal * info.eps  # the smallest subnormal
    values = [0.0, -0.0, smallest, -smallest, 3e-39, -3e-39, info.tiny, -info.tiny,
              info.tiny / 3, 1.0, -1.0, 0.75, info.max, -info.max, inf, -inf, nan, -nan, 5.5,
              -6.0, 1e-20, 123456.78]
    return torch.tensor(values, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=str)
def test_signbit_and_copysign_read_the_sign_bit(dtype):
    x = _bit_patterns(dtype)
    y = x.flip(0)

    def fn(x, y):
        return torch.signbit(x), torch.copysign(x, y), torch.copysign(y, -0.0), \
            torch.copysign(x, 2)
    actual = assert_compiled_matches(fn, x, y, rtol=0, atol=0)
    with torch.no_grad():
        _bits_equal(actual[1], torch.copysign(x, y))
        _bits_equal(actual[2], torch.copysign(y, -0.0))


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=str)
def test_frexp_splits_subnormals_zeros_and_specials(dtype):
    subnormals = torch.rand(16, dtype=torch.float64) * torch.finfo(dtype).tiny
    x = torch.cat([_bit_patterns(dtype), (torch.randn(64) * 1e4).to(dtype), subnormals.to(dtype)])

    def fn(x):
        return torch.frexp(x)
    actual = assert_compiled_matches(fn, x, rtol=0, atol=0)
    with torch.no_grad():
        _bits_equal(actual[0], torch.frexp(x)[0])


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=str)
def test_nextafter_steps_one_bit_towards_the_target(dtype):
    x = _bit_patterns(dtype)
    towards = torch.tensor([1.0, -1.0, -1.0, 0.0, 0.0, inf, 0.0, -inf, 0.0, 1.0, -1.0, 0.75,
                            inf, inf, 0.0, 0.0, 1.0, 2.0, nan, -6.0, -1.0, 123456.78], dtype=dtype)

    def fn(x, towards):
        return torch.nextafter(x, towards), torch.nextafter(x, -towards)
    actual = assert_compiled_matches(fn, x, towards, rtol=0, atol=0)
    with torch.no_grad():
        _bits_equal(actual[0], torch.nextafter(x, towards))
        _bits_equal(actual[1], torch.nextafter(x, -towards))


def test_cummin_indices_follow_an_input_computed_in_the_graph():
    # Regression (fuzzer seed 273): the indices came from comparing elements with the
    # running values, and an element computed in the graph (a mean: a division, exact in
    # one kernel and by a reciprocal in another) differed by an ulp between the two
    # kernels: 5522 of 28672 indices pointed at an earlier position. One scan of keys
    # (value image and position) now gives both.
    x = torch.randn(64, 5, 7, 64)

    def fn(x):
        return (*torch.cummin(x.mean(dim=1), dim=0), *torch.cummax(x.sum(1) / 3.0, dim=2))
    assert_compiled_matches(fn, x, rtol=1e-6, atol=1e-6)


def test_polynomial_of_row_values_in_a_kernel_with_a_reduction():
    # Regression (fuzzer seed 237, Triton target): a polynomial of a row's minimum joins
    # the reduction's kernel, where a row's values are [XBLOCK, 1] blocks; the
    # per-element loop was refused there, and then carried values of other shapes.
    def fn(x):
        low = x.amin(dim=1, keepdim=True)
        return (torch.special.chebyshev_polynomial_t(low.clamp(-2, 2), 7),
                torch.special.hermite_polynomial_he(x.clamp(-3, 3), 5) + low)
    assert_compiled_matches(fn, torch.randn(5, 13), rtol=2e-5, atol=1e-5)
