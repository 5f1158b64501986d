"""Views (reshape, permute, transpose, slice, expand) and library calls (matmul, conv)."""
import pytest
import torch
import torch.nn.functional as F

import dyno
from conftest import TARGET, assert_compiled_matches, assert_compiled_matches_values

# Every case runs on the CPU target and on the Triton target (interpreted on CPU).
pytestmark = pytest.mark.usefixtures("each_target")


def test_reshape_and_flatten():
    def fn(x):
        return (x.reshape(6, 20) * 2).flatten() + 1
    assert_compiled_matches(fn, torch.randn(4, 30))


def test_permute_and_transpose():
    def fn(x):
        return x.permute(2, 0, 1).contiguous() * 3, (x.transpose(0, 1) + 1).sum(-1)
    assert_compiled_matches(fn, torch.randn(5, 6, 7))


def test_slice():
    def fn(x):
        return x[1:5, ::2] * 2, x[:, 3] + 1
    assert_compiled_matches(fn, torch.randn(8, 10))


def test_expand():
    def fn(x, y):
        return x.expand(4, 3, 5) * y
    assert_compiled_matches(fn, torch.randn(3, 1), torch.randn(4, 3, 5))


def test_returned_view_keeps_eager_strides():
    def fn(x):
        return (x + 1).t()
    assert_compiled_matches(fn, torch.randn(6, 4))


def test_returned_expand_of_computed_value():
    # Regression (fuzzer seed 1045): eager returns an expanded view (zero strides); its
    # strides cannot be reproduced by a copy, and that used to fail at run time.
    def fn(x):
        return (x * 2 + 1).expand(3, 13, 4)
    assert_compiled_matches_values(fn, torch.randn(1, 13, 4))


def test_values_with_no_elements_compile():
    """Results with no elements are empty tensors (frontend): unfold of an empty batch
    crashed torch-mlir's lowering (SIGFPE; OpInfo sample), so the graph ran partly
    eagerly. The rest of the graph (here a sum over the empty dimension) compiles."""
    def fn(x):
        return F.unfold(x, (2, 3)), x.sum(0), (x * 2).permute(0, 2, 3, 1)
    assert_compiled_matches(fn, torch.randn(0, 2, 5, 6))


def test_bilinear():
    """nn.functional.bilinear's aten._trilinear decomposes into a fused product and sum
    (torch-mlir has no lowering); eager multiplies matrices, so the sums' order differs."""
    weight, bias = torch.randn(7, 5, 6), torch.randn(7)
    assert_compiled_matches(lambda a, b: F.bilinear(a, b, weight, bias),
                            torch.randn(9, 5), torch.randn(9, 6), rtol=1e-4, atol=1e-5)


def test_linear():
    linear = torch.nn.Linear(48, 24)
    assert_compiled_matches(linear, torch.randn(10, 48), extern_calls=1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_low_precision_linears_take_the_layers_weight_as_it_is(dtype, tmp_path, monkeypatch):
    """A bf16 linear layer's library call takes the layer's [n, k] weight itself
    (`_linear_weight`), with no transpose view made per call; a weight that is itself a
    transposed view of a parameter (stored [k, n]) is `_linear`'s right operand, the
    same values. f32 layers this small stay MKL's matmuls."""
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(64, 128)
            self.stored_k_by_n = torch.nn.Parameter(torch.randn(128, 32) / 8)
            self.bias = torch.nn.Parameter(torch.randn(32))

        def forward(self, x):
            h = torch.relu(self.linear(x))
            return F.linear(h, self.stored_k_by_n.t(), self.bias)

    model = Model().eval().to(dtype)
    tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-4
    assert_compiled_matches(model, torch.randn(16, 64).to(dtype), rtol=tolerance,
                            atol=tolerance, extern_calls=2)
    from conftest import TARGET

    if TARGET["name"] != "cpu":
        return
    (wrapper,) = tmp_path.glob("graph_*/05-wrapper.py")
    source = wrapper.read_text()
    if dtype == torch.bfloat16:  # (the [k, n] parameter is `_linear`'s right operand)
        assert (source.count("_linear_weight(") == 1 and source.count("_linear(") == 1
                and ".permute(" not in source), source
    else:
        assert "_linear_weight(" not in source and "_linear(" not in source, source


def test_large_float32_linear_layers_run_as_onednn_linears_where_that_is_faster(
        tmp_path, monkeypatch):
    """A float32 linear layer of at least F32_ONEDNN_LINEAR_MIN_VOLUME multiply-adds is
    oneDNN's linear on the layer's weight where host_runtime.onednn_linear_pays says so
    (CPUs that are not Intel's: 4-26% faster than MKL's torch.mm on an AMD Zen 4), with
    its bias; a small one stays MKL's (`_addmm` here: its sum is the graph's result); the
    values are eager's, also when oneDNN is disabled when the graph runs (torch.mm then)."""
    from conftest import TARGET
    from dyno.targets import host_runtime

    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 8)).eval()
    x = torch.randn(256, 256)
    compiled = torch.compile(model, backend="mlir", options={"target": TARGET["name"]})
    with torch.no_grad():
        want = model(x)
        torch.testing.assert_close(compiled(x), want, rtol=1e-4, atol=1e-4)
        with torch.backends.mkldnn.flags(enabled=False):
            torch.testing.assert_close(compiled(x), want, rtol=1e-4, atol=1e-4)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]
    if TARGET["name"] != "cpu":
        return
    (wrapper,) = tmp_path.glob("graph_*/05-wrapper.py")
    source = wrapper.read_text()
    large = host_runtime.onednn_linear_pays(torch.float32, 256, 256, 512)
    assert (source.count("_linear_weight(") == 1) == large, source
    # The small one, whose sum is the graph's result, is addmm with its bias
    # (dyno-row-bias-into-matmuls); a large one below the threshold would be `_mm`.
    assert source.count("_addmm(") == 1, source
    assert source.count("_mm(") == (0 if large else 1), source
    assert not host_runtime.onednn_linear_pays(torch.float32, 128, 256, 256)  # 8.4M
    monkeypatch.setattr(host_runtime, "_intel_cpu", lambda: True)
    assert not host_runtime.onednn_linear_pays(torch.float32, 512, 768, 3072)
    monkeypatch.setattr(host_runtime, "_intel_cpu", lambda: False)
    assert host_runtime.onednn_linear_pays(torch.float32, 512, 768, 3072) == \
        torch.backends.mkldnn.is_available()


def test_matmul_and_bmm():
    def fn(a, b, c, d):
        return torch.matmul(a, b).relu(), torch.bmm(c, d) * 0.5
    assert_compiled_matches(fn, torch.randn(17, 23), torch.randn(23, 9),
                            torch.randn(3, 8, 5), torch.randn(3, 5, 6), rtol=1e-4, atol=1e-4,
                            extern_calls=2)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_low_precision_operands_read_in_float32_keep_a_float32_product(dtype):
    """`a.float() @ b.float()` of bf16 `a`, `b` is an f32 product (exact to f32): the
    low-precision library call, right where torch-mlir rounds a bf16 product, rounded it
    too (0.05 off where eager's error is 1e-6). The bf16 products beside it still call
    the library in bf16."""
    a, b = torch.randn(32, 64).to(dtype), torch.randn(64, 16).to(dtype)
    c, d = torch.randn(3, 8, 64).to(dtype), torch.randn(3, 64, 5).to(dtype)
    x, w = torch.randn(2, 3, 12, 12).to(dtype), torch.randn(4, 3, 3, 3).to(dtype)

    def fn(a, b, c, d, x, w):
        return (a.float() @ b.float(), torch.bmm(c.float(), d.float()),
                F.conv2d(x.float(), w.float()), F.linear(a.float(), b.t().float()) + 1.0,
                a @ b, F.conv2d(x, w))
    assert_compiled_matches(fn, a, b, c, d, x, w, rtol=1e-5, atol=1e-5, extern_calls=6)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_scaled_accumulations_round_once_in_low_precision(dtype):
    """baddbmm/addmm with alpha and beta in bf16/f16 add `beta * input` to the f32
    products and round once, as eager's kernels do (decomposed as bmm + add, the
    product was rounded first: baddbmm 0.06 off); a linear layer's addmm keeps the
    low-precision library call."""
    b1, b2 = torch.randn(3, 5, 40).to(dtype), torch.randn(3, 40, 6).to(dtype)
    s, m = torch.randn(3, 5, 6).to(dtype), torch.randn(5, 6).to(dtype)
    a, b, row = torch.randn(5, 40).to(dtype), torch.randn(40, 6).to(dtype), torch.randn(6).to(dtype)

    def fn(b1, b2, s, m, a, b, row):
        return (torch.baddbmm(s, b1, b2, beta=0.5, alpha=2.0), torch.baddbmm(s, b1, b2),
                torch.addmm(m, a, b, beta=0.5, alpha=2.0), torch.addmm(m, a, b),
                torch.addmm(m * float("nan"), a, b, beta=0), torch.addmm(row, a, b))
    args = (b1, b2, s, m, a, b, row)
    ulp = torch.finfo(dtype).eps
    compiled = assert_compiled_matches(fn, *args, rtol=ulp, atol=0)
    # One rounding of the exact result: no farther from float64 than eager's result.
    for got, want, exact in zip(compiled, fn(*args), fn(*[t.double() for t in args])):
        assert (got.double() - exact).norm() <= (want.double() - exact).norm() * 1.05


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_addbmm_in_low_precision_is_as_accurate_as_eager(dtype):
    """Eager's addbmm adds each batch's product into a low-precision result (a rounding
    per batch); Dyno's rounds once: it compiles (torch-mlir could not lower it in bf16)
    and is no farther from a float64 reference."""
    b1, b2, m = torch.randn(8, 5, 40), torch.randn(8, 40, 6), torch.randn(5, 6)
    args = [t.to(dtype) for t in (m, b1, b2)]
    fn = lambda m, b1, b2: torch.addbmm(m, b1, b2, beta=0.5, alpha=2.0)  # noqa: E731
    compiled = assert_compiled_matches(fn, *args, rtol=0.05, atol=0.1, extern_calls=1)
    reference = fn(*[t.double() for t in args])
    eager = fn(*args)
    assert (compiled.double() - reference).norm() <= (eager.double() - reference).norm() * 1.01


def test_conv_batchnorm_relu():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 4, 3, stride=2, bias=False), torch.nn.ReLU())
    model.eval()
    with torch.no_grad():
        model[1].running_mean.uniform_(-0.2, 0.2)
        model[1].running_var.uniform_(0.5, 1.5)
    assert_compiled_matches(model, torch.randn(2, 3, 16, 16), rtol=1e-4, atol=1e-4,
                            extern_calls=2)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_max_pool_with_ceil_mode_in_low_precision(dtype):
    """ceil_mode pads the input past the last window; in bf16/f16 the pool becomes a
    generic (computing in f32), which failed to verify on the padded input (fell back)."""
    def fn(x):
        values, indices = F.max_pool2d(x, 3, stride=2, ceil_mode=True, return_indices=True)
        return values, indices, F.max_pool1d(x.flatten(2), 4, stride=3, ceil_mode=True)
    assert_compiled_matches(fn, torch.randn(2, 3, 7, 10).to(dtype), rtol=0, atol=0)


def test_pooling():
    def fn(x):
        return F.max_pool2d(x, 2), F.avg_pool2d(x, 3, stride=1, padding=1), F.adaptive_avg_pool2d(x, 1)
    assert_compiled_matches(fn, torch.randn(2, 3, 8, 8))


def test_as_strided_and_group_norm_read_constant_gather_indices():
    # On Triton these ran eagerly: torch-mlir writes as_strided's gather indices as
    # constant tensors, which a Triton kernel cannot hold ("'arith.constant' op makes a
    # tensor that the Triton target cannot read"); group_norm's decomposition uses
    # as_strided. The constants now reach the kernels as arguments made once by the host
    # (dyno-hoist-kernel-constants).
    def fn(x, weight, bias, flat):
        return (torch.as_strided(flat, (3, 4), (2, 3), 1) * 2,
                F.group_norm(x, 3, weight, bias),
                *torch.ops.aten.native_group_norm(x, weight, bias, 2, 6, 4, 3, 1e-5))
    assert_compiled_matches(fn, torch.randn(2, 6, 4), torch.randn(6), torch.randn(6),
                            torch.randn(20))


def test_padded_reads_along_a_unit_dimension():
    # Regression (OpInfo sweep, Triton target): a padded operand read at a dimension of
    # extent 1 compared a scalar position with a block ('arith.cmpi' op requires all
    # operands to have the same type); avg_pool2d with ceil_mode and conv1d ran eagerly.
    def fn(x, signal, weight, bias):
        return (F.avg_pool2d(x, 3, 1, 1, True, False, 2),
                F.conv1d(signal, weight, bias, stride=2, padding=2))
    assert_compiled_matches(fn, torch.randn(1, 3, 9, 9), torch.randn(1, 3, 4),
                            torch.randn(3, 3, 3), torch.randn(3), extern_calls=None)


@pytest.mark.parametrize("name", ["max_pool1d", "max_pool2d", "max_pool2d_padded",
                                  "max_pool2d_dilated", "max_pool3d", "max_pool3d_padded",
                                  "adaptive_max_pool2d",
                                  "adaptive_max_pool3d", "adaptive_max_pool1d_unbatched",
                                  "adaptive_max_pool2d_unbatched"])
def test_max_pooling_indices_follow_eager_on_nan_and_minus_inf(name):
    # Regressions (miscompiles on both targets): a window holding a NaN has eager's value
    # NaN and the index of its last NaN; torch-mlir's pooling gave index -1 (max_pool2d),
    # ignored the NaN (adaptive pooling), or another index. A window whose elements are
    # all -inf has the index of its first element inside the input; torch-mlir gave a
    # padding position (-7), or uninitialized memory (adaptive_max_pool3d).
    cases = {
        "max_pool1d": lambda x: F.max_pool1d(x.flatten(1, 2), 3, stride=2, return_indices=True),
        "max_pool2d": lambda x: F.max_pool2d(x, 2, return_indices=True),
        "max_pool2d_padded": lambda x: F.max_pool2d(x, 3, stride=1, padding=1,
                                                    return_indices=True),
        "max_pool2d_dilated": lambda x: F.max_pool2d(x, 2, stride=2, padding=1, dilation=2,
                                                     return_indices=True),
        "max_pool3d": lambda x: F.max_pool3d(x.unflatten(2, (2, 3)), 2, stride=1,
                                             return_indices=True),
        # On Triton this ran partly eagerly: a kernel returned a pad of its input, which
        # now is the host's (dyno-split-kernels-for-triton).
        "max_pool3d_padded": lambda x: F.max_pool3d(x.unflatten(2, (2, 3)), 2, padding=1,
                                                    return_indices=True),
        "adaptive_max_pool2d": lambda x: F.adaptive_max_pool2d(x, (2, 3), return_indices=True),
        "adaptive_max_pool3d": lambda x: F.adaptive_max_pool3d(x.unflatten(2, (2, 3)),
                                                               (1, 2, 3), return_indices=True),
        # Unbatched inputs ran eagerly: torch-mlir lowers only the batched form.
        "adaptive_max_pool1d_unbatched": lambda x: F.adaptive_max_pool1d(
            x[0].flatten(1), 5, return_indices=True),
        "adaptive_max_pool2d_unbatched": lambda x: F.adaptive_max_pool2d(
            x[1], (2, 3), return_indices=True),
    }
    x = torch.randn(2, 3, 6, 6)
    x[0, 0, 1, 1] = x[0, 0, 1, 2] = x[1, 2, 5, 5] = float("nan")
    x[0, 1, :3, :] = -float("inf")
    x[1, 0, :, :] = -float("inf")
    x[1, 1, :, :] = 0.0
    x[1, 1, 2, 3] = -0.0
    # (adaptive_max_pool3d ran eagerly on Triton: its lowering returns its input reshaped,
    # which is now the host's, and reads an uninitialized tensor, now zeros.)
    # torch-mlir lowers adaptive_max_pool3d one of two ways, varying between processes
    # (not with PYTHONHASHSEED); one starts from -FLT_MAX and returned it for an all -inf
    # window (a miscompile seen as a flaky failure). Fresh compiles try both ways.
    compiles = 4 if name == "adaptive_max_pool3d" else 1
    for _ in range(compiles):
        torch._dynamo.reset()
        dyno.reset_stats()
        assert_compiled_matches(cases[name], x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", ["2d", "2d_padded_ceil", "3d_dilated"])
def test_max_pooling_values_and_indices_are_one_kernel(each_target, case, dtype):
    # Performance regression (GPU: 4.3x slower than eager): indices were torch-mlir's
    # pooling repaired by a second pooling of a float64 code per input element, and the
    # values and indices of a window-offset form were separate kernels reading host
    # copies of strided slices. Each window offset is now a slice in one elementwise
    # kernel computing both (dyno-merge-sibling-generics); eager's NaN and -inf rules hold.
    cases = {
        "2d": (lambda x: F.max_pool2d(x, 2, return_indices=True), (2, 3, 8, 10)),
        "2d_padded_ceil": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                                  return_indices=True), (2, 3, 9, 10)),
        "3d_dilated": (lambda x: F.max_pool3d(x, 2, stride=1, padding=1, dilation=2,
                                              return_indices=True), (2, 2, 5, 6, 7)),
    }
    fn, shape = cases[case]
    x = torch.randn(shape).to(dtype)
    flat = x.view(-1)
    flat[::13] = float("nan")
    flat[5::17] = -float("inf")
    x[0, 0] = -float("inf")
    assert_compiled_matches(fn, x, rtol=0, atol=0)
    # One kernel computes both outputs; the Triton target adds one per spatial dimension
    # for the windows' first positions along it (a few integers each).
    dims = len(shape) - 2
    assert dyno.stats()["kernels"] <= (1 if each_target == "cpu" else 1 + dims), dyno.stats()


def test_matmul_of_reshaped_input_stays_a_library_call():
    # Regression: reshape propagation turned this matmul into a generic contraction.
    def fn(x, w):
        return x.reshape(-1, 16) @ w
    assert_compiled_matches(fn, torch.randn(4, 8, 16), torch.randn(16, 32), rtol=1e-4,
                            atol=1e-4, extern_calls=1)
