"""Float32 matrix products on the tensor cores (the Triton runtime's float32_products.py:
three TF32 products each), checked without a GPU: the kernel under Triton's interpreter
(and compiled for sm_90 by Triton's GPU compiler), the wrapper's choice of the products
that take it, and the layouts that stay with cuBLAS. Speed and accuracy on a GPU:
benchmarks/experiments/gpu_f32_gemm_precision.py."""
import os
import tempfile
import warnings

import pytest
import torch

import dyno
from dyno.targets import host_runtime
from dyno.targets.triton import runtime as triton_runtime
from dyno.targets.triton.runtime import compile_check, float32_products
from test_gpu_host_path import _FakeJit  # (Triton's JIT entry and C launcher, faked)


def _products(**kwargs):
    return float32_products.Float32Products("cpu", interpret=True, **kwargs)


def _relative_error(got, a, b, bias):
    want = a.double() @ b.double() + (bias.double() if bias is not None else 0)
    return ((got.double() - want).norm() / want.norm()).item()


@pytest.mark.parametrize("m, k, n", [(130, 70, 200), (1, 33, 7), (64, 64, 64), (3, 1, 129)])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("with_out", [False, True])
def test_tensor_core_products_match_the_float64_product(m, k, n, with_bias, with_out):
    """[m, k] @ [k, n] (+ a bias row) with a linear layer's weight ([n, k], read
    transposed), sizes that are not multiples of the blocks: every element written
    (the output is poisoned with NaN first), within float32 rounding of float64."""
    torch.manual_seed(m * 1000 + k + n)
    a = torch.randn(m, k)
    b = torch.randn(n, k).t()
    bias = torch.randn(n) if with_bias else None
    out = torch.full((m, n), float("nan")) if with_out else None
    got = _products()(a, b, bias, out=out)
    if with_out:
        assert got is out
    assert got.shape == (m, n) and got.dtype == torch.float32
    assert torch.isfinite(got).all()
    assert _relative_error(got, a, b, bias) < 1e-6


@pytest.mark.parametrize("with_bias", [False, True])
def test_a_b_stored_n_major_is_read_from_a_k_major_copy_made_in_the_call(with_bias):
    """A B stored [K, N] (GPT-2's Conv1D weights, without freezing): the kernel reads a
    K-major copy made in each call (none kept), and the result is within float32
    rounding of the float64 product; a later write to B is seen by the next call."""
    torch.manual_seed(1)
    a, b = torch.randn(70, 48), torch.randn(48, 33)
    bias = torch.randn(33) if with_bias else None
    products = _products()
    got = products(a, b, bias)
    assert _relative_error(got, a, b, bias) < 1e-6
    assert products.kept == {}
    b.mul_(-2)
    got = products(a, b, bias)
    assert _relative_error(got, a, b, bias) < 1e-6


@pytest.mark.parametrize("layout", ["strided a", "bfloat16"])
def test_operands_of_other_layouts_run_cublas(layout, monkeypatch):
    """An A whose rows are not contiguous in K, and other dtypes, run torch.mm / addmm:
    the kernel is not launched, the result is torch's exactly."""
    def no_launch(*args, **kwargs):
        raise AssertionError("the tensor-core kernel launched")

    monkeypatch.setattr(float32_products.Float32Products, "_launch", no_launch)
    torch.manual_seed(0)
    a, b, bias = torch.randn(40, 24), torch.randn(16, 24).t(), torch.randn(16)
    if layout == "strided a":
        a = torch.randn(24, 40).t()
    else:
        a, b, bias = a.bfloat16(), b.bfloat16(), bias.bfloat16()
    assert torch.equal(_products()(a, b, bias), torch.addmm(bias, a, b))
    assert torch.equal(_products()(a, b), torch.mm(a, b))


def test_an_empty_inner_dimension_gives_the_bias():
    a, b, bias = torch.randn(5, 0), torch.randn(3, 0).t(), torch.randn(3)
    assert torch.equal(_products()(a, b, bias), bias.expand(5, 3))
    assert torch.equal(_products()(a, b), torch.zeros(5, 3))


def test_the_kernel_compiles_for_hopper(monkeypatch):
    """With compile-check targets (DYNO_TRITON_COMPILE_CHECK, as scripts/test.sh sets),
    each interpreted configuration is first compiled by Triton's GPU compiler for them:
    the tf32x3 dot is accepted for sm_90."""
    checked = []
    real_check = compile_check.check_gpu_compile

    def check(function, *args):
        checked.append(function.__name__)
        return real_check(function, *args)

    monkeypatch.setattr(float32_products, "check_gpu_compile", check)
    a, b = torch.randn(20, 16), torch.randn(8, 16).t()
    _products(check_targets=[("cuda", 90)])(a, b, torch.randn(8))
    assert checked == ["_float32_product"]


def test_the_heuristic_configurations_compile_for_hopper():
    """Each configuration the heuristic picks on a GPU is compiled by Triton's GPU
    compiler for sm_90 (the interpreter itself runs SMALL), and computes the product."""
    products = _products(check_targets=[("cuda", 90)])
    a, b = torch.randn(20, 16), torch.randn(8, 16).t()
    c = torch.empty(20, 8)
    arguments = (a, b, a, c, 20, 8, 16, *a.stride(), *b.stride(), *c.stride())
    for config in (float32_products.LARGE, float32_products.SMALL_DEEP,
                   float32_products.SMALL):
        c.fill_(float("nan"))
        products._launch(config, arguments, has_bias=False)
        torch.testing.assert_close(c, a @ b, rtol=1e-5, atol=1e-5)


class _Processors(float32_products.Float32Products):
    def __init__(self, processors):
        super().__init__("cpu", interpret=False)
        self.processors = processors


@pytest.mark.parametrize("m, k, n, picked", [
    (4096, 768, 2304, "LARGE"),        # 576 tiles of 128 x 128: 4.4 waves of 132
    (2048, 2048, 2048, "LARGE"),       # 256 tiles: 1.94 waves
    (4096, 768, 768, "SMALL"),         # 192 tiles: 1.45 waves; 768 of 64 x 64, K 768
    (4096, 3072, 768, "SMALL_DEEP"),   # the same tiles, K 3072
    (2048, 2048, 256, "SMALL_DEEP"),   # 128 tiles of 64 x 64
    (6304, 768, 768, "SMALL"),         # 300 tiles: 2.27 waves; 1188 of 64 x 64
    (1024, 512, 1536, "SMALL"),        # 96 tiles; 384 of 64 x 64, K 512
])
def test_the_heuristic_picks_the_measured_fastest_configuration(m, k, n, picked):
    """The block configuration without timing, on an H100's 132 multiprocessors: as the
    configuration sweep measured fastest (or within 7% of it) on these shapes."""
    assert _Processors(132).heuristic_config(m, n, k) is getattr(float32_products, picked)


def _exported(model, x, options=None):
    with tempfile.TemporaryDirectory() as directory:
        dyno.export_triton(model, (x,), directory, options=options)
        with open(os.path.join(directory, "wrapper.py")) as file:
            wrapper = file.read()
        program = triton_runtime.load(directory, device="cpu")
        with torch.no_grad():
            return wrapper, program(x)


def test_large_float32_linear_layers_run_on_the_tensor_cores(monkeypatch):
    """The Triton target's wrapper calls the tensor-core products for its static float32
    products of at least TENSOR_CORE_FLOAT32_MIN_OUTPUTS outputs (lowered here: the
    interpreter is slow), into their workspace slots; the program matches eager, and its
    distance from the float64 model is within 1.5x of eager's (interpreted, the dot is
    numpy's float32 product; the tensor cores' accuracy is measured on the GPU). With
    `tensor_core_float32=False` the products are cuBLAS's (`_mm`)."""
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_MIN_OUTPUTS", 1)
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_MIN_K", 1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(48, 96), torch.nn.GELU(),
                                torch.nn.Linear(96, 40, bias=False)).eval()
    x = torch.randn(3, 7, 48)
    wrapper, got = _exported(model, x)
    assert wrapper.count("_kernels.float32_products(") == 2, wrapper
    assert "out=_ws[" in wrapper, wrapper
    with torch.no_grad():
        want = model(x)
        exact = model.double()(x.double())
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert (got.double() - exact).norm() <= 1.5 * (want.double() - exact).norm()
    wrapper, got = _exported(model.float(), x, options={"tensor_core_float32": False})
    assert "float32_products" not in wrapper and "_mm(" in wrapper, wrapper
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_small_and_low_precision_products_stay_with_cublas():
    """Where cuBLAS was measured faster (fewer than 2^18 outputs, K below 128, K above
    1024 with fewer than 2^19 outputs; a B copied in the call with fewer than 2048 rows),
    and in bf16, products stay cuBLAS's."""
    assert host_runtime.tensor_core_float32_product(520, 512, 512)
    assert host_runtime.tensor_core_float32_product(2048, 128, 128)
    assert not host_runtime.tensor_core_float32_product(1024, 512, 128)
    assert not host_runtime.tensor_core_float32_product(4096, 64, 512)
    assert host_runtime.tensor_core_float32_product(2048, 2048, 256)
    assert not host_runtime.tensor_core_float32_product(1024, 2048, 256)
    assert host_runtime.tensor_core_float32_product(2048, 768, 768, copies_b=True)
    assert not host_runtime.tensor_core_float32_product(1024, 768, 3072, copies_b=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64).eval()
    x = torch.randn(4, 64)
    for m in (model, model.bfloat16()):
        wrapper, _ = _exported(m, x.to(next(m.parameters()).dtype))
        assert "float32_products" not in wrapper, wrapper


def test_the_option_is_checked():
    with pytest.raises(ValueError, match="tensor_core_float32 must be True or False"):
        dyno.export_triton(torch.nn.Linear(4, 4), (torch.randn(2, 4),),
                           tempfile.mkdtemp(), options={"tensor_core_float32": "yes"})


def test_a_layouts_later_products_launch_directly(monkeypatch):
    """On a GPU (faked here), a layout's first product launches through Triton's JIT;
    later ones with 16-byte aligned pointers call Triton's C launcher with the same
    arguments and the constexpr blocks, and nothing else; an unaligned pointer, another
    shape or a bias goes through the JIT again."""
    from dyno.targets.triton.runtime import launch as runtime_launch

    monkeypatch.setattr(runtime_launch, "_raw_stream", lambda device: 1000 + device)
    monkeypatch.setattr(runtime_launch, "_current_device", lambda: 0)
    kernel = _FakeJit()
    monkeypatch.setattr(float32_products, "_kernel", lambda interpret: kernel)
    monkeypatch.setattr(float32_products.Float32Products, "_config",
                        lambda self, key, arguments: float32_products.CONFIGS[0])
    products = float32_products.Float32Products("cpu", interpret=False)
    a, b = torch.randn(256, 64), torch.randn(384, 64).t()
    out = torch.empty(256, 384)
    assert products(a, b, out=out) is out
    assert [entry[0] for entry in kernel.log] == ["jit"]
    assert kernel.log[0][1] == (2 * 3,)  # 128 x 128 blocks
    products(a, b, out=out)
    sizes = (256, 384, 64, 64, 1, 1, 64, 384, 1)
    assert kernel.log[-1] == ("direct", (6, 1, 1, 1000, "function", "metadata", None, None,
                                         None, a, b, a, out, *sizes,
                                         False, 128, 128, 64, 8))
    storage = torch.empty(256 * 64 + 1)
    unaligned = storage[1:].view(256, 64)
    unaligned.copy_(a)
    products(unaligned, b, out=out)
    products(a[:128], b, out=out[:128])
    products(a, b, torch.zeros(384), out=out)
    assert [entry[0] for entry in kernel.log] == ["jit", "direct", "jit", "jit", "jit"]
    products(a, b, torch.zeros(384), out=out)
    assert [entry[0] for entry in kernel.log][-1] == "direct"


def test_a_gpu_that_cannot_compile_the_kernel_runs_cublas_and_says_so(monkeypatch):
    """Where Triton cannot compile the kernel for the GPU (no TF32 tensor cores, another
    backend), the product is cuBLAS's float32 GEMM from then on, with one warning: the
    user's program runs."""
    def no_compile(self, config, arguments, has_bias):
        raise RuntimeError("no tf32 dot on this target")

    monkeypatch.setattr(float32_products.Float32Products, "_launch", no_compile)
    monkeypatch.setattr(float32_products.Float32Products, "_config",
                        lambda self, key, arguments: float32_products.CONFIGS[0])
    products = float32_products.Float32Products("cpu", interpret=False)
    a, b, bias = torch.randn(8, 16), torch.randn(4, 16).t(), torch.randn(4)
    with pytest.warns(RuntimeWarning, match="unavailable on this GPU"):
        assert torch.equal(products(a, b, bias), torch.addmm(bias, a, b))
    assert products.unavailable
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning
        assert torch.equal(products(a, b), torch.mm(a, b))


class _Conv1D(torch.nn.Module):
    """GPT-2's Conv1D: a weight stored [in, out] ([K, N]), x @ weight + bias."""

    def __init__(self, k, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(k, n) * k ** -0.5)
        self.bias = torch.nn.Parameter(torch.randn(n))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight)


def test_frozen_weights_stored_k_by_n_run_on_the_tensor_cores_from_a_kept_copy(monkeypatch):
    """With `freezing`, a weight stored [K, N] (GPT-2's Conv1D) is read from a K-major
    copy the runtime keeps (torch.compile on the Triton target; CPU tensors run under the
    interpreter), again after a write to the weight; the results follow eager's. Without
    freezing such a product stays cuBLAS's."""
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_MIN_OUTPUTS", 1)
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_MIN_K", 1)
    copies = []
    k_major = float32_products.Float32Products.k_major
    monkeypatch.setattr(float32_products.Float32Products, "k_major",
                        lambda self, slot, b: copies.append(slot) or k_major(self, slot, b))
    torch.manual_seed(0)
    model = _Conv1D(48, 80).eval()
    x = torch.randn(6, 48)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="mlir",
                             options={"target": "triton", "freezing": True, "cache": False})
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
        assert copies == [0]
        model.weight.mul_(-0.5)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert dyno.stats()["fallback_graphs"] == 0
    wrapper, _ = _exported(model, x)
    assert "float32_products" not in wrapper, wrapper  # fewer rows than the copy needs


def test_weights_stored_k_by_n_run_on_the_tensor_cores_from_a_copy_made_per_call(
        monkeypatch):
    """Without freezing, a product whose weight is stored [K, N] (GPT-2's Conv1D) runs on
    the tensor cores from a K-major copy made in the call (k_major_copies, before the
    product), where A has at least TENSOR_CORE_FLOAT32_COPY_MIN_ROWS rows (lowered here;
    the interpreter is slow): nothing is kept between calls, a write to the weight is
    seen, results follow eager's. Below that many rows it stays cuBLAS's."""
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_MIN_OUTPUTS", 1)
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_MIN_K", 1)
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_COPY_MIN_ROWS", 6)
    assert host_runtime.tensor_core_float32_product(6, 48, 80, copies_b=True)
    assert not host_runtime.tensor_core_float32_product(5, 48, 80, copies_b=True)
    assert host_runtime.tensor_core_float32_product(5, 48, 80)
    torch.manual_seed(0)
    model = _Conv1D(48, 80).eval()
    x = torch.randn(6, 48)
    wrapper, _ = _exported(model, x)
    assert wrapper.count("_kernels.float32_products(") == 1, wrapper
    assert wrapper.count("_kernels.float32_products.k_major_copies(arg") == 1, wrapper
    assert "kmajor0[0]" in wrapper and "kept=" not in wrapper, wrapper
    copies = []
    products = float32_products.Float32Products.__call__
    monkeypatch.setattr(float32_products.Float32Products, "__call__",
                        lambda self, a, b, *rest, **kw: copies.append(b.stride())
                        or products(self, a, b, *rest, **kw))
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="mlir",
                             options={"target": "triton", "cache": False})
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
        model.weight.mul_(-0.5)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert copies == [(1, 48), (1, 48)]  # K-major copies of the weight stored [K, N]
    assert dyno.stats()["fallback_graphs"] == 0
    wrapper, _ = _exported(model, x[:5])
    assert "float32_products" not in wrapper, wrapper


def test_a_kept_k_major_copy_is_made_once_and_again_after_a_write():
    products = _products()
    a, weight = torch.randn(8, 16), torch.randn(16, 24)
    first = products(a, weight, kept=0)
    copy = products.kept[0][0]
    assert copy.stride() == (1, 16) and torch.equal(copy, weight)
    products(a, weight, kept=0)
    assert products.kept[0][0] is copy  # made once
    with torch.no_grad():
        weight.mul_(2)  # an optimizer's in-place update: its version counter moves
    second = products(a, weight, kept=0)
    assert products.kept[0][0] is not copy
    torch.testing.assert_close(second, first * 2)


class _Conv1DStack(torch.nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.layers = torch.nn.ModuleList(_Conv1D(k, n) for k, n in zip(widths, widths[1:]))

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


def test_a_graphs_k_by_n_weights_are_copied_k_major_four_to_a_launch(monkeypatch):
    """Five Conv1D layers: their weights are copied K-major in two launches (four, then
    one), each made before its group's first product and released after its last; the
    program matches eager."""
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_MIN_OUTPUTS", 1)
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_MIN_K", 1)
    monkeypatch.setattr(host_runtime, "TENSOR_CORE_FLOAT32_COPY_MIN_ROWS", 1)
    torch.manual_seed(0)
    model = _Conv1DStack([24, 40, 16, 33, 24, 8]).eval()
    x = torch.randn(10, 24)
    wrapper, got = _exported(model, x)
    lines = wrapper.splitlines()
    groups = [i for i, line in enumerate(lines) if "k_major_copies(" in line]
    assert len(groups) == 2, wrapper
    assert lines[groups[0]].count("arg") == 4 and lines[groups[1]].count("arg") == 1
    products = [i for i, line in enumerate(lines) if "_kernels.float32_products(" in line]
    assert len(products) == 5 and groups[0] < products[0] and \
        products[3] < groups[1] < products[4], wrapper
    assert any(line.strip().startswith("del") and "kmajor0" in line
               for line in lines[products[3]:]), wrapper  # released after its last read
    with torch.no_grad():
        torch.testing.assert_close(got, model(x), rtol=1e-5, atol=1e-5)


def test_k_major_copies_of_several_shapes_in_one_launch():
    """k_major_copies: matrices of any sizes (not multiples of the tile), each copied
    K-major exactly, 16-byte aligned; one already K-major, or of another dtype, is given
    back as it is."""
    torch.manual_seed(0)
    weights = [torch.randn(48, 33), torch.randn(70, 5), torch.randn(16, 16).t(),
               torch.randn(3, 130), torch.randn(65, 64), torch.randn(7, 9).double()]
    copies = _products(check_targets=[("cuda", 90)]).k_major_copies(*weights)
    assert copies[2] is weights[2] and copies[5] is weights[5]
    for weight, copy in zip(weights, copies):
        assert torch.equal(copy, weight)
        if copy is not weight:
            assert copy.stride() == (1, weight.shape[0]) and copy.data_ptr() % 16 == 0


def test_wrong_grouped_copies_on_a_gpu_fall_back_to_torchs_copies(monkeypatch):
    """On a GPU the grouped copies are compared with the weights once per launch path
    (faked here: CPU tensors taken as a GPU's, a kernel that writes zeros): a mismatch
    warns once and torch's copies are used from then on; the copies returned are right."""
    products = float32_products.Float32Products("cpu", interpret=False)
    monkeypatch.setattr(float32_products.Float32Products, "_copy_group",
                        lambda self, group: ([torch.zeros_like(w).t().contiguous().t()
                                              for w in group], False))
    monkeypatch.setattr(torch.Tensor, "is_cuda", property(lambda self: True))
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    weights = [torch.randn(8, 5), torch.randn(5, 7)]
    with pytest.warns(RuntimeWarning, match="wrong copies"):
        copies = products.k_major_copies(*weights)
    assert all(torch.equal(c, w) and c.stride() == (1, w.shape[0])
               for c, w in zip(copies, weights))
    assert products.copies_unavailable
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copies = products.k_major_copies(*weights)
    assert all(torch.equal(c, w) for c, w in zip(copies, weights))


def test_matrices_too_large_for_one_launch_are_given_back_for_the_product_to_copy(
        monkeypatch):
    """A matrix of MAX_GROUPED_ELEMENTS or more (lowered here) is not grouped (the
    launch's 32-bit offsets): given back as stored, which the product then copies
    K-major in its own call; the smaller ones are still copied in one launch."""
    monkeypatch.setattr(float32_products, "MAX_GROUPED_ELEMENTS", 100)
    torch.manual_seed(0)
    small, large = torch.randn(8, 12), torch.randn(10, 10)
    copies = _products().k_major_copies(small, large)
    assert copies[1] is large
    assert torch.equal(copies[0], small) and copies[0].stride() == (1, 8)
    a = torch.randn(6, 10)
    assert _relative_error(_products()(a, copies[1]), a, large, None) < 1e-6


def test_a_weight_with_nans_passes_the_copy_check(monkeypatch):
    """The check compares bits: a NaN copied as it is (a weight made by torch.empty)
    is not a wrong copy."""
    products = float32_products.Float32Products("cpu", interpret=False)
    monkeypatch.setattr(float32_products.Float32Products, "_copy_group",
                        lambda self, group: ([w.t().contiguous().t() for w in group],
                                             False))
    monkeypatch.setattr(torch.Tensor, "is_cuda", property(lambda self: True))
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    weight = torch.randn(6, 5)
    weight[2, 3] = float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy, = products.k_major_copies(weight)
    assert not products.copies_unavailable and copy.stride() == (1, 6)
