"""The wrapper's static view layouts (python/dyno/targets/view_layouts.py): a chain of
views of a dense buffer made by one `_view` call sees exactly the elements torch's own
views see, and a reshape torch would copy is never taken for a view."""
import random

import pytest
import torch

import dyno
from dyno.targets import view_layouts
from dyno.targets.host_runtime import _fast_view, view


def _random_factorization(count: int, rng: random.Random):
    sizes = []
    while count > 1:
        size = rng.choice([d for d in range(2, count + 1) if count % d == 0])
        sizes.append(size)
        count //= size
    sizes += [1] * rng.randint(0, 1)
    rng.shuffle(sizes)
    return sizes or [1]


def test_permuted_then_reshaped_layouts_match_torch():
    rng = random.Random(0)
    views = copies = 0
    for _ in range(2000):
        shape = [rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(1, 5))]
        buffer = torch.arange(float(torch.Size(shape).numel()))
        permutation = list(range(len(shape)))
        rng.shuffle(permutation)
        permuted = buffer.view(shape).permute(permutation)
        layout = view_layouts.permuted(
            ("buf", tuple(shape), view_layouts.dense_strides(shape), 0), permutation)
        assert layout[2] == permuted.stride()
        new_shape = _random_factorization(permuted.numel(), rng)
        reshaped = view_layouts.reshaped(layout, new_shape)
        try:
            permuted.view(new_shape)
            is_view = True
        except RuntimeError:
            is_view = False
        assert (reshaped is not None) == is_view, (shape, permutation, new_shape)
        if reshaped is None:
            copies += 1
            continue
        views += 1
        _, got_shape, strides, offset = reshaped
        seen = view(buffer, got_shape, strides, offset)
        assert torch.equal(seen, permuted.reshape(new_shape))
        assert view_layouts.is_dense(got_shape, strides) == seen.is_contiguous()
    assert views > 500 and copies > 100  # both cases were exercised


def test_the_fast_view_starts_where_its_tensor_starts():
    base = torch.arange(24.0)[4:]
    torch.testing.assert_close(_fast_view(base, (2, 3), (1, 2), 1),
                               view(base, (2, 3), (1, 2), 1))
    assert torch.equal(view(base, (2, 3), (1, 2), 1), base[1:].as_strided((2, 3), (1, 2)))


class _Heads(torch.nn.Module):
    """Heads split out of a kernel's output (a reshape of a transpose), then merged."""

    def forward(self, x):
        h = (x * 2.0).view(4, 6, 2, 8).transpose(1, 2)
        return torch.matmul(h, h.transpose(-1, -2)).softmax(-1).transpose(1, 2).reshape(4, 6, 12)


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_view_chains_are_made_in_one_call(target, tmp_path, monkeypatch):
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    x = torch.randn(4, 6, 16)
    with torch.no_grad():
        want = _Heads()(x)
        got = torch.compile(_Heads(), backend="mlir", options={"target": target})(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]
    (wrapper,) = tmp_path.glob("graph_*/0[56]-wrapper.py")
    source = wrapper.read_text()
    assert "_view(" in source, source


def test_sliced_layouts_match_torch():
    rng = random.Random(1)
    for _ in range(500):
        shape = [rng.randint(1, 5) for _ in range(rng.randint(1, 4))]
        buffer = torch.arange(float(torch.Size(shape).numel()))
        offsets, sizes, steps, kept, index = [], [], [], [], []
        for size in shape:
            offset = rng.randrange(size)
            step = rng.randint(1, 2)
            count = rng.randint(1, (size - offset - 1) // step + 1)
            drop = count == 1 and rng.random() < 0.3  # a rank-reducing slice
            offsets.append(offset)
            sizes.append(count)
            steps.append(step)
            kept.append(not drop)
            index.append(offset if drop else slice(offset, offset + (count - 1) * step + 1, step))
        want = buffer.view(shape)[tuple(index)]
        _, got_shape, strides, offset = view_layouts.sliced(
            ("buf", tuple(shape), view_layouts.dense_strides(shape), 0), offsets, sizes,
            steps, kept)
        assert torch.equal(view(buffer, got_shape, strides, offset), want)


class _FusedQKV(torch.nn.Module):
    """GPT-2's attention inputs: one linear layer's output sliced into q, k and v, each
    reshaped into heads and permuted."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(32, 96)

    def forward(self, x):
        q, k, v = self.qkv(x).split(32, dim=-1)
        heads = [t.reshape(2, 8, 4, 8).permute(0, 2, 1, 3) for t in (q, k, v)]
        return torch.nn.functional.scaled_dot_product_attention(*heads, is_causal=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_slices_of_a_linear_layers_output_are_views_made_in_one_call(dtype, tmp_path,
                                                                      monkeypatch):
    """On the Triton target a linear layer is `_addmm` with its bias (float32 too:
    dyno-row-bias-into-matmuls), its result has a static layout, and each of q, k and v
    (a slice, a reshape, a permute) is one `_view`: no kernel adds the bias per slice."""
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = _FusedQKV().eval().to(dtype)
    x = torch.randn(2, 8, 32).to(dtype)
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="mlir", options={"target": "triton"})(x)
    tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(got, want, rtol=tolerance, atol=tolerance)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]
    (wrapper,) = tmp_path.glob("graph_*/06-wrapper.py")
    source = wrapper.read_text()
    assert source.count("_view(") >= 3, source
    assert "[0:" not in source and ".permute(" not in source, source
    assert source.count("_addmm(") == 1 and "_kernels[" not in source, source


class _LinearReaders(torch.nn.Module):
    """Linear layers whose sums a kernel reads (a GELU, a residual add) and one whose sum
    only attention reads (through a reshape and a transpose)."""

    def __init__(self):
        super().__init__()
        self.up, self.down, self.q = (torch.nn.Linear(32, 32) for _ in range(3))

    def forward(self, x):
        h = self.down(torch.nn.functional.gelu(self.up(x))) + x
        q = self.q(h).reshape(2, 8, 4, 8).transpose(1, 2)
        return h, torch.nn.functional.scaled_dot_product_attention(q, q, q)


@pytest.mark.parametrize("target,wrapper_file", [("triton", "06-wrapper.py"),
                                                 ("cpu", "05-wrapper.py")])
def test_float32_biases_go_to_the_library_only_where_no_kernel_reads_the_sum(
        target, wrapper_file, tmp_path, monkeypatch):
    """float32 (dyno-row-bias-into-matmuls, on both targets): the kernels that compute
    the GELU and the residual add add their layers' biases (plain `_mm`: cuBLAS's float32
    bias epilogue ran slower; MKL's addmm copies the bias into its output first); the
    projection that only attention reads is `_addmm`, its bias added by the library."""
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = _LinearReaders().eval()
    x = torch.randn(2, 8, 32)
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="mlir", options={"target": target})(x)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]
    (wrapper,) = tmp_path.glob(f"graph_*/{wrapper_file}")
    source = wrapper.read_text()
    assert source.count("_mm(") == 2 and source.count("_addmm(") == 1, source


class _Classifier(torch.nn.Module):
    """A classifier head: the logits of its last linear layer are the graph's output."""

    def __init__(self):
        super().__init__()
        self.hidden, self.head = torch.nn.Linear(32, 64), torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.head(torch.relu(self.hidden(x)))


def test_cpu_float32_logits_get_their_bias_from_addmm(tmp_path, monkeypatch):
    """CPU, float32: the head's bias, which no kernel would otherwise read, is added by
    addmm (one call: no bias kernel, no fresh output tensor for it); the hidden layer's
    bias stays in the ReLU's kernel."""
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = _Classifier().eval()
    x = torch.randn(8, 32)
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="mlir", options={"target": "cpu"})(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]
    (wrapper,) = tmp_path.glob("graph_*/05-wrapper.py")
    source = wrapper.read_text()
    assert source.count("_addmm(") == 1 and source.count("_mm(") == 1, source
    assert source.count("_kernels[") == 1, source  # the hidden layer's bias + ReLU


class _Projections(torch.nn.Module):
    """Attention heads of a linear layer's output (a reshape and a permute), and a GELU
    MLP whose output is reshaped: on the CPU target each bf16 linear layer is a oneDNN
    linear with its bias, whose result is new and dense."""

    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(32, 32)
        self.up = torch.nn.Linear(32, 64)

    def forward(self, x):
        heads = self.q(x).reshape(2, 8, 4, 8).permute(0, 2, 1, 3)
        scores = torch.matmul(heads, heads.transpose(-1, -2)).softmax(-1)
        mlp = torch.nn.functional.gelu(self.up(x)).reshape(2, 8, 8, 8).permute(0, 2, 1, 3)
        return torch.matmul(scores, heads), mlp


def test_views_of_a_linear_layers_result_are_made_in_one_call(tmp_path, monkeypatch):
    """A oneDNN linear's result (`_linear_weight`, `_linear`) is dense with a static
    layout: its reshape and permute are one `_view`, not two Python calls through the
    dispatcher (Swin bf16 made 55 such calls per forward)."""
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = _Projections().eval().to(torch.bfloat16)
    x = torch.randn(16, 32).to(torch.bfloat16)
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="mlir", options={"target": "cpu"})(x)
    torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]
    (wrapper,) = tmp_path.glob("graph_*/05-wrapper.py")
    source = wrapper.read_text()
    assert "_linear" in source, source
    assert ".reshape(" not in source and ".permute(" not in source, source


@pytest.mark.parametrize("channels_last", [True, False])
@pytest.mark.parametrize("onednn", [True, False])
def test_a_cpu_convolution_returns_the_layout_it_was_asked_for(channels_last, onednn):
    """The CPU wrapper views a convolution's result statically (channels-last, or
    contiguous), so conv2d returns that layout whatever computed it: oneDNN, or PyTorch's
    own kernel when oneDNN is disabled, and for an input of the other layout."""
    from dyno.targets.host_runtime import conv2d

    torch.manual_seed(0)
    weight, bias = torch.randn(6, 4, 3, 3), torch.randn(6)
    for x in (torch.randn(2, 4, 5, 5),
              torch.randn(2, 4, 5, 5).contiguous(memory_format=torch.channels_last)):
        with torch.backends.mkldnn.flags(enabled=onednn):
            got = conv2d(x, weight, bias, [1, 1], [1, 1], [1, 1], 1,
                         channels_last=channels_last)
        layout = torch.channels_last if channels_last else torch.contiguous_format
        assert got.is_contiguous(memory_format=layout), got.stride()
        torch.testing.assert_close(got, torch.conv2d(x, weight, bias, 1, 1),
                                   rtol=1e-4, atol=1e-4)


class _ConvBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(8)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x))) * 2.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_kernels_read_a_convolution_result_through_a_static_view(dtype, tmp_path,
                                                                monkeypatch):
    """The kernel after a CPU convolution reads its result through one `_view` (NHWC
    where the graph runs channels-last), with no `.permute` or `.contiguous()` per call;
    and the compiled graph stays right where the convolution is computed otherwise at
    run time (oneDNN disabled: PyTorch's kernel, which conv2d's result is copied from;
    the packed filter is not used then)."""
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = _ConvBlock().eval().to(dtype)
    model.norm.running_mean.uniform_(-1, 1)
    model.norm.running_var.uniform_(0.5, 2)
    x = torch.randn(2, 4, 6, 6).to(dtype)
    compiled = torch.compile(model, backend="mlir", options={"target": "cpu"})
    tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-5
    with torch.no_grad():
        want = model(x)
        torch.testing.assert_close(compiled(x), want, rtol=tolerance, atol=tolerance)
        with torch.backends.mkldnn.flags(enabled=False):
            torch.testing.assert_close(compiled(x), want, rtol=tolerance, atol=tolerance)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]
    (wrapper,) = tmp_path.glob("graph_*/05-wrapper.py")
    source = wrapper.read_text()
    # (_packed.conv2d: its filter is a parameter of this inference graph.)
    convolution = next(line.split(" = ")[0].strip() for line in source.splitlines()
                       if "_conv2d(" in line or "_packed.conv2d(" in line)
    assert f"{convolution}.permute" not in source and \
        f"{convolution}.contiguous()" not in source, source
    if "channels_last=True" in source:
        assert f"_view({convolution}, " in source, source
