"""Small models end to end: an MLP and a transformer block with attention (the benchmark
suite's definitions, at test sizes)."""
import copy

import pytest
import torch

import dyno
from conftest import assert_compiled_matches

from models import MLP, TransformerBlock

# Every case runs on the CPU target and on the Triton target (interpreted on CPU).
pytestmark = pytest.mark.usefixtures("each_target")


def test_mlp():
    model = MLP(inputs=64, hidden=128, classes=10).eval()
    assert_compiled_matches(model, torch.randn(32, 64), rtol=1e-4, atol=1e-4, extern_calls=3)


def test_transformer_block():
    # 4 linear layers and 2 batched matmuls (scores, attention @ v) are library calls.
    model = TransformerBlock(dim=64, heads=4, causal=True).eval()
    assert_compiled_matches(model, torch.randn(2, 16, 64), rtol=1e-4, atol=1e-4,
                            extern_calls=6)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_mlp_and_transformer_block_in_low_precision(dtype):
    """bf16/fp16 parameters and inputs: kernels compute in float32 and round at stores,
    matmuls are library calls in the low precision (the linear layers' biases inside
    addmm), and the results are no less accurate than eager against float64."""
    def check(model, x, extern_calls):
        model.to(dtype)
        low = x.to(dtype)
        # The same (rounded) weights and inputs, computed in float64.
        reference = copy.deepcopy(model).double()(low.double())
        tolerance = 2e-2 if dtype == torch.bfloat16 else 2e-3
        got = assert_compiled_matches(model, low, rtol=tolerance, atol=tolerance,
                                      extern_calls=extern_calls)
        with torch.no_grad():
            eager = model(low)
        error = lambda t: ((t.double() - reference).norm() / reference.norm()).item()
        assert error(got) <= 1.25 * error(eager), (error(got), error(eager))

    with torch.no_grad():
        check(MLP(inputs=64, hidden=128, classes=10).eval(), torch.randn(32, 64), 3)
        torch._dynamo.reset()
        dyno.reset_stats()
        check(TransformerBlock(dim=64, heads=4, causal=True).eval(), torch.randn(2, 16, 64), 6)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_small_cnn_in_low_precision(dtype):
    """A bf16/fp16 CNN: convolutions and the linear layer are library calls in the low
    precision (they were direct-loop kernels: 25x slower than eager on an H100), batch
    norm and ReLU run in float32 between them, and max pooling is exact (in bf16 it
    read every window as -inf under Triton's interpreter, which compares bf16 blocks by
    their bits)."""
    from models import SmallCNN

    model = SmallCNN().eval().to(dtype)
    x = torch.randn(4, 3, 16, 16).to(dtype)
    tolerance = 2e-2 if dtype == torch.bfloat16 else 2e-3
    with torch.no_grad():
        assert_compiled_matches(model, x, rtol=tolerance, atol=tolerance, extern_calls=3)
        torch._dynamo.reset()
        dyno.reset_stats()
        pool = lambda t: torch.nn.functional.max_pool2d(torch.relu(t), 3, 2, 1)
        assert_compiled_matches(pool, torch.randn(2, 4, 8, 8).to(dtype), rtol=0, atol=0)


class ResidualConvNet(torch.nn.Module):
    """Convolutions with batch norm, ReLU, a residual add and pooling between them (the
    max pool is ResNet's stem's: 3x3, stride 2, padded with -inf, which the CPU kernel
    computes channels-last through the pad and its window slices)."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.conv3 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        skip = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(skip)) + skip)
        y = torch.relu(self.conv3(torch.nn.functional.max_pool2d(y, 3, 2, 1)))
        return self.head(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1))


def copies_in_a_call(model, x, options, training=False):
    """The shapes of the 4-d tensors ATen copies (`aten::copy_`) in one call of `model`
    compiled for the CPU target with `options`, after a first call; `training`: with
    autograd on (AOTAutograd's forward graph, whose parameters change every step),
    else an inference graph."""
    compiled = torch.compile(model, backend="mlir", options={"target": "cpu", **options})
    with torch.set_grad_enabled(training):
        compiled(x)
        with torch.profiler.profile(record_shapes=True) as profile:
            compiled(x)
    return [event.input_shapes[0] for event in profile.events()
            if event.name == "aten::copy_" and len(event.input_shapes[0]) == 4]


@pytest.mark.parametrize("dtype,mode", [
    (torch.bfloat16, "inference"), (torch.float16, "inference"), (torch.float32, "inference"),
    (torch.bfloat16, "frozen"), (torch.float32, "frozen"),
    (torch.bfloat16, "training"), (torch.float32, "training")])
def test_kernels_around_convolutions_use_channels_last(dtype, mode):
    """On the CPU, oneDNN runs convolutions on channels-last tensors where it computes
    the dtype and their filters are parameters of an inference graph (kept packed,
    host_runtime.PackedWeights.conv2d, which suits either layout), and bf16/f16 ones
    wherever it computes them (dyno-channels-last-convolutions): the kernels between
    them read the convolutions' results and write their inputs in that order, and a
    kernel copies the graph input channels-last, so that ATen copies no activation (there
    were two copies per convolution: 6 here) and no filter (its strided copies took
    1.6x-2x as long). In a training graph (autograd on), whose filters change every
    step, kernels of Dyno's copy the filters channels-last too (copy-convolution-
    operands); f32 runs channels-last there where the copied filters are small against
    the outputs. Elsewhere (f16 without AVX-512 FP16, bf16 on AVX2 alone) they run NCHW,
    and a call copies neither activations nor filters. The results match eager and are
    no less accurate against float64. The Triton target keeps NCHW and must match
    too."""
    from conftest import TARGET
    from dyno.targets import host_runtime

    torch.manual_seed(0)
    model = ResidualConvNet().eval()
    for bn in (model.bn1, model.bn2):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 1.5)
    model.to(dtype)
    x = torch.randn(2, 3, 16, 16).to(dtype)
    reference = copy.deepcopy(model).double()(x.double())
    tolerance = {torch.bfloat16: 2e-2, torch.float16: 2e-3, torch.float32: 1e-4}[dtype]
    options = {"freezing": mode == "frozen"}
    got = assert_compiled_matches(model, x, rtol=tolerance, atol=tolerance, extern_calls=4,
                                  options=options)
    with torch.no_grad():
        eager = model(x)
    error = lambda t: ((t.double() - reference).norm() / reference.norm()).item()
    # Within a rounding of eager's error: at float32, both are about one unit roundoff,
    # where summation orders (oneDNN's kernels differ by CPU) decide the last bit.
    roundoff = torch.finfo(dtype).eps / 2
    assert error(got) <= 1.25 * error(eager) + roundoff, (error(got), error(eager))
    if TARGET["name"] != "cpu":
        return
    copied = copies_in_a_call(model, x, options, training=mode == "training")
    # (Where oneDNN does not compute the dtype, f16 without AVX-512 FP16 and bf16 on
    # AVX2 alone, PyTorch's own kernels run and copy as they do in eager.) Its copied
    # filters in training: 1944 elements against 8704 of outputs (f32 channels-last).
    if host_runtime.onednn_computes(dtype) or host_runtime.convolves_channels_last(
            dtype, frozen_filters=mode != "training", filter_share=1944 / 8704):
        # (A training graph copies activations it saves for the backward, batch 2: not
        # asked here.)
        assert [shape for shape in copied if mode != "training" or shape[0] != 2] == [], \
            copied


class _PooledConvNet(torch.nn.Module):
    """A ResNet stem's max pool (3x3, stride 2, padded) and a 2x2 one, each after a
    convolution, batch norm or bias, and ReLU."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(16)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv1(x))), 3, 2, 1)
        return torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_channels_last_pooling_windows_read_the_batch_norms_input(dtype, tmp_path,
                                                                  monkeypatch):
    """CPU, channels-last: each max pool's taps compute the batch norm (or bias) and
    ReLU from the convolution's result (dyno-window-taps-as-reads): no kernel allocates
    a buffer for the normalized image or its padded copy (before: two per pool, 128 KiB
    and more here). A NaN at the image's corner reaches the pooled values as in eager,
    and the padding's -inf never wins over a real value (ReLU's zeros at the border)."""
    from conftest import TARGET

    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = _PooledConvNet().eval()
    model.bn.running_mean.uniform_(-0.5, 0.5)
    model.bn.running_var.uniform_(0.5, 1.5)
    model.to(dtype)
    x = torch.randn(2, 3, 32, 32).to(dtype)
    x[0, :, 0, 0] = float("nan")  # (not inf: oneDNN's channels-last bf16 convolution,
    # in eager too, turns an infinite input into NaN at outputs that do not read it)
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="mlir")(x)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]
    assert want.isnan().any()  # the NaN reached the output, in eager
    tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(got, want, rtol=tolerance, atol=tolerance, equal_nan=True)
    if TARGET["name"] != "cpu":
        return
    lowered = "".join(path.read_text() for path in tmp_path.glob("graph_*/04-llvm.mlir"))
    assert "llvm.call @malloc" not in lowered


def test_float32_convolution_layout_weighs_the_copied_filters():
    """cpu.copied_filter_share on ATen graphs: a filter with more than one input channel
    and pixel is copied per call on the channels-last path (the 1x1 and the depthwise
    filter are channels-last as they are), weighed against all convolutions' outputs;
    symbolic sizes give None (no size is read). host_runtime.convolves_channels_last
    takes f32 channels-last up to F32_CHANNELS_LAST_MAX_FILTER_SHARE, and not where the
    share is unknown (unless filters are frozen or a convolution is depthwise)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from dyno.targets import cpu, host_runtime

    def net(x, w3, w1, dw):
        y = torch.conv2d(x, w3, padding=1)  # filter 8x4x3x3 copied; output 1x8x6x6
        y = torch.conv2d(y, w1)  # 1x1: not copied
        return torch.conv2d(y, dw, padding=1, groups=8)  # depthwise: not copied

    inputs = (torch.randn(1, 4, 6, 6), torch.randn(8, 4, 3, 3), torch.randn(8, 8, 1, 1),
              torch.randn(8, 1, 3, 3))
    assert cpu.copied_filter_share(make_fx(net, tracing_mode="fake")(*inputs)) == 288 / 864
    assert cpu.copied_filter_share(make_fx(net, tracing_mode="symbolic")(*inputs)) is None
    rule, limit = host_runtime.convolves_channels_last, \
        host_runtime.F32_CHANNELS_LAST_MAX_FILTER_SHARE
    onednn = torch.backends.mkldnn.is_available()
    assert rule(torch.float32, False, filter_share=limit) == onednn
    assert not rule(torch.float32, False, filter_share=limit * 1.01)
    assert not rule(torch.float32, False)
    assert rule(torch.float32, False, depthwise=True, filter_share=2 * limit) == onednn
    assert rule(torch.float32, True) == onednn


def test_channels_last_model_and_input_are_not_copied_twice():
    """A model and input already channels-last (`model.to(memory_format=
    torch.channels_last)`), in bf16, which the CPU runs channels-last: its filters and
    input are not copied by kernels (the wrapper would first copy them back to NCHW), and
    a call copies no activation nor filter at all (the runtime passes them as they are).
    Its result matches eager's, as does the NCHW model's compiled in the same process."""
    from conftest import TARGET
    from dyno.targets import host_runtime

    torch.manual_seed(0)
    model = ResidualConvNet().eval().to(torch.bfloat16)
    x = torch.randn(2, 3, 16, 16).to(torch.bfloat16)
    assert_compiled_matches(model, x, rtol=2e-2, atol=2e-2, extern_calls=4)
    model = model.to(memory_format=torch.channels_last)
    x = x.contiguous(memory_format=torch.channels_last)
    torch._dynamo.reset()
    dyno.reset_stats()
    assert_compiled_matches(model, x, rtol=2e-2, atol=2e-2, extern_calls=4)
    if TARGET["name"] != "cpu" or not host_runtime.convolves_channels_last(
            torch.bfloat16, frozen_filters=False):
        return  # (NCHW there: the runtime copies the channels-last input, as eager)
    copied = copies_in_a_call(model, x, {})
    assert copied == [], copied


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_gelu_after_a_low_precision_linear_is_its_epilogue(dtype):
    """A transformer's feed-forward block in bf16/fp16. On the CPU target, in bf16, the
    GELU after the first linear layer becomes the library call's epilogue (dyno-fuse-
    matmul-epilogues: no kernel is left), applied to the f32 accumulator before it is
    rounded, so the result is no less accurate than eager's against float64; a NaN still
    reaches the output as in eager, and so do products beyond the dtype's range. On the
    Triton target, and in f16, the GELU stays a kernel."""
    from conftest import TARGET

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(),
                                torch.nn.Linear(256, 64)).eval().to(dtype)
    x = torch.randn(32, 64).to(dtype)
    tolerance = 2e-2 if dtype == torch.bfloat16 else 2e-3
    got = assert_compiled_matches(model, x, rtol=tolerance, atol=tolerance, extern_calls=2,
                                  min_kernels=0)
    # (f16 keeps its GELU kernel: an f16 product beyond its range is -inf in eager, whose
    # GELU is NaN, where the f32 accumulator's GELU is finite.)
    fused = TARGET["name"] == "cpu" and dtype == torch.bfloat16
    assert dyno.stats()["kernels"] == (0 if fused else 1), dyno.stats()
    with torch.no_grad():
        reference = copy.deepcopy(model).double()(x.double())
        eager = model(x)
    error = lambda t: ((t.double() - reference).norm() / reference.norm()).item()
    # Within a rounding of eager's error: at float32, both are about one unit roundoff,
    # where summation orders (oneDNN's kernels differ by CPU) decide the last bit.
    roundoff = torch.finfo(dtype).eps / 2
    assert error(got) <= 1.25 * error(eager) + roundoff, (error(got), error(eager))

    # A NaN in one row of the input: that row is all NaN, the others are what eager gives.
    x[3, 5] = float("nan")
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="mlir", options={"target": TARGET["name"]})
    with torch.no_grad():
        actual, expected = compiled(x), model(x)
    assert actual[3].isnan().all() and not actual[torch.arange(32) != 3].isnan().any()
    torch.testing.assert_close(actual, expected, rtol=tolerance, atol=tolerance,
                               equal_nan=True)

    # Products beyond the dtype's range (f16's 65504): what eager gives, -inf -> NaN.
    big = torch.full((2, 64), 300.0).to(dtype)
    with torch.no_grad():
        model[0].weight.fill_(-300.0 if dtype == torch.float16 else -1e30)
        actual, expected = compiled(big), model(big)
    torch.testing.assert_close(actual, expected, rtol=tolerance, atol=tolerance,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_linear_calls_on_empty_operands(dtype):
    """The wrapper's linear layer (host_runtime.linear) on operands with no elements: oneDNN
    has no linear with nothing to multiply (K == 0 or N == 0) and raised; such calls are
    PyTorch's addmm (and its GELU), whose results eager gives; so are products of at most
    16**3 multiplications (oneDNN's primitive costs more than they do), and the ones just
    above go to oneDNN."""
    from dyno.targets.host_runtime import linear

    for rows, inputs, outputs in [(4, 0, 3), (4, 3, 0), (0, 3, 4), (2, 3, 4), (16, 16, 16),
                                  (17, 16, 16)]:
        a = torch.randn(rows, inputs).to(dtype)
        b = torch.randn(inputs, outputs).to(dtype)
        bias = torch.randn(outputs).to(dtype)
        expected = torch.addmm(bias, a, b)
        tolerance = 2e-2 if dtype == torch.bfloat16 else 2e-3
        torch.testing.assert_close(linear(a, b, bias), expected, rtol=tolerance,
                                   atol=tolerance)
        torch.testing.assert_close(linear(a, b, bias, "gelu"),
                                   torch.nn.functional.gelu(expected), rtol=tolerance,
                                   atol=tolerance)
        torch.testing.assert_close(linear(a, b, None), torch.mm(a, b), rtol=tolerance,
                                   atol=tolerance)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_linear_reads_a_k_by_n_weight_as_it_is(dtype):
    """GPT-2's Conv1D stores its weight [k, n] (`x @ W + b`). The wrapper's linear layer
    (host_runtime.linear) gave oneDNN's linear a dense copy of the [n, k] transpose on
    every call (180 us of GPT-2's 9.8 ms in bf16 on 2 threads); such a weight now goes
    to addmm, read as it is, with no copy. A dense [n, k] weight (nn.Linear) still calls
    oneDNN's linear where this CPU's oneDNN computes the dtype."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from dyno.targets.host_runtime import linear, onednn_computes

    class CalledOps(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    torch.manual_seed(0)
    a, bias = torch.randn(64, 256).to(dtype), torch.randn(512).to(dtype)
    stored_k_by_n = torch.randn(256, 512).to(dtype)
    stored_n_by_k = torch.randn(512, 256).to(dtype)
    tolerance = 2e-2 if dtype == torch.bfloat16 else 2e-3
    for b, dense_weight in [(stored_k_by_n, False), (stored_n_by_k.t(), True)]:
        for epilogue in (None, "gelu"):
            with CalledOps() as ops:
                got = linear(a, b, bias, epilogue)
            assert not any(word in name for name in ops.names
                           for word in ("clone", "copy", "contiguous")), ops.names
            onednn = dense_weight and onednn_computes(dtype)
            assert any("_linear_pointwise" in name for name in ops.names) == onednn, ops.names
            expected = torch.addmm(bias.float(), a.float(), b.float())
            if epilogue:
                expected = torch.nn.functional.gelu(expected)
            torch.testing.assert_close(got.float(), expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rotary_embedding_reads_its_halves_in_place(dtype):
    """Llama's rotary embedding: q * cos + rotate_half(q) * sin, with rotate_half the
    concatenation of the negated second half and the first. On the CPU target
    dyno-split-at-concatenations splits the kernel where the halves meet, and each part
    reads the transposed projection directly (no copy, no concatenation); the values are
    eager's."""
    def rotary(x, cos, sin):
        q = x.view(2, 16, 4, 8).transpose(1, 2)
        half = q.shape[-1] // 2
        rotated = torch.cat((-q[..., half:], q[..., :half]), dim=-1)
        return q * cos + rotated * sin

    torch.manual_seed(0)
    x = torch.randn(32, 32).to(dtype)
    angles = torch.arange(16.0)[:, None] * torch.arange(1.0, 9.0)[None, :] / 8
    cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)
    tolerance = 1e-5 if dtype == torch.float32 else 1e-2
    assert_compiled_matches(rotary, x, cos, sin, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_freezing_packs_linear_weights_once_and_again_after_a_write(dtype, monkeypatch):
    """options={"freezing": True}: on the CPU target an inference graph's linear layers
    run on weights packed once for oneDNN (host_runtime.PackedWeights), including the
    GELU epilogue, and agree with eager; a weight written in place through the
    parameter (its version counter moves) is packed again, and the results follow it.
    Graphs that train, and the Triton target, pack nothing."""
    from conftest import TARGET

    from dyno.targets import host_runtime

    packed = []
    pack = host_runtime.pack_linear_weight
    monkeypatch.setattr(host_runtime, "pack_linear_weight",
                        lambda weight, rows: packed.append(weight.shape) or pack(weight, rows))
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                torch.nn.Linear(128, 128, bias=False), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10)).eval().to(dtype)
    tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-4
    x = torch.randn(32, 64).to(dtype)
    compiled = torch.compile(model, backend="mlir",
                             options={"target": TARGET["name"], "freezing": True})
    # Packed where oneDNN computes the dtype (bf16: not on AVX2 alone).
    cpu = TARGET["name"] == "cpu" and host_runtime.PackedWeights._packs(dtype)
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(compiled(x), model(x), rtol=tolerance, atol=tolerance)
        assert len(packed) == (3 if cpu else 0), packed
        model[2].weight.mul_(-0.5)
        torch.testing.assert_close(compiled(x), model(x), rtol=tolerance, atol=tolerance)
        assert len(packed) == (4 if cpu else 0), packed
        assert packed[-1:] == ([model[2].weight.shape] if cpu else [])
        # Another batch size (a recompile): the same kind of graph, its own packs.
        torch.testing.assert_close(compiled(x[:5]), model(x[:5]), rtol=tolerance,
                                   atol=tolerance)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0 and stats["extern_calls"] >= 3, stats

    # One square weight read both ways (x @ W.t() and x @ W): two packed forms.
    class BothWays(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(64, 64).to(dtype))

        def forward(self, x):
            return torch.nn.functional.linear(x, self.weight) + x @ self.weight

    packed.clear()
    both = BothWays().eval()
    compiled = torch.compile(both, backend="mlir",
                             options={"target": TARGET["name"], "freezing": True})
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(compiled(x), both(x), rtol=tolerance,
                                       atol=tolerance * 8)
    assert len(packed) == (2 if cpu else 0), packed

    # Training: the forward graph's parameters change every step; nothing is packed.
    packed.clear()
    torch._dynamo.reset()
    trained = torch.compile(model, backend="mlir",
                            options={"target": TARGET["name"], "freezing": True})
    trained(x).float().sum().backward()
    assert packed == [] and model[0].weight.grad is not None


def test_freezing_option_is_checked():
    with pytest.raises(Exception, match="freezing must be True or False"):
        torch.compile(torch.nn.Linear(4, 4), backend="mlir",
                      options={"freezing": "yes"})(torch.randn(2, 4))


def test_repeated_layers_compile_each_kernel_once():
    """A model's repeated layers make the same kernels under other names; each is
    compiled once (dyno-deduplicate-kernels), on both targets: four layers compile as
    many kernels as two, and the results are eager's."""
    def layers(n):
        torch.manual_seed(0)
        return torch.nn.Sequential(*[torch.nn.Sequential(
            torch.nn.LayerNorm(32), torch.nn.Linear(32, 32), torch.nn.GELU())
            for _ in range(n)]).eval()

    x = torch.randn(8, 32)
    kernels = {}
    for n in (2, 4):
        torch._dynamo.reset()
        dyno.reset_stats()
        assert_compiled_matches(layers(n), x, rtol=1e-4, atol=1e-4, extern_calls=n)
        kernels[n] = dyno.stats()["kernels"]
    assert kernels[4] == kernels[2] and kernels[2] >= 1, kernels


class LayersBetweenGraphBreaks(torch.nn.Module):
    """Identical layers with a graph break after each: one graph per layer, the first
    and the last with work of their own, so the graphs differ but share the layers'
    kernels."""

    def __init__(self, width=40):  # a width no other test uses: no kernels from them
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Sequential(
            torch.nn.LayerNorm(width), torch.nn.Linear(width, width), torch.nn.GELU())
            for _ in range(3))

    def forward(self, x):
        # Unrolled: Dynamo runs a frame that breaks inside a loop eagerly, whole.
        x = self.layers[0](x * 2)
        torch._dynamo.graph_break()
        x = self.layers[1](x)
        torch._dynamo.graph_break()
        x = self.layers[2](x)
        torch._dynamo.graph_break()
        return x.tanh()


def test_kernels_repeated_across_graphs_are_compiled_once():
    """Kernels equal up to their names in different graphs of one process are compiled
    once (the CPU's units, Triton's shared launchers): the later layers' graphs take
    every kernel from the first's, and the results are eager's."""
    torch.manual_seed(0)
    model = LayersBetweenGraphBreaks().eval()
    x = torch.randn(8, 40)
    assert_compiled_matches(model, x, rtol=1e-4, atol=1e-4, extern_calls=3)
    stats = dyno.stats()
    assert stats["compiled_graphs"] == 4, stats
    # Each of the two later layers' graphs makes the first layer's kernels again.
    assert stats.get("shared_kernels", 0) >= 2, stats


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_parameter_filters_stay_packed_and_every_write_is_seen(dtype, monkeypatch):
    """Without `freezing`, an inference graph's convolution filters that are parameters
    are packed once for oneDNN (host_runtime.PackedWeights.conv2d, checked: the filter's
    bytes against a snapshot taken when packed, on every call) and packed again after
    each write however it is made: through `.data` (which moves no version counter: a
    version check alone would have run the stale filter), in place through autograd's
    view, one element of the other filter, and a new tensor put in `.data`. The network
    agrees with eager after each. The Triton target packs nothing."""
    from conftest import TARGET
    from dyno.targets import host_runtime
    from models import SmallCNN

    packed = []
    pack = host_runtime.pack_convolution_weight
    monkeypatch.setattr(host_runtime, "pack_convolution_weight",
                        lambda weight, *rest: packed.append(weight.shape) or
                        pack(weight, *rest))
    torch.manual_seed(0)
    model = SmallCNN().eval().to(dtype)
    x = torch.randn(2, 3, 16, 16).to(dtype)
    tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-4
    compiled = torch.compile(model, backend="mlir", options={"target": TARGET["name"]})
    cpu = TARGET["name"] == "cpu" and host_runtime.PackedWeights._packs(dtype)
    first, second = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]

    def agrees(packs):
        torch.testing.assert_close(compiled(x), model(x), rtol=tolerance, atol=tolerance)
        assert len(packed) == (packs if cpu else 0), packed

    with torch.no_grad():
        agrees(2)
        agrees(2)
        version = first.weight._version
        first.weight.data.mul_(-1)
        assert first.weight._version == version  # unseen by autograd
        agrees(3)
        first.weight.add_(0.5)
        agrees(4)
        second.weight.data[3, 2, 1, 0] += 1.0
        agrees(5)
        first.weight.data = torch.randn_like(first.weight)
        agrees(6)
        agrees(6)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()["fallback_reasons"]


def test_packed_filters_compare_bits():
    """host_runtime.same_bytes, the check a packed filter passes on every call: bit for
    bit, so -0.0 differs from 0.0 (a convolution's zero results keep eager's signs) and
    a NaN equals the same NaN; channels-last filters are compared in their own layout."""
    from dyno.targets import host_runtime

    zero, negative_zero = torch.zeros(4, 2, 3, 3), torch.zeros(4, 2, 3, 3)
    negative_zero[1, 1, 2, 2] = -0.0
    assert not host_runtime.same_bytes(zero, negative_zero)
    nan = torch.randn(4, 2, 3, 3)
    nan[0, 0, 0, 0] = float("nan")
    assert host_runtime.same_bytes(nan, nan.clone())
    channels_last = torch.randn(4, 2, 3, 3).contiguous(memory_format=torch.channels_last)
    snapshot = channels_last.clone()
    assert host_runtime.same_bytes(channels_last, snapshot)
    channels_last[3, 1, 2, 2] += 1.0
    assert not host_runtime.same_bytes(channels_last, snapshot)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_freezing_packs_convolution_filters(dtype, monkeypatch):
    """options={"freezing": True} on the CPU target: a convolution's frozen filter is
    packed once for oneDNN (host_runtime.PackedWeights.conv2d) and the network agrees
    with eager, before and after a filter is written in place; the Triton target packs
    nothing."""
    from conftest import TARGET
    from dyno.targets import host_runtime
    from models import SmallCNN

    packed = []
    pack = host_runtime.pack_convolution_weight
    monkeypatch.setattr(host_runtime, "pack_convolution_weight",
                        lambda weight, *rest: packed.append(weight.shape) or
                        pack(weight, *rest))
    model = SmallCNN().eval().to(dtype)
    x = torch.randn(2, 3, 16, 16).to(dtype)
    tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-4
    compiled = torch.compile(model, backend="mlir",
                             options={"target": TARGET["name"], "freezing": True})
    # Packed where oneDNN computes the dtype (bf16: not on AVX2 alone).
    cpu = TARGET["name"] == "cpu" and host_runtime.PackedWeights._packs(dtype)
    convolutions = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(compiled(x), model(x), rtol=tolerance, atol=tolerance)
        assert len(packed) == (len(convolutions) if cpu else 0), packed
        convolutions[0].weight.mul_(-1)
        torch.testing.assert_close(compiled(x), model(x), rtol=tolerance, atol=tolerance)
        assert len(packed) == (len(convolutions) + 1 if cpu else 0), packed
    assert dyno.stats()["fallback_graphs"] == 0
