"""What a GPU call costs on the host, checked without a GPU: the Triton runtime's direct
launches (Triton's C launcher called with nothing but an alignment check per launch),
and the padded bf16/f16 matrix products (host_runtime.PaddedProducts) with which cuBLAS
runs its fast kernels. The speed is measured on a GPU by benchmarks/gpu_launch_cost.py
and benchmarks/gpu_gemm_padding.py; these tests check that what runs is right."""
import contextlib
import os
import tempfile

import pytest
import torch

import dyno
from dyno.targets import host_runtime
from dyno.targets.triton import runtime as triton_runtime
from dyno.targets.triton.runtime import launch as runtime_launch, program as runtime_program


class _FakeCompiled:
    """Stands in for a loaded triton CompiledKernel: records its C launcher's calls."""

    def __init__(self, log):
        self.log = log
        self.function, self.packed_metadata = "function", "metadata"
        self.loaded = False

    def _init_handles(self):
        self.loaded = True

    @property
    def run(self):
        assert self.loaded, "the launcher is read only once the binary is loaded"
        return lambda *arguments: self.log.append(("direct", arguments))

    def __getitem__(self, grid):
        return lambda *arguments: self.log.append(("runner", grid, arguments))


class _FakeJit:
    """Stands in for a triton.JITFunction: `kernel[grid](...)` records a JIT launch and
    returns the compiled kernel."""

    def __init__(self):
        self.log = []
        self.__name__ = "kernel_0"

    def __getitem__(self, grid):
        def launch(*tensors, **blocks):
            self.log.append(("jit", grid, tensors, blocks))
            return _FakeCompiled(self.log)
        return launch


@pytest.fixture
def fake_stream(monkeypatch):
    monkeypatch.setattr(runtime_launch, "_raw_stream", lambda device: 1000 + device)
    monkeypatch.setattr(runtime_launch, "_current_device", lambda: 3)


def _launcher(kernel, args, **entry):
    entry = {"args": args, "xnumel": 4096, "rnumel": 1,
             "configs": [{"XBLOCK": 1024, "num_warps": 4}], **entry}
    return triton_runtime.Launcher(kernel, entry, interpret=False, autotune=False, key="k")


def test_a_static_kernel_launches_through_the_c_launcher_after_its_first_launch(fake_stream):
    kernel = _FakeJit()
    launcher = _launcher(kernel, ["float32", "float32"])
    x, y = torch.empty(4096), torch.empty(4096)
    launcher(x, y)
    assert [entry[0] for entry in kernel.log] == ["jit"]
    launcher(x, y)
    # grid, the current device's stream, Triton's function and metadata, no launch
    # metadata or hooks, the arguments, then the constexpr block size
    assert kernel.log[-1] == ("direct", (4, 1, 1, 1003, "function", "metadata", None, None,
                                         None, x, y, 1024))
    assert [entry[0] for entry in kernel.log] == ["jit", "direct"]


def test_an_unaligned_pointer_compiles_its_own_specialization(fake_stream):
    kernel = _FakeJit()
    launcher = _launcher(kernel, ["float32", "float32"])
    x, y = torch.empty(4096), torch.empty(4097)
    launcher(x, y[:4096])
    unaligned = y[1:]  # 4 bytes into its storage: not 16-byte aligned
    assert unaligned.data_ptr() % 16
    launcher(x, unaligned)  # Triton specializes on alignment: a launch of its own
    assert [entry[0] for entry in kernel.log] == ["jit", "jit"]
    launcher(x, unaligned)  # then that specialization's direct launch
    launcher(x, y[:4096])  # and the aligned one's
    assert [entry[0] for entry in kernel.log] == ["jit", "jit", "direct", "direct"]
    assert kernel.log[-2][1][-2] is unaligned


def test_kernels_with_sizes_keep_the_keyed_launch(fake_stream):
    """A size argument specializes the compile and sets the grid: no aligned-only path."""
    kernel = _FakeJit()
    launcher = _launcher(kernel, ["float32", "int"], xnumel=1, xnumel_args=[1])
    x = torch.empty(4096)
    launcher(x, 4096)
    launcher(x, 4096)
    launcher(x, 2048)
    assert launcher.aligned is None
    assert [entry[0] for entry in kernel.log] == ["jit", "direct", "jit"]
    assert kernel.log[1][1][:3] == (4, 1, 1) and kernel.log[2][1] == (2,)


def test_a_launch_hook_keeps_tritons_own_runner(fake_stream, monkeypatch):
    from triton import knobs

    monkeypatch.setattr(knobs.runtime, "launch_enter_hook", lambda *args: None)
    kernel = _FakeJit()
    launcher = _launcher(kernel, ["float32"])
    x = torch.empty(4096)
    launcher(x)
    launcher(x)
    assert [entry[0] for entry in kernel.log] == ["jit", "runner"]


@pytest.mark.parametrize("dtype, m, k, n, kept, padding", [
    (torch.bfloat16, 4096, 768, 50257, False, (0, 7)),  # GPT-2's LM head
    (torch.float16, 4096, 768, 30522, False, (0, 6)),  # BERT's
    (torch.bfloat16, 64, 48, 1001, True, (0, 7)),  # a frozen weight: at any size
    (torch.bfloat16, 64, 48, 1001, False, (0, 0)),  # padded per call: only large ones
    (torch.bfloat16, 4096, 768, 1024, False, (0, 0)),
    (torch.float32, 4096, 768, 50257, True, (0, 0)),  # f32 measured no faster padded
    (torch.bfloat16, 64, 1001, 64, True, (0, 0)),  # K padded only for large products
    (torch.bfloat16, 4096, 50257, 768, False, (7, 0)),  # its input gradient
    (torch.bfloat16, 1024, 1001, 1100, False, (0, 0)),
])
def test_product_padding(dtype, m, k, n, kept, padding):
    assert host_runtime.product_padding(m, k, n, dtype, kept) == padding


@pytest.mark.parametrize("bias, epilogue", [(False, None), (True, None), (True, "gelu")])
def test_padded_products_match_the_product_as_it_is(bias, epilogue, monkeypatch):
    monkeypatch.setattr(host_runtime, "PAD_K_MIN_VOLUME", 1)  # pad K here too
    monkeypatch.setattr(host_runtime, "PAD_PER_CALL_MIN_VOLUME", 1)
    torch.manual_seed(0)
    a = torch.randn(33, 45, dtype=torch.float64)
    weight = torch.randn(1001, 45, dtype=torch.float64)
    b = torch.randn(1001, dtype=torch.float64) if bias else None
    want = a @ weight.t() + (b if bias else 0)
    if epilogue:
        want = torch.nn.functional.gelu(want)
    got = host_runtime.PaddedProducts().mm(
        0, a.bfloat16(), weight.bfloat16().t(), b.bfloat16() if bias else None, epilogue)
    plain = a.bfloat16() @ weight.bfloat16().t() + (b.bfloat16() if bias else 0)
    if epilogue:
        plain = torch.nn.functional.gelu(plain)
    assert got.shape == (33, 1001) and got.stride() == (1008, 1)  # rows of N' = 1008
    # no less accurate than the product as it is, against float64
    assert (got.double() - want).abs().max() <= (plain.double() - want).abs().max() * 1.01 + 1e-2


@pytest.mark.parametrize("transposed", [True, False])
def test_a_padded_weight_is_the_weight_then_exact_zeros(transposed):
    """Only the added rows and columns are written with zeros (no fill of the whole
    result first): they are zeros even where the memory held NaNs, and the weight is
    copied bit for bit, in its own layout."""
    weight = torch.randn(1001, 45).bfloat16()  # [N, K], read as b = weight.t()
    b = weight.t() if transposed else weight.t().contiguous()
    for _ in range(3):  # leave NaNs in the allocator's free blocks of this size
        torch.full((1008 * 48 + 64,), float("nan"), dtype=torch.bfloat16)
    padded = host_runtime._padded_weight(b, 3, 7)  # K 45 -> 48, N 1001 -> 1008
    assert padded.shape == (48, 1008)
    assert padded.t().is_contiguous() == transposed
    assert torch.equal(padded[:45, :1001], b)
    assert not padded[45:].any() and not padded[:, 1001:].any()
    assert not padded.isnan().any()


def test_a_frozen_weight_is_padded_once_and_again_after_a_write(monkeypatch):
    products = host_runtime.PaddedProducts()
    a = torch.randn(8, 16).bfloat16()  # (small: padded only because the weight is kept)
    weight = torch.randn(1001, 16).bfloat16()
    first = products.mm(0, a, weight.t(), frozen=True)
    padded = products._slots[0][0]
    products.mm(0, a, weight.t(), frozen=True)
    assert products._slots[0][0] is padded  # made once
    with torch.no_grad():
        weight.mul_(2)  # an optimizer's in-place update: its version counter moves
    second = products.mm(0, a, weight.t(), frozen=True)
    assert products._slots[0][0] is not padded
    torch.testing.assert_close(second, (first.float() * 2).bfloat16())
    monkeypatch.setattr(host_runtime, "PAD_PER_CALL_MIN_VOLUME", 1)
    unfrozen = host_runtime.PaddedProducts()
    assert unfrozen.mm(0, a, weight.t()).stride() == (1008, 1)
    assert not unfrozen._slots  # padded on every call


def _exported_and_eager(model, x):
    """(the exported GPU program's wrapper source, its result on `x` run by the export's
    own runtime (Triton's interpreter here), eager's result)."""
    with tempfile.TemporaryDirectory() as directory:
        dyno.export_triton(model, (x,), directory)
        with open(os.path.join(directory, "wrapper.py")) as file:
            wrapper = file.read()
        program = triton_runtime.load(directory, device="cpu")
        with torch.no_grad():
            return wrapper, program(x), model(x)


def test_an_lm_head_of_odd_width_exports_padded_and_matches_eager(monkeypatch):
    """A bf16 linear layer of 1001 outputs (the LM heads of GPT-2 and BERT have 50257 and
    30522) is a padded product in the exported GPU program, and its result, read by a
    kernel (the softmax), matches eager; the program's output, the last product's result
    reshaped to [2, 2, 1001], is returned with its rows padded to 1008 elements (as
    Inductor returns its padded products), not copied into eager's strides."""
    monkeypatch.setattr(host_runtime, "PAD_PER_CALL_MIN_VOLUME", 1)  # (small here)
    monkeypatch.setattr(host_runtime, "PADDED_ROWS_MIN_ELEMENTS", 1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 1001), torch.nn.Softmax(-1),
                                torch.nn.Linear(1001, 1001, bias=False)).bfloat16().eval()
    x = torch.randn(2, 2, 64).bfloat16()
    wrapper, got, want = _exported_and_eager(model, x)
    assert wrapper.count("_padded.mm(") == 2, wrapper
    assert "padded_rows=True" in wrapper, wrapper
    assert got.shape == want.shape and got.stride() == (2 * 1008, 1008, 1)
    torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)


def test_padded_rows_are_returned_only_as_eager_lays_them_out_otherwise(monkeypatch):
    """as_eager keeps a large padded product's rows padded only where the view is eager's
    row-major layout with a longer pitch; anything else, or a small output, is copied
    into eager's strides."""
    padded = torch.randn(12, 1008)
    small = padded[:, :1001]
    assert host_runtime.as_eager(small, (1001, 1), torch.float32,
                                 padded_rows=True).stride() == (1001, 1)
    monkeypatch.setattr(host_runtime, "PADDED_ROWS_MIN_ELEMENTS", 1)
    rows = padded[:, :1001].reshape(3, 4, 1001)
    dense = (4 * 1001, 1001, 1)
    assert host_runtime.as_eager(rows, dense, torch.float32, padded_rows=True) is rows
    copied = host_runtime.as_eager(rows, dense, torch.float32)  # not a padded product's
    assert copied.stride() == dense and torch.equal(copied, rows)
    columns = padded[:, :1001].t()  # rows padded, but eager's order is another
    kept = host_runtime.as_eager(columns, (12, 1), torch.float32, padded_rows=True)
    assert kept.stride() == (12, 1) and torch.equal(kept, columns)


def test_a_cuda_graphs_padded_output_is_copied_in_its_own_layout():
    """A CUDA graph's outputs are copied after each replay; a view with padded rows is
    copied as its memory whole (one memcpy), keeping its strides, and owns new memory."""
    padded = torch.randn(12, 1008)
    rows = padded[:, :1001].reshape(3, 4, 1001)
    copy = runtime_program._fresh_copy(rows)
    assert copy.stride() == rows.stride() and torch.equal(copy, rows)
    assert copy.untyped_storage().data_ptr() != padded.untyped_storage().data_ptr()
    padded.zero_()
    assert copy.abs().sum() > 0
    dense = torch.randn(3, 5)
    assert runtime_program._fresh_copy(dense).stride() == (5, 1)
    sparse = torch.randn(12, 4000)[:, :1001]  # most of its memory is not its own: dense copy
    assert runtime_program._fresh_copy(sparse).stride() == (1001, 1)


def test_bf16_convolutions_export_with_channels_last_kernels():
    """On the Triton target the kernels around bf16 convolutions read and write their
    tensors channels-last (dyno-channels-last-convolutions), as cuDNN runs them: the
    wrapper hands kernels NHWC views of the convolutions' results, and the program
    matches eager."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU()).bfloat16().eval()
    x = torch.randn(2, 3, 16, 16).bfloat16()
    wrapper, got, want = _exported_and_eager(model, x)
    assert ".permute([0, 2, 3, 1])" in wrapper, wrapper
    torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)


def test_a_program_that_cannot_be_recorded_runs_without_a_cuda_graph(monkeypatch):
    """Where recording the CUDA graph fails (a library routine that synchronizes with the
    host, as fp32 grouped GEMMs do on a GPU), the program warns once and runs without a
    graph, with the same results."""
    spec = {"inputs": [{"kind": "user_input", "index": 0}], "single_output": True}
    program = triton_runtime.Program(lambda args: [args[0] * 2], spec, {}, "cpu")
    program.cuda_graphs = True  # (as on a CUDA device)

    def refuse(inputs):
        raise RuntimeError("Cannot copy between CPU and CUDA tensors during CUDA graph "
                           "capture unless the CPU tensor is pinned.")

    monkeypatch.setattr(program, "_capture", refuse)
    x = torch.arange(4.0)
    with pytest.warns(RuntimeWarning, match="cannot be recorded in a CUDA graph"):
        assert torch.equal(program(x), x * 2)
    assert not program.cuda_graphs
    assert torch.equal(program(x + 1), (x + 1) * 2)


def test_a_recording_makes_its_own_cublas_workspace_and_leaves_none_behind(monkeypatch):
    """Issue 52's illegal memory access: a CUDA graph recorded the cuBLAS workspace cached
    for the capture stream, made in an earlier graph's memory pool; Inductor's CUDA-graph
    trees then cleared the cache, the earlier graph's pool went back to the device, and
    the later graph wrote into freed memory. Each recording now clears the cache just
    before it begins (its workspace is made in its own pool) and just after it ends (no
    later recording takes it). Checked on the CPU with the CUDA calls replaced."""
    events = []

    class FakeStream:
        def __init__(self, *args, **kwargs):
            pass

        def wait_stream(self, other):
            pass

    class FakeGraph:
        def replay(self):
            events.append("replay")

    @contextlib.contextmanager
    def fake_graph(graph, *args, **kwargs):
        events.append("recording begins")
        yield
        events.append("recording ends")

    @contextlib.contextmanager
    def fake_stream_context(stream):
        yield

    monkeypatch.setattr(torch.cuda, "Stream", FakeStream)
    monkeypatch.setattr(torch.cuda, "stream", fake_stream_context)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda *a: FakeStream())
    monkeypatch.setattr(torch.cuda, "CUDAGraph", FakeGraph)
    monkeypatch.setattr(torch.cuda, "graph", fake_graph)
    monkeypatch.setattr(torch._C, "_cuda_clearCublasWorkspaces",
                        lambda: events.append("clear"), raising=False)
    spec = {"inputs": [{"kind": "user_input", "index": 0}], "single_output": True}
    program = triton_runtime.Program(lambda args: [args[0] * 2], spec, {}, "cpu")
    program.cuda_graphs = True  # (as on a CUDA device)
    x = torch.arange(4.0)
    assert torch.equal(program(x), x * 2)
    assert events == ["clear", "recording begins", "recording ends", "clear", "replay"], events
