"""The Triton target's own interfaces: target selection, debug dumps, per-op fallback,
block-size autotuning with its disk cache, and the ahead-of-time export that runs with
only torch and triton. Kernels run under Triton's interpreter on CPU tensors."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import dyno
from dyno.errors import DynoCompileError
from dyno.targets.triton import runtime as triton_runtime
from dyno.targets.triton.runtime import compile_check

from conftest import assert_compiled_matches

from models import TransformerBlock


def test_triton_target_is_chosen_and_reported():
    def fn(x):
        return torch.softmax(x * 3, -1)
    assert_compiled_matches(fn, torch.randn(9, 130), options={"target": "triton"})
    assert dyno.stats()["triton_graphs"] == 1
    assert dyno.stats().get("cpu_graphs", 0) == 0


@pytest.mark.parametrize("options, message", [
    ({"target": "gpu"}, "target must be one of ['auto', 'cpu', 'triton']"),
    ({"autotune": "yes"}, "autotune must be True or False"),
    ({"block_long_sums": 0}, "block_long_sums must be True or False"),
    ({"block": 4}, "unknown options ['block']"),
])
def test_bad_options_are_errors(options, message):
    with pytest.raises(Exception, match=message.replace("[", r"\[").replace("]", r"\]")):
        torch.compile(lambda x: x + 1, backend="mlir", options=options)(torch.randn(3))


def test_debug_dir_holds_every_triton_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    assert_compiled_matches(lambda x: (x.exp() + 1).sum(0), torch.randn(5, 7),
                            options={"target": "triton"})
    stages = sorted(os.listdir(next(tmp_path.iterdir())))
    for stage in ("02-linalg.mlir", "03-kernels.mlir", "04-triton.mlir", "05-kernels.py",
                  "06-wrapper.py"):
        assert stage in stages, stages
    kernels = (next(tmp_path.iterdir()) / "05-kernels.py").read_text()
    assert "@triton.jit" in kernels and "KERNELS = {" in kernels
    # The prelude is lib/Target/Triton/TritonPrelude.py's code (its docstring dropped),
    # embedded in dyno-translate at build time.
    prelude = (pathlib.Path(__file__).parents[1] / "lib" / "Target" / "Triton" /
               "TritonPrelude.py").read_text()
    code = prelude[prelude.index('"""\n', 3) + 4:]
    assert code.startswith("import triton") and code in kernels


@pytest.mark.long  # (105 s of Triton's interpreter on 2 cores, 2026-12-02)
def test_argmax_and_max_with_indices_compile():
    # Reductions that pick an element (PickReduction): whole rows in one block, and rows
    # longer than a block walked in a loop; with NaN (the first NaN wins), ties (the
    # first index wins), -0.0 and rows of -inf.
    def fn(x):
        values, indices = torch.max(x, -1)
        return x.argmax(-1), x.argmin(0), values, indices, torch.min(x, -1)[1], \
            x.exp().sum(-1)
    for columns in (33, 5000):
        x = torch.randn(8, columns)
        x[1, 3] = x[1, 7] = x[2, columns - 1] = float("nan")
        x[3, :] = 1.0
        x[4, 2] = x[4, columns - 2] = 9.0
        x[5, :] = -float("inf")
        x[6, :] = 0.0
        x[6, 4] = -0.0
        assert_compiled_matches(fn, x, options={"target": "triton"})


def test_integer_argmax_compiles():
    def fn(x):
        return x.argmax(1), *torch.max(x, 0), x.to(torch.int64).argmin(1)
    x = torch.randint(-5, 5, (6, 300), dtype=torch.int32)
    assert_compiled_matches(fn, x, options={"target": "triton"}, rtol=0, atol=0)


def test_unsigned_argmin_runs_eagerly_with_its_reason():
    # tl.reduce has no unsigned max/min: the pick is rejected with a reason, and the op
    # runs eagerly (per-op fallback) with eager's answer.
    def fn(x):
        return x.to(torch.uint8).argmin(1), x.sum(1)
    x = torch.randint(0, 200, (6, 300), dtype=torch.int32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = torch.compile(fn, backend="mlir", options={"target": "triton"})(x)
    for actual, expected in zip(got, fn(x)):
        assert torch.equal(actual, expected)
    assert dyno.stats()["fallback_ops"] == {"aten.argmin.default": 1}, dyno.stats()
    assert any("unsigned extremum" in str(w.message) for w in caught)


class _FakeKernel:
    """Stands in for a compiled Triton kernel: records the configurations launched."""

    def __init__(self):
        self.launched = []
        self.options = []  # Triton's compile options of each launch
        self.__name__ = "kernel_0"

    def __getitem__(self, grid):
        def launch(*tensors, XBLOCK, num_warps, **options):
            self.launched.append((grid, XBLOCK, num_warps))
            self.options.append(options)
        return launch


def test_autotuning_picks_the_fastest_config_and_caches_it(tmp_path, monkeypatch):
    import triton.testing

    monkeypatch.setenv("DYNO_CACHE_DIR", str(tmp_path))
    entry = {"args": ["float32"], "xnumel": 4096, "rnumel": 1,
             "configs": [{"XBLOCK": 1024, "num_warps": 4}, {"XBLOCK": 256, "num_warps": 1}]}
    timings = {1024: 2.0, 256: 1.0}  # ms per launch, by XBLOCK

    def fake_bench(fn, **kwargs):
        fn()
        return timings[kernel.launched[-1][1]]

    monkeypatch.setattr(triton.testing, "do_bench", fake_bench)
    kernel = _FakeKernel()
    launcher = triton_runtime.Launcher(kernel, entry, interpret=False, autotune=True,
                                       key="cachekey")
    launcher.fast = None  # the fake has no compiled-kernel launcher
    launcher(torch.empty(1))
    # Every launch compiles without Triton's integer overflow checks (which its debug
    # mode, kept for kernels that assert their indices, would turn on).
    assert kernel.options and all(o == {"sanitize_overflow": False} for o in kernel.options)
    assert kernel.launched[-1] == ((16,), 256, 1)  # the winner, with its grid
    cached = json.loads((tmp_path / "autotune" / "cachekey.json").read_text())
    assert cached["config"] == {"XBLOCK": 256, "num_warps": 1}

    # A new process reads the winner from disk instead of timing again.
    timings.clear()
    again = _FakeKernel()
    launcher = triton_runtime.Launcher(again, entry, interpret=False, autotune=True,
                                       key="cachekey")
    launcher.fast = None
    launcher(torch.empty(1))
    assert again.launched == [((16,), 256, 1)]


def test_export_runs_with_only_torch_and_triton(tmp_path):
    torch.manual_seed(0)
    model = TransformerBlock(dim=64, heads=4).eval()
    x = torch.randn(2, 16, 64)
    directory = dyno.export_triton(model, (x,), str(tmp_path / "program"))
    assert sorted(os.listdir(directory)) == [
        "host_runtime.py", "kernels.py", "program.json", "triton_runtime", "weights.pt",
        "wrapper.py"]
    torch.save({"x": x, "want": model(x).detach()}, tmp_path / "case.pt")
    # A fresh interpreter in which Dyno, MLIR and torch-mlir cannot be imported.
    script = textwrap.dedent(f"""
        import importlib.abc, sys
        class Forbid(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in ("dyno", "mlir", "torch_mlir"):
                    raise ImportError("not on the GPU server: " + name)
        sys.meta_path.insert(0, Forbid())
        import torch
        sys.path.insert(0, {directory!r})
        import triton_runtime
        program = triton_runtime.load({directory!r}, device="cpu")
        case = torch.load({str(tmp_path / "case.pt")!r})
        got = program(case["x"])
        torch.testing.assert_close(got, case["want"], rtol=1e-4, atol=1e-4)
        print("ran", tuple(got.shape))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ran (2, 16, 64)" in result.stdout


def test_export_without_weights_binds_a_state_dict(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LayerNorm(32), torch.nn.GELU()).eval()
    x = torch.randn(4, 32)
    directory = dyno.export_triton(model, (x,), str(tmp_path / "p"), save_weights=False)
    assert "weights.pt" not in os.listdir(directory)
    program = triton_runtime.load(directory, device="cpu")
    with pytest.raises(KeyError, match="bind"):
        program(x)
    with torch.no_grad():
        model[0].weight.uniform_(0.5, 1.5)  # bound values are used, not export-time ones
    torch.testing.assert_close(program.bind(model.state_dict())(x), model(x).detach(),
                               rtol=1e-5, atol=1e-5)


class _RelativePositionBias(torch.nn.Module):
    """Swin's relative position bias: a table gathered at an index the model does not
    persist (a constant of the export, saved with the program)."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(7, 3))
        positions = torch.arange(4)
        self.register_buffer("index", (positions[:, None] - positions[None, :] + 3).flatten(),
                             persistent=False)

    def forward(self, x):
        return x + self.table[self.index].t()


def test_index_checks_in_kernels_hold_only_on_the_lanes_in_range(tmp_path, monkeypatch):
    """A gather's index check is a device assertion in the kernel that gathers
    (dyno-keep-assertions-in-kernels), asserted on the lanes inside the tensor only:
    lanes past its end load no index (zeros here), and `10 - idx` is 10 there, out of
    the table's range. 67 ids fill no block size exactly."""
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    table = torch.randn(10, 3)

    def gather(idx):
        return table[10 - idx] * 2

    compiled = torch.compile(gather, backend="mlir", options={"target": "triton"})
    idx = torch.arange(1, 11).repeat(7)[:67]
    torch.testing.assert_close(compiled(idx), gather(idx))
    stats = dyno.stats()
    assert stats["compiled_graphs"] == 1 and stats["runtime_fallbacks"] == 0, stats
    (kernels,) = tmp_path.glob("graph_*/0*-kernels.py")
    assert "tl.device_assert(" in kernels.read_text()
    # A bad id still fails the check, and the call runs eagerly (eager's IndexError).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(IndexError):
            compiled(torch.where(idx == 5, 21, idx))  # 10 - 21 = -11: out of range
    assert dyno.stats()["runtime_fallbacks"] == 1


@pytest.mark.parametrize("literal_elements", [1 << 16, 8])
def test_export_compiles_small_constants_in_as_literals(tmp_path, monkeypatch,
                                                         literal_elements):
    """An exported program's constants cannot change, so a small one is a literal the
    compiler knows: the gather at the constant index needs no bounds check at run time.
    A constant over the limit stays an input, read (and checked, by a device assertion in
    the gathering kernel) at run time."""
    import dyno.export

    monkeypatch.setattr(dyno.export, "LITERAL_CONSTANT_ELEMENTS", literal_elements)
    torch.manual_seed(0)
    model = _RelativePositionBias().eval()
    x = torch.randn(2, 3, 16)
    directory = dyno.export_triton(model, (x,), str(tmp_path / "p"))
    kinds = [entry["kind"] for entry in
             json.loads((pathlib.Path(directory) / "program.json").read_text())["inputs"]]
    wrapper = (pathlib.Path(directory) / "wrapper.py").read_text()
    kernels = (pathlib.Path(directory) / "kernels.py").read_text()
    literal = literal_elements >= 16
    assert kinds == (["parameter", "user_input"] if literal
                     else ["parameter", "constant", "user_input"])
    assert "_check_condition(" not in wrapper
    assert ("tl.device_assert(" in kernels) != literal
    program = triton_runtime.load(directory, device="cpu")
    torch.testing.assert_close(program(x), model(x).detach(), rtol=0, atol=0)


def test_export_keeps_its_bf16_convolution_filters_channels_last(tmp_path):
    """A filter only convolutions read is marked in program.json and laid out
    channels-last once by the program (a GPU convolution in bf16 copies an NCHW filter to
    channels-last on every call); a filter a kernel also reads is not, and a tensor bound
    as it is stays the caller's."""
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.first = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.second = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)

        def forward(self, x):
            y = torch.relu(self.first(x))
            return self.second(y) + self.second.weight.sum()  # the filter read by a kernel

    model = Net().to(torch.bfloat16).eval()
    x = torch.randn(2, 3, 8, 8, dtype=torch.bfloat16)
    directory = dyno.export_triton(model, (x,), str(tmp_path / "p"))
    layouts = {entry.get("name"): entry.get("layout") for entry in
               json.loads((pathlib.Path(directory) / "program.json").read_text())["inputs"]}
    assert layouts["first.weight"] == "channels_last"
    assert layouts["second.weight"] is None and layouts["first.bias"] is None
    program = triton_runtime.load(directory, device="cpu")
    assert program.bound["first.weight"].is_contiguous(memory_format=torch.channels_last)
    assert not program.bound["first.weight"].is_contiguous()
    torch.testing.assert_close(program(x), model(x).detach(), rtol=2e-2, atol=2e-2)
    state = model.state_dict()
    program.bind(state)
    assert program.bound["first.weight"] is state["first.weight"]
    torch.testing.assert_close(program(x), model(x).detach(), rtol=2e-2, atol=2e-2)


class _ConvolutionStack(torch.nn.Module):
    """`convolutions` 3x3 convolutions with ReLUs, then `tail` LayerNorm-and-GELU steps
    over the flattened result (a graph of few convolutions among many other ops)."""

    def __init__(self, convolutions, tail):
        super().__init__()
        self.convolutions = torch.nn.ModuleList(
            torch.nn.Conv2d(3 if i == 0 else 8, 8, 3, padding=1) for i in range(convolutions))
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(8 * 8 * 8) for _ in range(tail))

    def forward(self, x):
        for convolution in self.convolutions:
            x = torch.relu(convolution(x))
        x = x.flatten(1)
        for norm in self.norms:
            x = torch.nn.functional.gelu(norm(x)) + x
        return x


@pytest.mark.parametrize("convolutions, tail, channels_last", [(4, 0, True), (1, 40, False)])
def test_float32_convolutions_run_channels_last_in_graphs_of_many_convolutions(
        tmp_path, convolutions, tail, channels_last):
    """float32 GPU convolutions run channels-last (their filters kept so, the kernels
    around them in that order) where the graph is mostly convolutions, as Inductor's
    layout rule has it (ResNet-50: 53 cuDNN transposes fewer); a graph of one convolution
    among many ops (ViT's patch embedding) keeps NCHW, as eager, whose cuDNN algorithm
    channels-last would change (ViT's error against eager 2.7e-6 -> 2.6e-4 on an H200)."""
    torch.manual_seed(0)
    model = _ConvolutionStack(convolutions, tail).eval()
    x = torch.randn(2, 3, 8, 8)
    directory = dyno.export_triton(model, (x,), str(tmp_path / "p"))
    layouts = {entry.get("name"): entry.get("layout") for entry in
               json.loads((pathlib.Path(directory) / "program.json").read_text())["inputs"]}
    assert (layouts["convolutions.0.weight"] == "channels_last") == channels_last
    program = triton_runtime.load(directory, device="cpu")
    torch.testing.assert_close(program(x), model(x).detach(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("convolutions, tail, types",
                         [(4, 0, ["bf16", "f16", "f32"]), (1, 40, [])])
def test_a_lone_patch_convolution_runs_nchw_in_every_dtype(convolutions, tail, types):
    """bf16/f16 GPU convolutions run channels-last, but not a graph's lone convolution
    of an image's 3 channels among many other ops (Swin's and ViT's patch embedding):
    channels-last, cuDNN pads its channels in two kernels per call beside the image's
    copy; NCHW (as Inductor runs it) takes 2 kernels where that took 4 (Swin, H200)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from dyno.targets import triton as triton_target

    model = _ConvolutionStack(convolutions, tail).eval().to(torch.bfloat16)
    gm = make_fx(model)(torch.randn(2, 3, 8, 8, dtype=torch.bfloat16))
    assert triton_target.channels_last_types(gm) == types


@pytest.mark.parametrize("channels_last", [True, False])
def test_the_wrapper_names_each_convolutions_layout(tmp_path, monkeypatch, channels_last):
    """The Triton wrapper tells the runtime's convolution whether the compiler chose
    channels-last for it (its neighbouring kernels read and write that order); the
    runtime no longer guesses from the dtype. Either way the program matches eager."""
    from dyno.targets import triton as triton_target

    if not channels_last:
        monkeypatch.setattr(triton_target, "channels_last_types", lambda gm: [])
    torch.manual_seed(0)
    model = _ConvolutionStack(2, 0).eval().to(torch.bfloat16)
    x = torch.randn(2, 3, 8, 8, dtype=torch.bfloat16)
    directory = dyno.export_triton(model, (x,), str(tmp_path / "p"))
    wrapper = (pathlib.Path(directory) / "wrapper.py").read_text()
    assert wrapper.count(f"channels_last={channels_last})") == 2, wrapper
    program = triton_runtime.load(directory, device="cpu")
    torch.testing.assert_close(program(x), model(x).detach(), rtol=2e-2, atol=2e-2)


@pytest.mark.long  # (65 s on 2 cores, 2026-12-02)
def test_export_under_cuda_autocast_takes_cudas_casts(tmp_path):
    """CUDA autocast, not CPU autocast (whose lists differ): the linear runs in bf16,
    exp, softmax and layer norm in float32 on its result; traced without a GPU. The
    model's own autocast region (disabled around a second linear) nests as on the GPU."""
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(16, 32)
            self.norm = torch.nn.LayerNorm(32)

        def forward(self, x):
            y = self.norm(torch.softmax(torch.exp(self.linear(x) * 0.1), -1))
            with torch.autocast("cuda", enabled=False):
                return y, self.linear(x)

    torch.manual_seed(0)
    model, x = Model().eval(), torch.randn(4, 16)
    directory = dyno.export_triton(model, (x,), str(tmp_path / "p"), autocast=torch.bfloat16)
    with open(os.path.join(directory, "wrapper.py")) as file:
        wrapper = file.read()
    # Both linears are library addmm calls (the bf16 one with its bias rounded to bf16
    # by a kernel of its own, the float32 one with the bias as it is: cuBLAS adds it);
    # the product never computed in a kernel: gpu_zoo's GPT-2 took 87 ms instead of 0.3.
    assert wrapper.count("_addmm(") == 2 and wrapper.count("_mm(") == 0, wrapper
    program = triton_runtime.load(directory, device="cpu")
    got, linear = program(x)
    with torch.no_grad():
        low = torch.nn.functional.linear(x.bfloat16(), model.linear.weight.bfloat16(),
                                         model.linear.bias.bfloat16())
        # `low * 0.1` is a bf16 op whose result only autocast's cast to float32 reads,
        # inside one kernel: Dyno keeps it in float32 (loads widen, stores narrow, as
        # Inductor computes). Eager rounds it to bf16 first, which exp amplifies (3e-2).
        want = model.norm(torch.softmax(torch.exp(low.float() * 0.1), -1))
    assert got.dtype == torch.float32 and linear.dtype == torch.float32
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)  # float32 rounding
    torch.testing.assert_close(linear, model.linear(x).detach(), rtol=1e-5, atol=1e-5)
    # The program's casts are its own: an autocast region around the call changes nothing
    # (the float32 linear's library call is not recast).
    with torch.autocast("cpu", dtype=torch.bfloat16):
        again = program(x)
    assert torch.equal(again[0], got) and torch.equal(again[1], linear)
    with pytest.raises(DynoCompileError, match="float16 or torch.bfloat16"):
        dyno.export_triton(model, (x,), str(tmp_path / "q"), autocast=torch.float64)


def test_export_of_a_model_that_enters_cuda_autocast_itself(tmp_path):
    """A forward with its own `torch.autocast("cuda")` region: on CPU tensors the region
    would disable itself (a warning) and the export compute in float32; it is traced as
    on the GPU instead, with or without autocast=: bf16 inside the region, the exp after
    it on the region's bf16 result."""
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(16, 32)

        def forward(self, x):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                y = self.linear(x)
            return torch.exp(y * 0.1)

    torch.manual_seed(0)
    model, x = Model().eval(), torch.randn(4, 16)
    directory = dyno.export_triton(model, (x,), str(tmp_path / "p"))
    got = triton_runtime.load(directory, device="cpu")(x)
    with torch.no_grad():
        low = torch.nn.functional.linear(x.bfloat16(), model.linear.weight.bfloat16(),
                                         model.linear.bias.bfloat16())
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got, torch.exp(low * 0.1), rtol=0, atol=0)


@pytest.mark.usefixtures("each_target")
def test_float_to_bfloat16_rounds_to_nearest_even():
    # Regression (OpInfo sweep): Triton's interpreter truncated f32 -> bf16 casts.
    x = torch.randn(64, 33) * 100
    x[0, :4] = torch.tensor([float("nan"), float("inf"), -float("inf"), 3.4e38])
    got = assert_compiled_matches(lambda t: (t * 1.0).bfloat16(), x, rtol=0, atol=0)
    assert torch.equal(got[1:], (x * 1.0).bfloat16()[1:])


@pytest.mark.parametrize("name", ["erfc", "cumsum", "nanmean", "dropout_backward", "arange"])
def test_casts_into_bfloat16_from_other_types_round_as_on_the_gpu(name):
    """Regression (Triton bf16 OpInfo table, 22 'mismatches'): Triton's interpreter kept
    a float64 or integer value's bits as the bf16 result (2.0 -> 1.8e-40); the kernels
    were right (an H200 rounds them correctly). Dyno's runtime corrects the interpreter's
    cast: f64 (erfc's and the scans' accumulators), int64 (counts, indices) and bool
    (dropout's mask) into bf16."""
    x = torch.tensor([0.0, 0.5, -1.0, 2.0, 3.0, float("nan"), 100.5], dtype=torch.bfloat16)
    functions = {
        "erfc": (torch.erfc, (x,)),
        "cumsum": (lambda t: torch.cumsum(t * 1.0, 0), (x,)),
        "nanmean": (torch.nanmean, (x,)),
        "dropout_backward": (lambda g, m: torch.ops.aten.native_dropout_backward(g, m, 2.0),
                             (x, torch.tensor([True, False, True, True, True, False, True]))),
        "arange": (lambda t: t + torch.arange(7, dtype=torch.bfloat16), (x,)),
    }
    fn, inputs = functions[name]
    got = assert_compiled_matches(fn, *inputs, rtol=0, atol=0, options={"target": "triton"})
    assert got.abs().nan_to_num().max() > 0.1  # not the tiny subnormals of the bits


def test_concatenation_and_padding_between_kernels():
    # A Triton program cannot read back a concatenation or a padding it did not store:
    # SplitKernelsForTriton runs them on the host (torch.cat, F.pad) between the kernels
    # that compute their operands and those that read them. Before, such graphs ran
    # partly (cat) or wholly (pad) eagerly.
    def fn(x, y):
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)  # rotary embeddings
        mixed = torch.tanh(rotated * y + x)
        padded = torch.nn.functional.pad(mixed.exp(), (1, 2, 0, 1), value=-1.5)
        return padded.sum(-1), torch.cat([mixed, y], 0) * 2
    assert_compiled_matches(fn, torch.randn(6, 8), torch.randn(6, 8),
                            options={"target": "triton"})
    assert dyno.stats()["partially_compiled_graphs"] == 0


def test_rolls_are_reads_at_rotated_indices(tmp_path, monkeypatch):
    # torch.roll decomposes into concats of slices, which a Triton kernel cannot read: each
    # was a torch.cat on the host (Swin's shifted windows: 8 per call). A rotation is now
    # a read at (i + a) mod n in the kernel that consumes it, through a window partition's
    # reshape too; rolls of either sign, of several dimensions, of the last dimension.
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))

    def fn(x, w):
        b, h, wd, c = x.shape
        y = torch.nn.functional.layer_norm(x, (c,))
        y = torch.roll(y, shifts=(-2, -2), dims=(1, 2))
        windows = y.view(b, h // 4, 4, wd // 4, 4, c).permute(0, 1, 3, 2, 4, 5)
        out = windows.reshape(-1, 16, c) @ w
        out = out.view(b, h // 4, wd // 4, 4, 4, c).permute(0, 1, 3, 2, 4, 5)
        out = torch.roll(out.reshape(b, h, wd, c), shifts=(2, 2), dims=(1, 2))
        # Reductions read a rotation's copy (long sums stay blocked), also over a
        # dimension a view splits off the rotated one.
        summed = torch.roll(x, 1, 1).view(b, 2, h // 2, wd, c).sum(2)
        return x + out, torch.roll(x, 3, -1) * 2, summed, torch.roll(x, 5, 2).sum()
    x, w = torch.randn(2, 8, 12, 16), torch.randn(16, 16)
    assert_compiled_matches(fn, x, w, options={"target": "triton"})
    assert dyno.stats()["partially_compiled_graphs"] == 0
    wrapper = next(tmp_path.iterdir()) / "06-wrapper.py"
    assert "torch.cat" not in wrapper.read_text()
    kernels = (next(tmp_path.iterdir()) / "05-kernels.py").read_text()
    assert " % 8)" in kernels and " % 12)" in kernels and " % 16)" in kernels
    # The CPU target writes a concat's pieces in place (its tiling needs monotonic maps).
    assert_compiled_matches(fn, x, w, options={"target": "cpu"})


def test_square_roots_of_every_float_type():
    # Regression: tl.sqrt_rn takes float32 only, so a float64 sqrt failed at run time
    # (the graph went eager: "Expected dtype ['fp32'] but got fp64").
    for dtype in (torch.float64, torch.float16, torch.float32):
        torch._dynamo.reset()
        dyno.reset_stats()
        x = torch.rand(33, dtype=dtype) * 100
        # Within an ulp of float32: eager's vectorized CPU sqrt is not always the IEEE
        # root that Triton computes (95.27381 -> 9.760830 against 9.760831).
        assert_compiled_matches(lambda t: torch.sqrt(t) + 1, x, rtol=3e-7, atol=0,
                                options={"target": "triton"})


def test_rounding_is_exact():
    # Regression (found when round first compiled for Triton): upstream's expansion of
    # roundeven computed trunc(x + 0.5), and 0.49999997 + 0.5 rounds up to 1.0 in float32,
    # so round(0.49999997) gave 1. An exact helper prints it now.
    values = torch.tensor([0.49999997, -0.49999997, 0.5, 1.5, 2.5, -0.5, -2.5, -0.0, 0.0,
                           -0.3, 8388607.5, 8388609.0, 4194304.5, 1e20, -1e-30,
                           float("nan"), float("inf"), -float("inf")])
    x = torch.cat([values, torch.randn(64) * 100])

    def fn(x):
        return torch.round(x), torch.round(x, decimals=2)
    actual = torch.compile(fn, backend="mlir", options={"target": "triton"})(x)
    assert dyno.stats()["fallback_graphs"] == 0 and dyno.stats()["triton_graphs"] >= 1
    for got, want in zip(actual, fn(x)):
        assert torch.equal(got.nan_to_num(), want.nan_to_num())
        assert torch.equal(torch.signbit(got), torch.signbit(want))


@pytest.mark.parametrize("name", ["sinh", "cosh", "tanh", "asinh", "acosh", "atanh"])
def test_hyperbolic_functions_keep_relative_accuracy(name):
    # Regression (miscompiles): upstream's expansions gave asinh(-1e4) = -inf (and 0.3%
    # off at -1000), acosh(-1e4) = -inf instead of NaN, and 0 for sinh, tanh and atanh of
    # 1e-8; the sign of -0.0 was lost. Compared in relative terms down to 1e-30.
    fn = getattr(torch, name)
    magnitudes = torch.logspace(-30, 4, 69)
    x = torch.cat([magnitudes, -magnitudes, torch.linspace(-1.5, 1.5, 61),
                   torch.tensor([-0.0, 0.0, 1.0, -1.0, 0.99999994, 1.0000001, 88.5,
                                 1e19, -1e19, 3e38, float("nan"), float("inf"),
                                 -float("inf")])])
    # (Not 88.8 to 89.4, where sinh and cosh are finite but exp overflows: eager's own
    # scalar path gives the finite value and its vectorized path infinity.)
    actual = torch.compile(fn, backend="mlir", options={"target": "triton"})(x)
    assert dyno.stats()["fallback_graphs"] == 0 and dyno.stats()["triton_graphs"] >= 1
    expected = fn(x)
    torch.testing.assert_close(actual, expected, rtol=4e-6, atol=0, equal_nan=True)
    numbers = ~expected.isnan()  # a NaN's sign bit means nothing
    assert torch.equal(torch.signbit(actual[numbers]), torch.signbit(expected[numbers]))


def test_partition_that_fails_together_compiles_op_by_op():
    # block_diag concatenates zero fills with its inputs: each op compiles for Triton
    # alone, but not together (the host cannot compute a fill between kernels). The
    # partition is then compiled op by op instead of falling back whole (the sweep saw
    # block_diag, cartesian_prod, diag_embed and gradient fall back).
    def fn(a, b):
        return torch.block_diag(a * 2, b.exp())
    assert_compiled_matches(fn, torch.randn(2, 3), torch.randn(3, 2),
                            options={"target": "triton"})
    assert dyno.stats()["partially_compiled_graphs"] == 0


def test_full_reductions_of_large_tensors_run_as_partials_then_one_reduction():
    # dyno-split-full-reductions: 1024 programs reduce slices, one reduces the partials
    # (one program walking 263168 elements was the GPU's slowest kernel pattern).
    x = torch.randn(1024, 257)
    for fn in (lambda t: t.sum(), lambda t: t.amax(), lambda t: (t > -10).all(),
               lambda t: t.abs().sum() * 2):
        torch._dynamo.reset()
        dyno.reset_stats()
        assert_compiled_matches(fn, x, options={"target": "triton"})
        assert dyno.stats()["kernels"] >= 2, dyno.stats()


_ERF_KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def kernel_0(arg0, arg1, XBLOCK: tl.constexpr):
    offsets = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offsets < 64
    tl.store(arg1 + offsets, tl.erf(tl.load(arg0 + offsets, mask=mask)), mask=mask)


LAUNCH_TABLE_VERSION = 3
KERNELS = {"kernel_0": {"args": ["DTYPE", "DTYPE"], "xnumel": 64, "rnumel": 1,
                        "configs": [{"XBLOCK": 64, "num_warps": 4}]}}
'''


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_triton_gpu_compile_check(dtype, threads, monkeypatch):
    """DYNO_TRITON_COMPILE_CHECK=cuda:90 compiles each interpreted kernel for an H100
    first: Triton's interpreter runs `tl.erf` of a bf16 block, its GPU compiler rejects
    it ("Expected dtype ['fp32', 'fp64'] but got bf16"), and so must the check, whether
    it ran at the launch or ahead of it (2 compile threads: the launch reports it)."""
    from dyno.targets.triton import runtime as triton_runtime

    monkeypatch.setenv("DYNO_TRITON_COMPILE_CHECK", "cuda:90")
    source = _ERF_KERNELS.replace("DTYPE", str(dtype).removeprefix("torch."))
    monkeypatch.setattr(compile_check, "_checked_compiles", set())
    kernels = triton_runtime.TritonKernels(triton_runtime.write_kernels(source), "cpu",
                                           compile_threads=threads)
    assert kernels.compiled_ahead == (threads > 1)
    x = torch.randn(64, dtype=dtype)
    y = torch.empty_like(x)
    if dtype == torch.bfloat16:
        with pytest.raises(triton_runtime.TritonCompileCheckError,
                           match="(?s)rejects kernel kernel_0.*Expected dtype.*but got bf16"):
            kernels["kernel_0"](x, y)
    else:
        kernels["kernel_0"](x, y)
        torch.testing.assert_close(y, torch.erf(x))


def test_kernels_compile_ahead_of_their_first_launch_with_their_launch_signatures(
        monkeypatch):
    """With 2 compile threads, a graph's kernels compile on a pool as the graph loads,
    each with the argument types its launch-table entry declares (bf16, fp32, bool and
    int64 pointers here), and each first launch finds its compile done. Interpreted,
    the compiles are the GPU compile checks (DYNO_TRITON_COMPILE_CHECK), which take the
    same path: a declared type that differs from the launched one, or a launch that does
    not wait, shows as a second compile on the launching thread."""
    import threading

    import triton

    monkeypatch.setenv("DYNO_TRITON_COMPILE_CHECK", "cuda:90")
    monkeypatch.setenv("DYNO_JIT_THREADS", "2")
    monkeypatch.setattr(compile_check, "_checked_compiles", set())
    compiles = []
    compile_for_the_gpu = triton.compile

    def recorded(source, *args, **kwargs):
        compiles.append((source.fn.__name__, tuple(source.signature.values()),
                         threading.current_thread().name))
        return compile_for_the_gpu(source, *args, **kwargs)

    monkeypatch.setattr(triton, "compile", recorded)

    def fn(x, index, keep):
        probabilities = torch.softmax(x.float(), -1)
        kept = torch.where(keep, probabilities, 0.0).to(torch.bfloat16)
        return kept[index] * 2, (x > 0).sum(-1), probabilities.amax(-1)

    x = torch.randn(16, 40, dtype=torch.bfloat16)
    index = torch.tensor([3, 0, 15, 7, 7])
    keep = torch.rand(16, 40) > 0.3
    assert_compiled_matches(fn, x, index, keep, options={"target": "triton"}, rtol=1e-2,
                            atol=1e-2)
    kernels = dyno.stats()["kernels"]
    assert dyno.stats()["kernels_compiled_ahead"] == kernels >= 3, dyno.stats()
    names = [name for name, _, _ in compiles]
    assert len(names) == len(set(names)) == kernels, compiles  # each once
    assert all(thread.startswith("dyno-triton-compile") for _, _, thread in compiles), \
        compiles
    types = {t for _, signature, _ in compiles for t in signature}
    assert {"*bf16", "*fp32", "*i64"} <= types and types & {"*i1", "*u1"}, compiles


class _NormPool(torch.nn.Module):
    """Batch norm, ReLU shifted below zero, then a max pool over -inf padding: the pool
    cannot share the norm's kernel (it reads a neighbourhood), so the kernel splits."""

    def __init__(self, kernel, stride, padding):
        super().__init__()
        self.norm = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(kernel, stride, padding)
        with torch.no_grad():
            self.norm.running_mean.normal_()
            self.norm.running_var.uniform_(0.5, 2)

    def forward(self, x):
        return self.pool(torch.relu(self.norm(x)) - 0.5)


@pytest.mark.parametrize("kernel, stride, padding", [(3, 2, 1), (3, 1, 1), (5, 2, 2)])
def test_a_split_kernels_max_pool_reads_its_padding_without_a_host_pad(
        tmp_path, kernel, stride, padding):
    """dyno-split-kernels-for-triton: the max pool's piece reads the stored norm result
    through the -inf pad and its strided window slices with masked loads
    (IterationSpace's slices of padded arguments), with no torch pad on the host
    (ResNet: a fill and a copy of the activation per call). Border windows hold only
    values of -0.5 or more: a pad read as 0 would show."""
    torch.manual_seed(kernel * 10 + stride)
    model = _NormPool(kernel, stride, padding).eval()
    x = torch.randn(2, 8, 15, 16)
    dyno.export_triton(model, (x,), str(tmp_path))
    wrapper = (tmp_path / "wrapper.py").read_text()
    assert "functional.pad" not in wrapper and wrapper.count("_kernels[") == 2, wrapper
    program = triton_runtime.load(str(tmp_path), device="cpu")
    with torch.no_grad():
        torch.testing.assert_close(program(x), model(x), rtol=1e-5, atol=1e-5)
