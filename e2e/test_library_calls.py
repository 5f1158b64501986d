"""Linear algebra and long FFTs as library calls inside compiled graphs
(dyno/library_calls.py): PyTorch's LAPACK/pocketfft routines called by the wrapper, the
rest of the graph in Dyno's kernels, nothing run eagerly; on both targets."""
import pytest
import torch

import dyno
from conftest import NO_TRITON_COMPLEX, TARGET, assert_compiled_matches, xfail_on_triton

pytestmark = pytest.mark.usefixtures("each_target")


def _spd(n, batch=()):
    a = torch.randn(*batch, n, n)
    return a @ a.transpose(-1, -2) + n * torch.eye(n)


def test_factorizations_and_solves_around_kernels():
    # Each routine's result feeds a kernel (or is one), so the wrapper's library calls
    # and Dyno's kernels interleave; batched inputs; keyword-only arguments (upper, left).
    def fn(a, b, general):
        lower = torch.linalg.cholesky(a)
        upper = torch.linalg.cholesky(a, upper=True)
        lu, pivots = torch.linalg.lu_factor(general)
        return (lower * 2.0, upper.sum(-1), torch.cholesky_solve(b, lower),
                torch.linalg.solve_triangular(lower, b, upper=False) + 1.0,
                torch.linalg.solve_triangular(upper, b.mT, upper=True, left=False),
                torch.linalg.lu_solve(lu, pivots, b), lu, pivots,
                torch.linalg.inv(general).abs(), torch.linalg.slogdet(general)[1],
                torch.linalg.solve(general, b))
    assert_compiled_matches(fn, _spd(5, (3,)), torch.randn(3, 5, 2), torch.randn(3, 5, 5),
                            rtol=1e-4, atol=1e-5)


def test_qr_eigen_and_singular_values():
    def fn(a, symmetric):
        q, r = torch.linalg.qr(a)
        return (q.abs().sum(), r.diagonal(dim1=-2, dim2=-1).abs(),
                torch.linalg.eigvalsh(symmetric), torch.linalg.svdvals(a) * 2.0,
                torch.linalg.matrix_norm(a, ord="nuc"), torch.linalg.pinv(a).abs().sum(0))
    assert_compiled_matches(fn, torch.randn(6, 4), _spd(4), rtol=1e-4, atol=1e-4)


def test_singular_matrix_raises_as_eager():
    # linalg.cholesky checks LAPACK's info (aten._linalg_check_errors, a library call the
    # compiled graph keeps): a matrix that is not positive-definite makes that call run
    # eagerly, which raises eager's error; the next call runs compiled again.
    options = {"target": TARGET["name"]}
    compiled = torch.compile(lambda a: torch.linalg.cholesky(a) + 1.0, backend="mlir",
                             options=options)
    good = _spd(3)
    torch.testing.assert_close(compiled(good), torch.linalg.cholesky(good) + 1.0)
    assert dyno.stats()["compiled_graphs"] == 1 and dyno.stats()["extern_calls"] >= 1
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.cholesky(-good)
    with pytest.raises(torch.linalg.LinAlgError):
        compiled(-good)
    assert dyno.stats()["runtime_fallbacks"] == 1
    torch.testing.assert_close(compiled(good * 2.0), torch.linalg.cholesky(good * 2.0) + 1.0)
    assert dyno.stats()["runtime_fallbacks"] == 1  # compiled again
    assert dyno.stats()["fallback_graphs"] == 0


@pytest.mark.parametrize("n", [1, 7, 128, 300])
def test_ffts_are_library_calls_between_kernels(n):
    # Real in, real out: Dyno's kernels before and after, the transforms in pocketfft
    # (cuFFT on GPUs); odd and even lengths, norm modes.
    def fn(x):
        spectrum = torch.fft.rfft(x * 3.0, norm="ortho")
        return (torch.fft.irfft(spectrum, n=n, norm="ortho") - 1.0,
                torch.fft.irfft(torch.fft.rfft(x), n=n) * 2.0)
    assert_compiled_matches(fn, torch.randn(3, n), rtol=1e-5, atol=1e-5, extern_calls=4)


@pytest.mark.parametrize("n", [2, 33])
def test_ffts_with_complex_results(n, request):
    # Every kind of transform, over one and two dims, of real and complex inputs built in
    # the graph; Dyno's kernels compute the complex abs of one result.
    xfail_on_triton(request, NO_TRITON_COMPLEX)

    def fn(x, y, z):
        return (torch.fft.fft(x), torch.fft.ifft(x, norm="forward"), torch.fft.rfft(x),
                torch.fft.hfft(y, n=n), torch.fft.ihfft(x), torch.fft.fft2(z),
                torch.fft.rfftn(z, norm="forward"), torch.fft.fft(torch.complex(x, x - 1.0)),
                torch.fft.rfft(x * 2.0).abs() + 1.0)
    assert_compiled_matches(fn, torch.randn(3, n), torch.randn(2, n // 2 + 1),
                            torch.randn(2, 5, n), rtol=1e-5, atol=1e-5)


def test_1d_convolutions_are_library_calls():
    """A batched 1-D convolution (wav2vec 2.0's feature extractor) is a 2-D convolution
    of height 1 for the library (ops/convolution_decompositions.py), with strides,
    padding, dilation and a bias, followed by a kernel; a grouped one (wav2vec 2.0's
    positional convolution) too, with its groups."""
    import torch.nn.functional as F

    def fn(signal, weight, bias, grouped, grouped_bias):
        y = F.conv1d(signal, weight, bias, stride=2, padding=3, dilation=2)
        return F.gelu(y), F.conv1d(signal, grouped, grouped_bias, padding=2, groups=3)
    assert_compiled_matches(fn, torch.randn(2, 3, 50), torch.randn(6, 3, 5),
                            torch.randn(6), torch.randn(6, 1, 4), torch.randn(6),
                            extern_calls=2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_grouped_and_depthwise_convolutions_are_library_calls(dtype):
    """Depthwise convolutions (ConvNeXt's 7x7, one with two filters per channel) and
    grouped ones, with strides, padding, dilation and biases, are library convolutions
    with groups (cuDNN, oneDNN), not loop kernels; kernels read their results."""
    import torch.nn.functional as F

    def fn(x, depthwise, depthwise_bias, grouped, grouped_bias, two_per_channel):
        a = F.conv2d(x, depthwise, depthwise_bias, padding=3, groups=8)
        b = F.conv2d(x, grouped, grouped_bias, stride=2, padding=1, dilation=2, groups=4)
        c = F.conv2d(x, two_per_channel, groups=8)
        return F.gelu(a), b * 2.0, c + 1.0
    inputs = [torch.randn(2, 8, 15, 15), torch.randn(8, 1, 7, 7), torch.randn(8),
              torch.randn(12, 2, 3, 3), torch.randn(12), torch.randn(16, 1, 3, 3)]
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    assert_compiled_matches(fn, *[t.to(dtype) for t in inputs], extern_calls=3,
                            rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_patch_embeddings_are_matrix_products_on_the_cpu(dtype, tmp_path, monkeypatch):
    """On the CPU, a float32 convolution whose stride is its kernel's size (ViT's, Swin's and
    ConvNeXt's patch embeddings), without padding, dilation or groups, is a matrix
    product of the image's patches with the flattened filter, NCHW as eager's result
    (ops/convolution_decompositions.py: oneDNN's call of one cost about 45 us more than
    its convolution): square and oblong patches, with a bias and without, an image whose
    last rows and columns make no whole patch (no output reads them). A 1x1 convolution
    of stride 1, a padded one and a grouped one stay convolutions. The results match
    eager, are no less accurate against float64, and the patch products' gradients
    match eager's in training. bf16 (whose products are oneDNN's calls too) and the
    Triton target keep all of them convolutions."""
    import copy
    import torch.nn.functional as F
    from conftest import TARGET

    def fn(x, w, b, oblong, pointwise, grouped):
        return (F.conv2d(x, w, b, stride=4) * 2.0,  # 18x18 image: rows 16, 17 unread
                F.conv2d(x, oblong, stride=(2, 3)) + 1.0,
                F.conv2d(x, pointwise).relu(),  # a convolution
                F.conv2d(x, w, b, stride=4, padding=1).relu(),  # a convolution
                F.conv2d(x, grouped, stride=2, groups=3).relu())  # a convolution
    torch.manual_seed(0)
    inputs = [torch.randn(2, 3, 18, 18), torch.randn(8, 3, 4, 4), torch.randn(8),
              torch.randn(5, 3, 2, 3), torch.randn(6, 3, 1, 1), torch.randn(6, 1, 2, 2)]
    inputs = [t.to(dtype) for t in inputs]
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    cpu = TARGET["name"] == "cpu" and dtype == torch.float32
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    got = assert_compiled_matches(fn, *inputs, rtol=tolerance, atol=tolerance,
                                  extern_calls=5)
    monkeypatch.delenv("DYNO_DEBUG_DIR")
    (kernels,) = tmp_path.glob("graph_*/03-kernels.mlir")
    contractions = kernels.read_text()
    assert (contractions.count('dyno.contraction "matmul"'),
            contractions.count('dyno.contraction "conv2d"')) == ((2, 3) if cpu else (0, 5))
    reference = fn(*[t.double() for t in inputs])
    with torch.no_grad():
        eager = fn(*inputs)
    roundoff = torch.finfo(dtype).eps / 2
    for compiled, want, exact in zip(got, eager, reference):
        error = lambda t: ((t.double() - exact).norm() / exact.norm()).item()
        assert error(compiled) <= 1.25 * error(want) + roundoff, (error(compiled),
                                                                  error(want))
    # Training: the products' gradients (patches, filter, bias) match eager's.
    x, w, b = (t.detach().clone().requires_grad_() for t in inputs[:3])
    eager_x, eager_w, eager_b = (copy.deepcopy(t) for t in (x, w, b))
    compiled_fn = torch.compile(lambda x, w, b: F.conv2d(x, w, b, stride=4).tanh().sum(),
                                backend="mlir", options={"target": TARGET["name"]})
    compiled_fn(x, w, b).backward()
    F.conv2d(eager_x, eager_w, eager_b, stride=4).tanh().sum().backward()
    for mine, theirs in ((x, eager_x), (w, eager_w), (b, eager_b)):
        torch.testing.assert_close(mine.grad, theirs.grad, rtol=tolerance * 10,
                                   atol=tolerance * 10)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]
