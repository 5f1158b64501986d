"""Ops torch-mlir cannot lower that Dyno decomposes (the decomposition families in
dyno/ops): compiled vs eager, with special values, on both targets."""
import math
import warnings

import pytest
import torch
import torch.nn.functional as F

import dyno
from conftest import NO_TRITON_COMPLEX, assert_compiled_matches, xfail_on_triton

pytestmark = pytest.mark.usefixtures("each_target")

nan, inf = float("nan"), float("inf")


def test_an_op_decomposed_twice_on_one_target_is_refused():
    # One registration style (dyno/ops/decompositions.py): no op may have two
    # decompositions on a target, so the order in which the families register never
    # decides which one applies (it did, in one hand-ordered table).
    from dyno.ops import decompositions
    hypot = torch.ops.aten.hypot.default
    with pytest.raises(ValueError, match="decomposed twice on the cpu target"):
        decompositions.decomposes(hypot)(lambda a, b: a)
    assert decompositions.table("cpu")[hypot].__module__ == \
        "dyno.ops.arithmetic_decompositions"


def test_attention_is_kept_whole_only_where_it_is_a_library_call():
    from dyno.ops import decompositions
    forward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    cpu, triton = decompositions.table("cpu"), decompositions.table("triton")
    assert forward not in cpu  # PyTorch's decomposition is wrong in training graphs
    assert cpu[backward].__name__ == "short_low_precision_backward"
    assert triton[forward].__name__ == "inference_attention"
    assert triton[backward].__name__ == "flash_attention_for_cpu_backward"


def test_uninitialized_tensors_with_strides_are_filled_in_place():
    # new_zeros/new_full create an empty_strided tensor and fill it: decomposed into an
    # empty tensor permuted to the strides, which eager's result strides must match.
    def fn(x):
        transposed = torch.empty_strided((3, 4, 5), (1, 15, 3)).fill_(2.0)
        return x.new_zeros((4, 6)), x.new_full((2, 3), 7.5), transposed * x[:3, :4, None]
    assert_compiled_matches(fn, torch.randn(5, 6))


def test_reductions_and_products_decomposed_by_pytorch():
    # addmv, dist, all/any over dims and narrow_copy use PyTorch's own decompositions.
    def fn(m, v, bias, a, b):
        return (torch.addmv(bias, m, v, beta=0.5, alpha=2.0), torch.dist(a, b),
                torch.dist(a, b, p=3), (a > 0).all(dim=1), (a > 1).any(dim=0),
                torch.narrow_copy(a, 1, 2, 4))
    assert_compiled_matches(fn, torch.randn(8, 5), torch.randn(5), torch.randn(8),
                            torch.randn(6, 7), torch.randn(6, 7), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_products_over_one_element_are_outer_products(dtype):
    """A rotary embedding's angles (inv_freq[:, None] @ positions[None, :], batched) and a
    matrix product over one element are broadcast multiplies the kernels compute: no
    library GEMM, and each element the one product the GEMM rounds once (exact in fp32,
    with inf and NaN)."""
    def fn(inv_freq, positions, a, b):
        angles = (inv_freq[None, :, None].expand(2, -1, 1) @ positions[:, None, :]).transpose(1, 2)
        return angles.cos(), angles.sin(), a @ b
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 16, 2, dtype=torch.float32) / 16))
    positions = torch.arange(12, dtype=torch.float32).expand(2, 12).contiguous()
    a = torch.tensor([[1.5], [-2.0], [inf], [nan], [3e38]])
    b = torch.tensor([[2.0, -0.0, 1e-30, 7.0]])
    tolerance = 0 if dtype == torch.float32 else 1e-2
    assert_compiled_matches(fn, *(t.to(dtype) for t in (inv_freq, positions, a, b)),
                            extern_calls=0, rtol=tolerance, atol=max(tolerance, 1e-6))


def _special_values():
    """A grid over [-30, 30] and the values where the algorithms branch or misbehave:
    signed zeros, infinities, NaN, poles (non-positive integers), branch points."""
    grid = torch.linspace(-30.0, 30.0, 241)
    points = torch.tensor([0.0, -0.0, inf, -inf, nan, 1e-30, -1e-30, 1e-6, 0.5, 0.49999997,
                           1.0, 2.0, 3.0, -1.0, -2.0, -2.5, -0.5, 7.9999995, 8.0, 8.0000005,
                           9.9999990, 10.0, 10.000001, 1e17, 3e38, -3e38, 0.7, -0.7,
                           0.70000005, 0.9999999, -0.9999999, 1.0000001, 40.0, 88.0, 89.0])
    return torch.cat([grid, points])


def test_batch_norm_with_update_writes_the_running_statistics():
    """aten._batch_norm_with_update (training batch norm that updates its running
    statistics in place) compiles through PyTorch's decomposition of its functional form;
    AOTAutograd writes the new statistics back. Outputs and statistics match eager."""
    def fn(x, weight, bias, running_mean, running_var):
        return torch.ops.aten._batch_norm_with_update(x, weight, bias, running_mean,
                                                      running_var, 0.3, 1e-5)[:3]

    x = torch.randn(6, 4, 5, 3)
    weight, bias = torch.rand(4) + 0.5, torch.randn(4)
    statistics = torch.randn(4), torch.rand(4) + 0.5
    eager_statistics = [t.clone() for t in statistics]
    compiled_statistics = [t.clone() for t in statistics]
    # assert_compiled_matches runs eager, then the compiled graph, on the same inputs: the
    # statistics it passes are updated twice, once by each; eager's copies get two
    # eager updates.
    assert_compiled_matches(fn, x, weight, bias, *compiled_statistics, rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        fn(x, weight, bias, *eager_statistics)
        fn(x, weight, bias, *eager_statistics)
    for eager_stat, compiled_stat, original in zip(eager_statistics, compiled_statistics,
                                                   statistics):
        assert not torch.equal(eager_stat, original)
        torch.testing.assert_close(compiled_stat, eager_stat, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "digamma", "trigamma",
                                  "lgamma", "erfinv", "mvlgamma", "ndtri"])
def test_special_functions_match_eager(name):
    # Decomposed as ATen computes them (dyno/special_functions.py); values in relative
    # terms where results are large, absolute near zeros of the functions.
    cases = {
        "i0": torch.i0, "i0e": torch.special.i0e, "i1": torch.special.i1,
        "i1e": torch.special.i1e, "digamma": torch.digamma,
        "trigamma": lambda x: torch.polygamma(1, x), "lgamma": torch.lgamma,
        "erfinv": torch.erfinv,
        "mvlgamma": lambda x: torch.mvlgamma(x.abs() + 3.0, p=3),
        "ndtri": torch.special.ndtri,
    }
    fn = cases[name]
    x = _special_values()
    if name == "ndtri":  # its domain is [0, 1]: the grid mapped into it, tails, edges
        x = torch.cat([x / 61.0 + 0.5, torch.tensor([0.0, 1.0, 1e-30, 1e-10, 0.13533528,
                                                      0.8646647, 0.86466473, 1.0000001,
                                                      -1e-7, 0.99999994, 1e-38, 1e-45])])
    if name == "erfinv":  # its domain is [-1, 1]: the grid scaled into it, and its edges
        x = torch.cat([x / 31.0, torch.tensor([1.0, -1.0, 1.0000001, 0.99999994, -0.99999994,
                                               0.69999999, 0.70000005, 1e-30])])
    assert_compiled_matches(fn, x, rtol=2e-5, atol=1e-5)


@pytest.mark.long_on_triton  # (Triton: 2.5 min on 2 cores, 2026-12-01)
def test_hurwitz_zeta_and_polygamma_of_higher_orders():
    # dyno/special_functions.py: ATen's series in float64, its early exits (the
    # Euler-Maclaurin corrections diverge for large x, e.g. 100), its special cases
    # (x = 1, x < 1, q a non-positive integer, non-integer x with q <= 0), and negative
    # non-integer q, where ATen sums term by term up to q + k > 9 (-1000.25: a thousand
    # terms), split here into zetas of positive arguments.
    x = torch.tensor([1.0, 0.5, 2.0, 3.0, 4.0, 2.0, 3.0, 50.0, 100.0, 2.0, 2.0, nan, 2.0,
                      2.0, 7.0, 2.5, 12.0, 3.0])
    q = torch.tensor([2.0, 2.0, -2.5, -3.7, -1000.25, 0.0, -3.0, 0.5, 0.001, inf, 1e-30,
                      1.0, nan, -0.5, -77.3, -1.5, 9.5, 1e6])
    x = torch.cat([x, torch.rand(64) * 20 + 1])
    q = torch.cat([q, torch.randn(64) * 10])
    points = torch.cat([_special_values(), torch.tensor([-2.5, -7.25, 1e-3, 30.0])])

    def fn(x, q, points):
        return (torch.special.zeta(x, q), torch.special.zeta(x, 2.0),
                torch.special.zeta(3.0, q), torch.polygamma(2, points),
                torch.polygamma(3, points), torch.special.polygamma(4, points))
    assert_compiled_matches(fn, x, q, points, rtol=2e-6, atol=0)


@pytest.mark.parametrize("name", ["erfc", "erfcx", "log_ndtr"])
def test_complementary_error_functions_keep_their_tails(name):
    # Computed in float64 (dyno/special_functions.py): erfc(9) = 4e-37 and
    # log_ndtr(-40) = -804.6, where 1 - erf or log(ndtr) would give 0 and -inf; relative
    # accuracy right down to float32's smallest normal numbers.
    fn = {"erfc": torch.erfc, "erfcx": torch.special.erfcx,
          "log_ndtr": torch.special.log_ndtr}[name]
    x = torch.cat([_special_values(), torch.linspace(-12.0, 12.0, 961),
                   torch.tensor([3.9999998, 4.0, 4.0000005, 9.0, 9.3, -9.3, -9.5, -40.0,
                                 -1.0, -1.0000001, -0.99999994, 1e5, -1e5])])
    expected = fn(x.double())
    actual = assert_compiled_matches(fn, x, rtol=2e-5, atol=1e-37)
    normal = (expected.abs() > 1e-37) & (expected.abs() < 3e38)
    relative = (actual.double() - expected).abs() / expected.abs()
    assert relative[normal].max() < 2e-7, relative[normal].max()


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
                                  "modified_bessel_i0", "modified_bessel_i1",
                                  "modified_bessel_k0", "modified_bessel_k1",
                                  "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                                  "spherical_bessel_j0"])
def test_bessel_functions_match_eager(name):
    # dyno/bessel_functions.py: both sides of the crossovers (2, 5, 8), zeros, poles,
    # negative arguments (NaN for Y and K), infinities and NaN.
    x = torch.cat([_special_values(), torch.tensor([1.9999999, 2.0, 2.0000002, 4.9999995,
                                                     5.0, 5.0000005, 1e-5, 9.9999e-6, 0.25,
                                                     -0.25, 1e4, -1e4])])
    assert_compiled_matches(getattr(torch.special, name), x, rtol=2e-5, atol=1e-5)


def test_special_functions_in_half_precision():
    # float16/bfloat16 are computed in float32 and rounded, as eager does.
    def fn(h, b):
        return torch.special.i0e(h), torch.digamma(h), torch.lgamma(b), torch.erfinv(b / 4)
    x = torch.linspace(-3.9, 3.9, 97)
    assert_compiled_matches(fn, x.half(), x.bfloat16(), rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_low_precision_products_by_float_scalars_keep_the_scalar_in_float32(dtype):
    """ATen multiplies and divides a bf16/f16 tensor by a Python float kept in float32;
    torch-mlir rounded the scalar to bf16 first (`x * 0.1` by 0.10009765625: 401 of 1999
    elements differed); so do a 0-dim float32 tensor factor and leaky_relu's and elu's
    parameters. Addition and subtraction do round the scalar in eager."""
    x = torch.arange(1, 2000).to(dtype)

    def fn(x, c, y):
        return (x * 0.1, x / 3.3, 0.7 * x, x + 0.3, x - 0.3141592653589793, 8.396 - x, x * c,
                F.leaky_relu(y, 0.3141592653589793), F.elu(y, 0.3141592653589793))
    assert_compiled_matches(fn, x, torch.tensor(0.7), x - 1000, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_low_precision_gelu_rounds_once(dtype):
    """Eager's GELU kernel computes bf16/f16 in float32 and rounds once; the
    decomposition's steps each rounded (the OpInfo sweep found it less accurate than
    eager against float32)."""
    x = torch.linspace(-6, 6, 4001).to(dtype)

    def fn(x):
        return F.gelu(x), F.gelu(x, approximate="tanh")
    compiled = assert_compiled_matches(fn, x, rtol=torch.finfo(dtype).eps, atol=1e-3)
    for got, want, exact in zip(compiled, fn(x), fn(x.float())):
        assert (got.float() - exact).norm() <= (want.float() - exact).norm() * 1.01


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_low_precision_roundings_of_scalar_products_fold_inside_a_kernel(dtype):
    """GPT-2's GELU written as tensor ops: eager rounds each op. A product by a Python float
    rounds as an op's result (dyno::op_round), not as a cast the program wrote: inside the
    fused kernel it stays float32, as every other op's result does, so the compiled GELU
    is as accurate against float64 as the float32 GELU rounded once (with its three
    scalar products rounded, 3.5% (bf16) and 2.8% (fp16) less accurate when measured;
    eager 36% and 49%)."""
    x = torch.randn(64, 1000, generator=torch.Generator().manual_seed(0)).to(dtype)

    def gelu(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                           (x + 0.044715 * torch.pow(x, 3.0))))
    # Where 1 + tanh(...) cancels (x near -3) eager's rounded steps give 0 and the
    # compiled kernel GELU's true -0.004: an absolute tolerance of a bf16 ulp at 1.
    rtol, atol = {torch.bfloat16: (1.6e-2, 8e-3), torch.float16: (1e-3, 1e-3)}[dtype]
    got = assert_compiled_matches(gelu, x, rtol=rtol, atol=atol)
    exact = gelu(x.double())
    compiled_error = (got.double() - exact).norm()
    rounded_once_error = (gelu(x.float()).to(dtype).double() - exact).norm()
    assert compiled_error <= 1.01 * rounded_once_error, (compiled_error, rounded_once_error)


def test_hypot_and_angle():
    # hypot neither overflows nor underflows (1e30, 3e38, subnormals) and an infinity
    # wins over a NaN, as in eager; angle of a real is pi below zero and keeps NaN.
    special = torch.tensor([inf, nan, 0.0, 3.0, -inf, 1e30, 1e-30, -0.0, 3e38, 1e-45, nan])
    other = torch.tensor([nan, inf, 0.0, -4.0, 2.0, 1e30, 1e-30, 0.0, 3e38, 1e-45, 1.0])
    grid = torch.linspace(-5.0, 5.0, 41)
    a, b = torch.cat([special, grid]), torch.cat([other, grid.flip(0) * 0.3])

    def fn(a, b):
        return torch.hypot(a, b), torch.angle(a)
    assert_compiled_matches(fn, a, b, rtol=1e-6, atol=0)


def test_powers_follow_eager_special_cases():
    # Regression (miscompiles): eager computes x ** 0.5 as sqrt, x ** -0.5 as rsqrt,
    # x ** -1 as a reciprocal and x ** 2, 3, -2 as products; pow differs at special
    # values ((-inf) ** 0.5 gave inf, eager NaN). The Triton target printed pow(a, b) as
    # exp(b log a): pow(-2, 3), pow(0, 0) and pow(1, nan) gave NaN.
    a = torch.tensor([-2.0, -2.0, -2.0, 0.0, 0.0, -0.0, -0.0, 2.0, -1.0, -1.0, inf, -inf, -inf,
                      nan, 1.0, 0.5, -8.0, 3.0, -0.5, 1e-30, -1e30])
    b = torch.tensor([3.0, 2.0, 0.5, 0.0, -1.0, -1.0, 3.0, -2.0, inf, nan, -1.0, 3.0, 0.5,
                      0.0, nan, inf, 1 / 3, -3.0, -inf, 2.0, 2.0])

    def fn(a, b):
        return (torch.pow(a, b), a ** 0.5, a ** -0.5, a ** -1, a ** 2, a ** 3, a ** -2,
                a ** 2.5)
    actual = assert_compiled_matches(fn, a, b, rtol=3e-6, atol=0)
    for got, want in zip(actual, fn(a, b)):
        numbers = ~want.isnan()
        assert torch.equal(torch.signbit(got[numbers]), torch.signbit(want[numbers]))


def test_linspace_is_eagers_to_the_last_bit():
    # Regression (fuzzer seeds 1281, 3038, 20358, 40208, 60091): torch-mlir computed
    # start + i * step; eager counts the second half down from end with fused
    # multiply-adds, so the middle of linspace(-1, 1, 15) is -4.5e-8, not 0, and an
    # infinity times it is -inf, not NaN.
    def fn(x):
        points = torch.linspace(-1, 1, 15)
        return points, torch.linspace(-3.5, 2.25, 1000), x @ points.reshape(3, 5)
    x = torch.tensor([[inf, 1.0, -2.0], [0.5, -inf, 3.0]])
    actual = assert_compiled_matches(fn, x, rtol=0, atol=0)
    assert torch.equal(actual[0], torch.linspace(-1, 1, 15))


def test_float64_log1p_and_expm1_keep_small_arguments():
    # Regression: the CPU target lowered float64 log1p and expm1 as log(1 + x) and
    # exp(x) - 1 (upstream's convert-math-to-llvm): expm1(1e-20) and log1p(-1e-30) gave
    # 0, expm1(-1e-12) was 2e-5 off. Float32 uses upstream's own careful expansions.
    x = torch.cat([torch.tensor([-1e-30, -1e-12, 1e-20, 1e-8, 0.5, 0.49, -0.51, -40.0,
                                 800.0, -1.0, -2.0, inf, -inf, nan, 1e300, 709.7, 709.8]),
                   torch.linspace(-3.0, 3.0, 601), torch.logspace(-300, 0, 301),
                   -torch.logspace(-300, -1, 300)]).double()
    assert_compiled_matches(torch.expm1, x, rtol=1e-15, atol=0)
    torch._dynamo.reset()
    assert_compiled_matches(lambda t: torch.log1p(t.clamp(min=-1.0)), x, rtol=1e-15, atol=0)


@pytest.mark.parametrize("shape,offset,dim1,dim2", [
    ((5, 7), 0, 0, 1), ((5, 7), 2, 0, 1), ((5, 7), -1, 0, 1), ((3, 4, 5), 1, 1, 0),
    ((3, 4, 5), -1, -1, 0), ((2, 3), 5, 0, 1)])
def test_diagonal_scatter_selects_src_on_the_diagonal(each_target, shape, offset, dim1, dim2):
    # torch-mlir cannot lower it and PyTorch's decomposition writes in place; Dyno's is a
    # gather and a select, bit-exact (the last case has an empty diagonal).
    x = torch.randn(shape)
    src = torch.randn(torch.diagonal(x, offset, dim1, dim2).shape)
    assert_compiled_matches(
        lambda a, b: torch.diagonal_scatter(a, b, offset, dim1, dim2) * 2, x, src,
        rtol=0, atol=0)


def test_pdist_pairs_rows_in_eagers_order():
    # torch-mlir has no pdist: rows i < j gathered (pair k's rows in closed form, exact
    # in float64) and the norm of their differences as eager's kernel; equal rows give 0.
    x = torch.randn(7, 4)
    x[3] = x[1]

    def fn(x, y):
        return (torch.nn.functional.pdist(x), torch.nn.functional.pdist(x, 0),
                torch.nn.functional.pdist(x, 1), torch.nn.functional.pdist(x, 3.5),
                torch.nn.functional.pdist(x, float("inf")), torch.nn.functional.pdist(y))
    assert_compiled_matches(fn, x, torch.randn(40, 3), rtol=1e-5, atol=1e-5)


def test_searchsorted_and_bucketize_follow_eagers_binary_search():
    # A binary search emulated round by round (selection_decompositions.searchsorted). NaN sorts
    # last: eager's search over [1, 5, nan, nan, nan] puts 3.0 at 5 (it probes the
    # NaNs first), where counting the boundaries below 3.0 would give 1; torch-mlir's
    # bucketize counted (a miscompile with NaN boundaries).
    def fn(sequence, values, rows, row_values, unsorted, sorter):
        return (torch.searchsorted(sequence, values),
                torch.searchsorted(sequence, values, right=True),
                torch.searchsorted(sequence, values, side="right", out_int32=True),
                torch.searchsorted(rows, row_values),
                torch.searchsorted(unsorted, values, sorter=sorter),
                torch.bucketize(values, sequence),
                torch.bucketize(row_values, rows[0], right=True),
                torch.isin(row_values, rows))
    sequence = torch.tensor([1.0, 5.0, nan, nan, nan])
    values = torch.tensor([3.0, 0.5, 1.0, 5.0, 6.0, nan, -inf, inf])
    rows = torch.sort(torch.randn(3, 7), -1)[0]
    rows[1, 5:] = nan
    row_values = torch.randn(3, 4)
    row_values[0, 0] = nan
    row_values[2, 1] = rows[2, 3]
    unsorted = torch.randn(9)
    assert_compiled_matches(fn, sequence, values, rows, row_values, unsorted,
                            torch.argsort(unsorted), rtol=0, atol=0)


def test_complex_results_from_real_parts(request):
    xfail_on_triton(request, NO_TRITON_COMPLEX)

    def fn(re, im, pairs):
        value = torch.complex(re, im)
        return (value, torch.polar(re.abs(), im), torch.view_as_complex(pairs),
                re.to(torch.complex64), torch.conj_physical(value) * value,
                torch.view_as_real(value * value), value.abs(), value.angle())
    assert_compiled_matches(fn, torch.randn(4, 6), torch.randn(4, 6), torch.randn(5, 2),
                            rtol=1e-5, atol=1e-5)
