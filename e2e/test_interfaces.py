"""What users rely on: the entry point, options, stats, debug dumps, fallbacks, threads."""
import os
import subprocess
import sys
import warnings

import pytest
import torch

import dyno
from conftest import assert_compiled_matches
from dyno.targets.cpu import jit as cpu


def test_backend_is_registered_without_importing_dyno():
    script = (
        "import sys, torch\n"
        "f = torch.compile(lambda x: (x * 2).relu().sum(-1), backend='mlir')\n"
        "x = torch.randn(8, 16)\n"
        "torch.testing.assert_close(f(x), (x * 2).relu().sum(-1))\n"
        "assert 'dyno' in sys.modules\n"
        "import dyno\n"
        "s = dyno.stats()\n"
        "assert s['compiled_graphs'] == 1 and s['fallback_graphs'] == 0, s\n"
        "print('ok')\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")


def test_explicit_cpu_target():
    assert_compiled_matches(lambda x: x.exp() + 1, torch.randn(5, 5), options={"target": "cpu"})


def test_targets_implement_one_interface():
    """Each target is a targets.target.Target, found by name and from a device; an option
    a target does not use is named with its reason (the driver logs it), never dropped
    unsaid."""
    from dyno import targets
    from dyno.driver.compiler import CompileOptions
    from dyno.targets.target import Target

    assert targets.names() == ("cpu", "triton")
    for name in targets.names():
        target = targets.get(name)
        assert isinstance(target, Target) and target.name == name, target
        assert "wrapper.py" in target.entry_files and target.cache_key()
        assert target.check_options(CompileOptions()) == []
    assert targets.for_device(torch.device("cpu")).name == "cpu"
    assert targets.for_device(torch.device("cuda", 0)).name == "triton"
    notes = targets.get("cpu").check_options(CompileOptions(autotune=True))
    assert len(notes) == 1 and notes[0].startswith("autotune does nothing on the cpu"), notes
    with pytest.raises(ValueError, match="no target"):
        targets.get("tpu")


def test_unknown_option_is_a_clear_error():
    compiled = torch.compile(lambda x: x + 1, backend="mlir", options={"tile": 4})
    with pytest.raises(Exception, match="unknown options"):
        compiled(torch.randn(3))


def test_stats_count_and_reset():
    def fn(x, w):
        return torch.softmax(x @ w, -1)
    assert_compiled_matches(fn, torch.randn(4, 8), torch.randn(8, 8))
    stats = dyno.stats()
    assert stats["compiled_graphs"] == 1
    assert stats["kernels"] >= 1 and stats["extern_calls"] == 1
    assert stats["fallback_reasons"] == []
    dyno.reset_stats()
    assert dyno.stats()["compiled_graphs"] == 0 and dyno.stats()["kernels"] == 0


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_each_graph_runs_dynos_passes_in_one_process(target, tmp_path, monkeypatch):
    """Per graph, one torch-mlir-opt (torch-mlir's lowering to linalg) and one dyno-opt
    (kernel formation, the target's lowering and, for Triton, its translation); the
    stages in between are still written to the debug directory."""
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    tools = []
    run = subprocess.run

    def counting_run(command, *args, **kwargs):
        if isinstance(command, (list, tuple)):
            tools.append((os.path.basename(str(command[0])), list(map(str, command[1:]))))
        return run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting_run)
    assert_compiled_matches(lambda x: torch.softmax(x * 3, -1).cos(), torch.randn(6, 9),
                            options={"target": target, "cache": False})
    lowerings = [name for name, arguments in tools
                 if name in ("dyno-opt", "dyno-translate") or (
                     name == "torch-mlir-opt" and "--dump-pass-pipeline" not in arguments)]
    assert sorted(lowerings) == ["dyno-opt", "torch-mlir-opt"], tools
    stages = {path.name for path in next(tmp_path.iterdir()).iterdir()}
    lowered = "04-llvm.mlir" if target == "cpu" else "04-triton.mlir"
    assert {"02-linalg.mlir", "03-kernels.mlir", lowered} <= stages, stages
    assert target == "cpu" or "05-kernels.py" in stages


def test_a_debug_dir_that_needs_quoting_still_gets_every_stage(tmp_path, monkeypatch):
    """The stages' file names travel inside dyno-opt's pass pipeline (dyno-write-ir's
    option): a directory with spaces, commas and braces is quoted there."""
    directory = tmp_path / "my dumps, {v2}"
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(directory))
    assert_compiled_matches(lambda x: torch.tanh(x).sum(0), torch.randn(6, 7),
                            options={"cache": False})
    stages = {path.name for path in next(directory.iterdir()).iterdir()}
    assert {"03-kernels.mlir", "04-llvm.mlir", "05-wrapper.py"} <= stages, stages


def test_debug_dir_dumps_every_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    assert_compiled_matches(lambda x: torch.tanh(x).sum(0), torch.randn(6, 7))
    graph_dirs = list(tmp_path.glob("graph_*"))
    assert len(graph_dirs) == 1
    names = sorted(p.name for p in graph_dirs[0].iterdir())
    assert names == ["00-aten-fx.py", "01-torch.mlir", "02-linalg.mlir", "03-kernels.mlir",
                     "04-llvm.mlir", "05-wrapper.py"]
    assert "torch.aten.tanh" in (graph_dirs[0] / "01-torch.mlir").read_text()
    assert "dyno.launch" in (graph_dirs[0] / "03-kernels.mlir").read_text()
    assert "llvm.func @kernel_" in (graph_dirs[0] / "04-llvm.mlir").read_text()


_COMPILE_A_SOFTMAX = (
    "import torch\n"
    "f = torch.compile(lambda x, w: torch.softmax(x @ w, -1), backend='mlir')\n"
    "x, w = torch.randn(8, 16), torch.randn(16, 16)\n"
    "torch.testing.assert_close(f(x, w), torch.softmax(x @ w, -1))\n")


def test_torch_logs_show_each_graph_and_its_stages():
    """TORCH_LOGS="dyno": a line per compiled graph, with its kernels, library calls and
    stage times; "+dyno": each stage as it ends (and no debug lines of the MLIR bindings
    Dyno ships); without it, nothing."""
    def stderr(logs):
        env = dict(os.environ, TORCH_LOGS=logs) if logs else dict(os.environ)
        if not logs:
            env.pop("TORCH_LOGS", None)
        result = subprocess.run([sys.executable, "-c", _COMPILE_A_SOFTMAX],
                                capture_output=True, text=True, timeout=300, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stderr

    summary = "graph 0 (forward, cpu): 1 kernels, 1 library calls, compiled in"
    info = stderr("dyno")
    assert summary in info and "Dyno passes" in info and "JIT" in info, info[-3000:]
    assert "graph 0: Dyno passes:" not in info
    debug = stderr("+dyno")
    for stage in ("torch-mlir import", "linalg lowering", "Dyno passes", "wrapper", "JIT"):
        assert f"graph 0: {stage}: " in debug, debug[-3000:]
    assert summary in debug and "Loading all available dialects" not in debug
    assert "dyno" not in stderr("")


def test_slow_stages_say_where_the_compile_is(monkeypatch):
    """A stage that runs longer than SLOW_STAGE_SECONDS says so while it runs, and
    again as often; nothing after it ends."""
    import logging
    import time

    from dyno.driver import debug

    class Notes(logging.Handler):
        def __init__(self):
            super().__init__()
            self.lines = []

        def emit(self, record):
            self.lines.append(record.getMessage())

    notes = Notes()
    monkeypatch.setattr(debug, "SLOW_STAGE_SECONDS", 0.05)
    level = debug.log.level
    debug.log.setLevel(logging.INFO)  # (setLevel: the logger caches isEnabledFor)
    debug.log.addHandler(notes)
    try:
        dump = debug.GraphDump()
        with dump.stage("kernel formation"):
            time.sleep(0.3)
        ended = len(notes.lines)
        time.sleep(0.2)
    finally:
        debug.log.removeHandler(notes)
        debug.log.setLevel(level)
    assert ended >= 2 and len(notes.lines) == ended, notes.lines
    assert all(f"graph {dump.graph_id}: still in kernel formation after" in line
               for line in notes.lines), notes.lines
    assert dump.summary().startswith("kernel formation 0.")


def test_torch_trace_carries_every_stage_for_tlparse(tmp_path):
    """TORCH_TRACE: each stage's IR and the wrapper are artifacts of the compile that made
    them, which tlparse writes out beside Dynamo's and AOTAutograd's."""
    trace = tmp_path / "trace"
    result = subprocess.run([sys.executable, "-c", _COMPILE_A_SOFTMAX], capture_output=True,
                            text=True, timeout=300, env=dict(os.environ, TORCH_TRACE=str(trace)))
    assert result.returncode == 0, result.stderr[-3000:]
    logs = list(trace.iterdir())
    assert len(logs) == 1
    parsed = tmp_path / "parsed"
    tlparse = os.path.join(os.path.dirname(sys.executable), "tlparse")
    done = subprocess.run([tlparse, str(logs[0]), "-o", str(parsed), "--no-browser"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    artifacts = {path.name.rsplit("_", 1)[0]: path for path in parsed.rglob("dyno_graph_*")}
    assert sorted(artifacts) == [f"dyno_graph_0_{name}" for name in (
        "00-aten-fx.py", "01-torch.mlir", "02-linalg.mlir", "03-kernels.mlir",
        "04-llvm.mlir", "05-wrapper.py")], sorted(artifacts)
    assert "dyno.launch" in artifacts["dyno_graph_0_03-kernels.mlir"].read_text()
    assert "_kernels[" in artifacts["dyno_graph_0_05-wrapper.py"].read_text()


def test_compile_failure_warns_once_with_reproducer_and_runs_eagerly(monkeypatch, tmp_path):
    _broken_dyno_opt(monkeypatch, tmp_path)
    fn = torch.compile(lambda x: x.sin() * 3, backend="mlir")
    x = torch.randn(4, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.testing.assert_close(fn(x), x.sin() * 3)
        fn2 = torch.compile(lambda x: x.sin() * 3, backend="mlir")
        torch.testing.assert_close(fn2(x + 1), (x + 1).sin() * 3)
    messages = [str(w.message) for w in caught if "dyno" in str(w.message)]
    assert len(messages) == 1, messages
    assert "injected failure" in messages[0]
    assert "reproduce with:" in messages[0]
    assert "builtin.module(dyno-kernel-formation-pipeline" in messages[0]
    assert "dyno-cpu-lowering-pipeline" in messages[0]  # the whole pipeline, with options
    stats = dyno.stats()
    assert stats["compiled_graphs"] == 0 and stats["fallback_graphs"] >= 1
    assert "injected failure" in stats["fallback_reasons"][0]


def _broken_dyno_opt(monkeypatch, tmp_path):
    broken = tmp_path / "dyno-opt"
    broken.write_text("#!/bin/sh\necho 'error: injected failure' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("DYNO_OPT", str(broken))


def test_a_forward_graph_that_fails_runs_eagers_own_operators(monkeypatch, tmp_path):
    """A forward graph that does not compile runs as Dynamo captured it, with eager's
    operators (softmax's and layer norm's own kernels) and eager autograd, not the AOT
    graph of Dyno's decompositions, which ran at 0.14x-0.77x eager's speed on the
    benchmark suite. Results and gradients are eager's."""
    _broken_dyno_opt(monkeypatch, tmp_path)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LayerNorm(32),
                                torch.nn.Softmax(-1))
    x = torch.randn(8, 16)
    compiled = torch.compile(model, backend="mlir")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            compiled(x)  # the inference graph
            with torch.profiler.profile() as profile:
                got = compiled(x)
            torch.testing.assert_close(got, model(x), rtol=0, atol=0)
        names = {event.key for event in profile.key_averages()}
        assert {"aten::_softmax", "aten::native_layer_norm"} <= names, names
        assert "aten::amax" not in names and "aten::rsqrt" not in names, names
        # Training: the forward graph fails too; eager autograd computes the gradients.
        compiled(x).pow(2).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).pow(2).sum().backward()
    for got_grad, parameter in zip(grads, model.parameters()):
        torch.testing.assert_close(got_grad, parameter.grad, rtol=0, atol=0)
    stats = dyno.stats()
    assert stats["compiled_graphs"] == 0 and stats["fallback_graphs"] == 2, stats
    assert stats.get("compiled_backward_graphs", 0) == 0, stats


def test_failure_inside_aot_autograd_runs_the_graph_eagerly(monkeypatch):
    # A decomposition that raises (as one that built a tensor with torch.tensor did:
    # "aot_autograd expected to have an entirely functional graph") reached the user as
    # BackendCompilerFailed. The graph now runs eagerly with the reason recorded.
    from dyno.ops import decompositions

    table = decompositions.table("cpu")

    def broken_sin(x):
        raise RuntimeError("injected decomposition failure")
    monkeypatch.setattr(decompositions, "table",
                        lambda target: {**table, torch.ops.aten.sin.default: broken_sin})
    x = torch.randn(4, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = torch.compile(lambda t: t.sin() * 3, backend="mlir")(x)
    torch.testing.assert_close(got, x.sin() * 3)
    stats = dyno.stats()
    assert stats["compiled_graphs"] == 0 and stats["fallback_graphs"] == 1, stats
    assert "injected decomposition failure" in stats["fallback_reasons"][0]
    assert any("injected decomposition failure" in str(w.message) for w in caught)


@pytest.mark.parametrize("threads", [1, 2])
def test_kernels_use_torch_thread_count(threads):
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        assert_compiled_matches(lambda x: (x * x).sum(-1), torch.randn(512, 256))
        assert cpu.openmp_runtime().control.omp_get_max_threads() == threads
    finally:
        torch.set_num_threads(previous)


def test_generated_code_calls_the_openmp_runtime(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    assert_compiled_matches(lambda x: torch.exp(x) * 2 + 1, torch.randn(1024, 1024))
    lowered = next(tmp_path.glob("graph_*/04-llvm.mlir")).read_text()
    assert "omp.parallel" in lowered and "omp.wsloop" in lowered

    from dyno import ir
    from dyno.execution_engine import ExecutionEngine
    with ir.Context():
        module = ir.Module.parse(lowered)
        kernels = next(op for op in module.body.operations
                       if op.operation.name == "builtin.module")
        engine = ExecutionEngine(ir.Module.parse(str(kernels)), opt_level=2,
                                 shared_libs=[cpu.openmp_runtime().library],
                                 enable_object_dump=True)
        engine.raw_lookup("kernel_0")
        object_file = tmp_path / "kernels.o"
        engine.dump_to_object_file(str(object_file))
    symbols = subprocess.run(["nm", "-u", str(object_file)], capture_output=True, text=True)
    assert "__kmpc_fork_call" in symbols.stdout, symbols.stdout


def test_gradients_match_eager():
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
    reference = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(),
                                    torch.nn.Linear(32, 4))
    reference.load_state_dict(model.state_dict())
    x = torch.randn(8, 16)
    compiled = torch.compile(model, backend="mlir")
    compiled(x).square().sum().backward()
    reference(x).square().sum().backward()
    for got, want in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-5)
    stats = dyno.stats()
    assert stats["compiled_forward_graphs"] == 1 and stats["compiled_backward_graphs"] == 1, stats
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]


def test_parameters_are_inputs_not_baked_constants(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    linear = torch.nn.Linear(64, 32)
    x = torch.randn(4, 64)
    compiled = torch.compile(linear, backend="mlir")
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), linear(x), rtol=1e-4, atol=1e-5)
        linear.weight.mul_(2.0)
        linear.bias.add_(1.0)
        torch.testing.assert_close(compiled(x), linear(x), rtol=1e-4, atol=1e-5)
    imported = next(tmp_path.glob("graph_*/02-linalg.mlir")).read_text()
    signature = imported[imported.index("function_type"):].split("\n")[0]
    assert "tensor<32x64xf32>" in signature and "tensor<32xf32>" in signature, signature
    assert "dense<" not in imported, "a parameter was baked into the IR as a constant"
    assert dyno.stats()["fallback_graphs"] == 0


def test_kernels_share_pytorch_thread_pool():
    # PyTorch's CPU wheels run on libgomp; Dyno's kernels must use that same pool.
    runtime = cpu.openmp_runtime()
    assert runtime.shares_torch_pool
    assert runtime.library.endswith("libDynoKmpcOnGomp.so")


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("shape", [(7, 4096), (130, 513), (1, 70000)])
def test_static_schedule_covers_every_row(threads, shape):
    # The row blocks are split over the pool's threads; odd counts leave some threads
    # with one block more, or none. Every element must be written exactly once.
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        assert_compiled_matches(lambda x: torch.softmax(x * 3, dim=-1) + 1, torch.randn(*shape))
    finally:
        torch.set_num_threads(previous)


def test_llvm_openmp_runtime_is_the_fallback():
    script = (
        "import torch, dyno\n"
        "from dyno.targets.cpu import jit as cpu\n"
        "f = torch.compile(lambda x: torch.softmax(x, -1) * 2, backend='mlir')\n"
        "x = torch.randn(512, 300)\n"
        "torch.testing.assert_close(f(x), torch.softmax(x, -1) * 2)\n"
        "assert dyno.stats()['fallback_graphs'] == 0\n"
        "assert not cpu.openmp_runtime().shares_torch_pool\n"
        "assert 'iomp5' in cpu.openmp_runtime().library or 'libomp' in cpu.openmp_runtime().library\n"
        "print('ok')\n")
    env = dict(os.environ, DYNO_OPENMP="llvm")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]


def test_compiled_graph_runs_from_another_python_thread():
    import threading
    compiled = torch.compile(lambda x: torch.softmax(x, -1) * 3, backend="mlir")
    x = torch.randn(256, 300)
    with torch.no_grad():
        expected = torch.softmax(x, -1) * 3
        torch.testing.assert_close(compiled(x), expected)
        results = []
        worker = threading.Thread(target=lambda: results.append(compiled(x)))
        worker.start()
        worker.join()
    torch.testing.assert_close(results[0], expected)
    assert dyno.stats()["fallback_graphs"] == 0 and dyno.stats()["runtime_fallbacks"] == 0


def test_crash_in_torch_mlir_lowering_does_not_kill_the_program():
    # Regression (OpInfo sweep): torch-mlir's lowering of unfold divided by zero (SIGFPE)
    # in process. It now runs in a torch-mlir-opt subprocess; the graph falls back.
    unfold = torch.nn.functional.unfold
    x = torch.randn(1, 2, 5, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kwargs in ({"kernel_size": 2}, {"kernel_size": (2, 3), "dilation": 1,
                                            "padding": 1, "stride": 2}):
            torch._dynamo.reset()
            compiled = torch.compile(lambda t: unfold(t, **kwargs), backend="mlir")
            torch.testing.assert_close(compiled(x), unfold(x, **kwargs))


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_out_of_range_index_raises_eagers_error_not_a_crash(target):
    # Regression: torch-mlir checks gather indices with per-element asserts; in a CPU
    # kernel a failed one aborted the process ("index must be smaller than dim size").
    # dyno-hoist-kernel-assertions checks them on the host before the gather runs: the
    # call runs eagerly and eager raises IndexError; later calls run compiled again.
    # Triton: the checks are device assertions in the gathering kernel (a GPU's
    # device-side assert, as eager's); interpreted, a failed one is the same fallback.
    weight = torch.randn(10, 4)

    def fn(indices):
        return torch.nn.functional.embedding(indices, weight) * 2 + weight[indices].sum(-1, keepdim=True)

    compiled = torch.compile(fn, backend="mlir", options={"target": target})
    good = torch.tensor([1, 3, 9])
    torch.testing.assert_close(compiled(good), fn(good))
    stats = dyno.stats()
    assert stats["compiled_graphs"] == 1 and stats["runtime_fallbacks"] == 0, stats
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(IndexError):
            compiled(torch.tensor([1, 12, 2]))
        with pytest.raises(IndexError):
            compiled(torch.tensor([-11, 0, 2]))
    assert dyno.stats()["runtime_fallbacks"] == 2
    other = torch.tensor([0, 0, 5])
    torch.testing.assert_close(compiled(other), fn(other))
    assert dyno.stats()["runtime_fallbacks"] == 2  # compiled again, not eager from now on


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_computed_indices_are_checked_only_where_they_can_leave_their_range(
        target, tmp_path, monkeypatch):
    # dyno-remove-proven-assertions: a mixture of experts' routing gathers rows at sort
    # positions divided by top-k; those can never leave the table, and their host checks
    # (two GPU launches each) go. An index that can reach past the table (position + 1)
    # keeps its check, which still turns the call eager where eager raises.
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    tokens = torch.randn(8, 4)

    def route(scores, shift):
        order = scores.flatten().argsort(stable=True)
        gathered = tokens[order // 2] * 2
        shifted = tokens[(order // 4 + shift).clamp(min=0)]
        return gathered, shifted

    scores = torch.randn(8, 2)
    compiled = torch.compile(route, backend="mlir", options={"target": target})
    zero = torch.tensor(0)
    torch.testing.assert_close(compiled(scores, zero), route(scores, zero))
    assert dyno.stats()["runtime_fallbacks"] == 0
    (wrapper,) = tmp_path.glob("graph_*/0*-wrapper.py")
    host_checks = wrapper.read_text().count("_check_condition(")
    if target == "cpu":
        assert host_checks == 1, wrapper.read_text()  # the shifted index's, not the routing's
    else:
        # dyno-keep-assertions-in-kernels: the shifted index's check is a device
        # assertion in the kernel that gathers through it, and only there.
        assert host_checks == 0, wrapper.read_text()
        (kernels,) = tmp_path.glob("graph_*/0*-kernels.py")
        asserting = [kernel for kernel in kernels.read_text().split("@triton.jit")[1:]
                     if "tl.device_assert(" in kernel]
        assert len(asserting) == 1, kernels.read_text()
        assert asserting[0].startswith("(debug=True)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(IndexError):
            compiled(scores, torch.tensor(7))
