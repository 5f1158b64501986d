"""Elementwise chains, broadcasting and reductions: compiled vs eager."""
import pytest
import torch
import torch.nn.functional as F

import dyno

from conftest import TARGET, assert_compiled_matches

# Every case runs on the CPU target and on the Triton target (interpreted on CPU).
pytestmark = pytest.mark.usefixtures("each_target")


def test_elementwise_chain():
    def fn(x, y):
        return torch.sigmoid(x * y + 1.0).exp() - torch.tanh(y) / (x.abs() + 1)
    assert_compiled_matches(fn, torch.randn(33, 65), torch.randn(33, 65))


def test_broadcasting():
    def fn(x, row, col, scalar):
        return (x + row) * col - scalar
    assert_compiled_matches(fn, torch.randn(7, 5, 9), torch.randn(9), torch.randn(5, 1),
                            torch.randn(()))


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_reductions(reduce, dim):
    def fn(x):
        return getattr(torch, reduce)(x, dim=dim)
    assert_compiled_matches(fn, torch.randn(37, 19, 11))


def test_full_reduction_and_keepdim():
    def fn(x):
        return x.sum(), x.mean(dim=(0, 2), keepdim=True)
    assert_compiled_matches(fn, torch.randn(16, 8, 12))


def test_softmax_and_log_softmax():
    def fn(x):
        return torch.softmax(x, -1), F.log_softmax(x, dim=1)
    assert_compiled_matches(fn, torch.randn(64, 257))


def softmax_rows_with_special_values(width=37):
    """Rows that reach every case of a softmax's maximum: a NaN (first, middle, last),
    +inf, all -inf, -0.0 and +0.0 as the maximum in either order, a single 0, and
    plain rows."""
    nan, inf = float("nan"), float("inf")
    rows = torch.randn(12, width)
    rows[0, 0] = nan
    rows[1, width // 2] = nan
    rows[2, -1] = nan
    rows[3].fill_(nan)
    rows[4, 3] = inf
    rows[5].fill_(-inf)
    rows[6] = -rows[6].abs() - 1
    rows[6, 1], rows[6, 5] = -0.0, 0.0
    rows[7] = -rows[7].abs() - 1
    rows[7, 1], rows[7, 5] = 0.0, -0.0
    rows[8] = -rows[8].abs() - 1
    rows[8, 2] = -0.0
    rows[9, 4], rows[9, 6] = inf, nan
    rows[10] = -inf
    rows[10, 7] = 0.0
    return rows


def test_softmax_with_nan_inf_and_signed_zeros_matches_eager():
    """A softmax's row maximum is relaxed to a plain max on the CPU target
    (dyno-relax-softmax-maximum): every result must still be eager's, NaN rows and all."""
    x = softmax_rows_with_special_values()
    got = assert_compiled_matches(lambda t: torch.softmax(t, -1), x, rtol=0, atol=1e-7)
    want = torch.softmax(x, -1)
    assert torch.equal(got.isnan(), want.isnan())
    # Through a fused producer, as in layernorm+GELU+softmax.
    assert_compiled_matches(lambda t: torch.softmax(F.gelu(t * 2), -1), x, rtol=1e-6,
                            atol=1e-7)


def test_layernorm():
    ln = torch.nn.LayerNorm(96)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
    assert_compiled_matches(ln, torch.randn(4, 31, 96))


def test_layernorm_gelu_softmax_block():
    ln = torch.nn.LayerNorm(1024)

    def fn(x):
        return torch.softmax(F.gelu(ln(x)), -1)
    assert_compiled_matches(fn, torch.randn(256, 1024))


def test_gelu_matches_eager_closely():
    # Dyno's erf is ATen's formula: compiled GELU agrees with eager to float32 rounding.
    assert_compiled_matches(F.gelu, torch.randn(4096) * 4, rtol=1e-6, atol=2e-6)


def test_gelu_tanh_form_is_exact():
    # Regression (OpInfo sweep): torch-mlir's tanh GELU used sqrt(2/pi) ~ 0.797724.
    x = torch.linspace(-6, 6, 4001)
    assert_compiled_matches(lambda t: F.gelu(t, approximate="tanh"), x, rtol=1e-6, atol=1e-6)


def test_erf_is_accurate_near_zero():
    x = torch.cat([torch.logspace(-8, 0, 200), -torch.logspace(-8, 0, 200), torch.zeros(1)])
    actual = assert_compiled_matches(torch.erf, x, rtol=2e-6, atol=0)
    assert actual[-1].item() == 0.0


def test_nan_and_inf_propagate():
    def fn(x):
        return torch.softmax(x, -1), x.amax(-1), torch.exp(x) + 1
    x = torch.randn(4, 8)
    x[0, 1] = float("nan")
    x[1, 2] = float("inf")
    x[2, 3] = float("-inf")
    assert_compiled_matches(fn, x)


def test_integer_and_bool_ops():
    def fn(a, b):
        return (a * 3 + b) % 7, a > b, (a + b).sum(dim=0)
    assert_compiled_matches(fn, torch.randint(-50, 50, (9, 13)), torch.randint(-50, 50, (9, 13)))


def test_odd_and_unit_sizes():
    def fn(x):
        return torch.softmax(x * 2, dim=0) + x.mean(dim=-1, keepdim=True)
    for shape in [(1, 1), (1, 17), (13, 1), (3, 7)]:
        # Each shape is its own static compile (dynamic shapes are a separate feature).
        torch._dynamo.reset()
        dyno.reset_stats()
        assert_compiled_matches(fn, torch.randn(*shape))


def test_tensors_with_no_elements():
    # Regression: a zero-size dimension crashed dyno-opt's tiling (SIGFPE), and a kernel
    # passed an empty tensor could not be lowered (CPU bare-pointer ABI): every OpInfo op
    # with a [1, 0, 3] sample fell back. Empty tensors now fold away before kernel
    # formation; the rest of the graph is compiled.
    def fn(x, empty):
        total = empty.sum(dim=1, keepdim=True)           # a sum over nothing: zeros
        joined = torch.cat([empty, x, empty], dim=1)     # empty pieces dropped
        rolled = torch.roll(joined, shifts=0, dims=1)    # torch-mlir: concat with an empty piece
        return rolled.exp() + total, empty.acos() * 2, empty.amax(dim=0)
    out = assert_compiled_matches(fn, torch.randn(4, 5), torch.randn(4, 0))
    assert out[1].shape == (4, 0) and out[2].shape == (0,)


def test_float64_relu_and_unordered_comparisons():
    # Regression: torch-mlir lowers a float64 ReLU to `cmpf ugt %x, 0.0`; the Triton
    # printer tested the constant for NaN too (`0.0 != 0.0` on a 0-d block), which
    # Triton's interpreter cannot `|` with a block: the graph fell back at run time.
    def fn(x):
        return torch.relu(x * 2 - 0.5), x.clamp(min=0.25)
    x = torch.randn(33, 17, dtype=torch.float64)
    x[0, 0] = float("nan")
    assert_compiled_matches(fn, x)


@pytest.mark.parametrize("name", ["clamp", "clamp_tensor", "hardtanh", "relu6", "hardsigmoid",
                                  "maximum", "minimum", "self_equal", "argmax", "argmin",
                                  "max_dim", "min_dim"])
def test_nan_propagates_like_eager(name):
    # Regression (miscompiles): torch-mlir 20261001 lowers these to compare-and-select
    # forms that drop NaN (clamp(nan, min=0.25) gave 0.25), folds x == x to true and
    # never picks a NaN in argmax; Dyno's decompositions (dyno/ops/nan_decompositions.py) keep
    # PyTorch's NaN semantics. torch.max(x, dim) returned the index of the extremum before
    # a row's first NaN instead of the NaN's (max_dim, min_dim).
    cases = {
        "clamp": lambda x, y: (x.clamp(min=0.25), x.clamp(max=0.25), x.clamp(-0.5, 0.5)),
        "clamp_tensor": lambda x, y: (torch.clamp(x, min=y), torch.clamp_max(x, y)),
        "hardtanh": lambda x, y: F.hardtanh(x * 2),
        "relu6": lambda x, y: F.relu6(x * 4),
        "hardsigmoid": lambda x, y: F.hardsigmoid(x),
        "maximum": lambda x, y: torch.maximum(x, y) + torch.max(y, x),
        "minimum": lambda x, y: torch.minimum(x, y) * 2,
        "self_equal": lambda x, y: (x == x, (x + 1) == (x + 1)),
        "argmax": lambda x, y: (x.argmax(1), x.argmax(), (x * 2).argmax(0, keepdim=True)),
        "argmin": lambda x, y: (x.argmin(1), x.argmin()),
        "max_dim": lambda x, y: (*torch.max(x, 1), *torch.max(y, 0, keepdim=True)),
        "min_dim": lambda x, y: (*torch.min(x, 1), *torch.min(x - y, 0)),
    }
    nan = float("nan")
    x = torch.randn(6, 9)
    x[0, 3] = x[0, 7] = x[2, 0] = x[5, 8] = nan
    y = torch.randn(6, 9)
    y[1, 1] = y[2, 0] = nan
    y[3, 4] = float("inf")
    assert_compiled_matches(cases[name], x, y)


def test_special_values_in_transcendental_math():
    # Regressions found by the fuzzer's special values (CPU target): rsqrt gave NaN for
    # 0 and inf (LLVM's rsqrt estimate under `arcp`), sin/cos lost 3e-5 absolute at
    # |x| = 1e3 (upstream's polynomial; rotary embeddings get there), log of a subnormal
    # gave -87.3 instead of -92.1. -rsqrt(inf) gave NaN: the negation's `arcp` let LLVM
    # fold it into (-1) / sqrt(x), i.e. the rsqrt estimate (fuzzer seed 1026).
    def fn(x, angles):
        return torch.rsqrt(x), torch.sqrt(x), 1 / torch.sqrt(x), torch.log(x), torch.log2(x), \
            torch.sin(angles), torch.cos(angles), -torch.rsqrt(x), \
            torch.erf(-torch.rsqrt(x.abs() + 0.5))
    x = torch.tensor([0.0, -0.0, float("inf"), float("nan"), 1e-40, 3e-39, 1e-30, 2.0, 1e30,
                      -1.0, 7.0, 0.5] * 3)
    angles = torch.linspace(-3000.0, 3000.0, 4099)
    assert_compiled_matches(fn, x, angles, atol=1e-5, rtol=1e-5)


def test_rounded_quotients_are_exact():
    # Miscompiles, each off by one (or by a whole divisor) wherever a / b rounds up to an
    # integer: torch-mlir computed floor division as floor(a / b) and fmod as
    # a - b * trunc(a / b) (eager: from the exact fmod), and under `arcp` LLVM divided by
    # a constant as a * (1 / c): trunc(1083 * 0.3 / 0.3) gave 1082. A floored quotient by
    # a broadcast divisor must not become a multiplication by its reciprocal either.
    k = torch.arange(1, 4097, dtype=torch.float32)
    a = torch.cat([k * 0.1, -k * 0.3, k * 0.3, torch.tensor([0.0, -0.0, 5.0, -5.0])])
    b = torch.full_like(a, 0.1)
    b[-4:] = torch.tensor([0.0, 3.0, float("inf"), -3.0])

    def fn(a, b):
        return (torch.div(a, 0.1, rounding_mode="floor"), torch.floor_divide(a, b),
                torch.div(a, 0.3, rounding_mode="trunc"), torch.fmod(a, b),
                torch.fmod(a, 0.1), torch.remainder(a, b), torch.floor(a / b[:1]),
                torch.div(a.view(4, -1), b[:4].view(4, 1), rounding_mode="floor"))
    assert_compiled_matches(fn, a, b, rtol=0, atol=0)


def test_float_constants_compared_with_int_scalars():
    # torch-mlir folded scalar_tensor(0.1) < 0 to true and scalar_tensor(0.1) > 0 to false
    # (Dyno's own floor division compares such constants).
    def fn(x):
        c = torch.scalar_tensor(0.1)
        return x * (c < 0), x * (c > 0), x * (c <= 0), x * (torch.scalar_tensor(-0.5) >= -1)
    assert_compiled_matches(fn, torch.randn(16), rtol=0, atol=0)


def test_relu_clamp_and_max_keep_eager_bits():
    # A bf16 ReLU, clamp, maximum, where or max pool computes in f32 and narrows values
    # that are bf16 already: the CPU target takes their upper 16 bits instead of rounding
    # (dyno-expand-bf16-conversions). Subnormals, signed zeros, infinities and NaNs keep
    # what eager gives, bit for bit (NaN payloads aside: eager's own differ). Regression:
    # relu and clamp(min=0) of -0.0 gave 0.0 on both targets (eager: -0.0), in f32 too.
    special = torch.tensor([3e-39, -3e-39, 1e-40, 0.0, -0.0, float("inf"), float("-inf"),
                            float("nan"), 1.5, -2.25, 65504.0, -1e-3] * 8)
    x = special.reshape(4, 3, 4, 2).to(torch.bfloat16)
    y = torch.roll(x, 1, dims=0)

    def fn(x, y):
        return (torch.relu(x), torch.clamp(x, min=0.0), torch.clamp(x, max=-0.0),
                torch.maximum(x, y), torch.where(x > 0, x, y), -torch.relu(-x),
                F.max_pool2d(x, 2, stride=1, padding=1))
    for dtype in (torch.bfloat16, torch.float32):
        torch._dynamo.reset()
        x, y = x.to(dtype), y.to(dtype)
        actual = assert_compiled_matches(fn, x, y, rtol=0, atol=0)
        bits = torch.int16 if dtype == torch.bfloat16 else torch.int32
        for got, want in zip(actual, fn(x, y)):
            same = got.view(bits) == want.view(bits)
            assert bool((same | (got.isnan() & want.isnan())).all()), (dtype, got, want)
