"""LLVM's code generation for the CPU target runs in a worker process
(dyno/targets/cpu/codegen_worker.py; issue 52): a crash or assertion there is a warning
and an eager fallback, never the end of the user's program, and the next compile starts
a fresh worker. DYNO_CODEGEN_FAULT injects the crash."""
import json
import shlex
import subprocess
import sys
import tempfile

import pytest
import torch

import dyno
from conftest import assert_compiled_matches
from dyno.errors import DynoCompileError
from dyno.targets.cpu import codegen_worker, jit


@pytest.fixture
def fresh_worker():
    """A worker started after the test's environment is set (it reads
    DYNO_CODEGEN_FAULT when it starts), and none left behind for later tests."""
    codegen_worker.stop()
    yield
    codegen_worker.stop()


def _graph(x):
    return torch.tanh(x) * 2 + x.sum(dim=-1, keepdim=True)


@pytest.mark.parametrize("fault", ["abort", "segfault"])
def test_a_crash_in_code_generation_is_an_eager_fallback(fault, monkeypatch, fresh_worker,
                                                        tmp_path):
    monkeypatch.setenv("DYNO_CODEGEN_FAULT", fault)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the reproducer goes
    x = torch.randn(4, 16)
    with pytest.warns(RuntimeWarning, match="jit: LLVM's code generation died") as caught:
        out = torch.compile(_graph, backend="mlir")(x)
    torch.testing.assert_close(out, _graph(x), rtol=0, atol=0)  # eager's own result
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 1 and stats["compiled_graphs"] == 0, stats
    signal = {"abort": "SIGABRT", "segfault": "SIGSEGV"}[fault]
    message = next(str(warning.message) for warning in caught
                   if "code generation died" in str(warning.message))
    assert signal in message, message
    # Its reproducer compiles the same parts again, alone (here: without the fault).
    command = shlex.split(message.split("reproduce with: ")[1])
    monkeypatch.delenv("DYNO_CODEGEN_FAULT")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "compiled 1 parts" in done.stdout, done.stderr[-3000:]
    # The next compile gets a fresh worker (without the fault) and compiles.
    torch._dynamo.reset()
    dyno.reset_stats()
    assert_compiled_matches(lambda x: torch.sigmoid(x) - x, x)


def test_a_failed_compile_raises_with_the_reason_and_the_worker_serves_on(
        monkeypatch, fresh_worker, tmp_path):
    monkeypatch.setenv("DYNO_CODEGEN_FAULT", "error")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the reproducer goes
    with pytest.raises(DynoCompileError, match="DYNO_CODEGEN_FAULT=error") as raised:
        codegen_worker.compile_objects([b""], ["f"], 3, [], True)
    assert raised.value.stage == "jit"
    worker = codegen_worker._worker
    assert worker is not None and worker.alive()


def test_a_worker_that_died_between_compiles_is_started_again(fresh_worker):
    assert_compiled_matches(lambda x: torch.exp(x) + 1, torch.randn(8))
    codegen_worker._worker.process.kill()
    codegen_worker._worker.process.wait()
    torch._dynamo.reset()
    dyno.reset_stats()
    assert_compiled_matches(lambda x: torch.exp(x) * 3, torch.randn(8))


def test_kernels_run_from_a_loaded_library_and_are_shared_across_graphs(fresh_worker):
    """Two graphs with the same kernel: the second launches the first's unit, which
    runs from the library linked from the worker's object code."""
    x = torch.randn(16, 32)
    first = torch.compile(lambda x: torch.nn.functional.gelu(x) * 2, backend="mlir")
    second = torch.compile(lambda x: torch.nn.functional.gelu(x) * 2, backend="mlir")
    torch.testing.assert_close(first(x), torch.nn.functional.gelu(x) * 2)
    torch.testing.assert_close(second(x), torch.nn.functional.gelu(x) * 2)
    stats = dyno.stats()
    assert stats["compiled_graphs"] == 2 and stats.get("shared_kernels", 0) >= 1, stats
    import gc

    units = [obj for obj in gc.get_objects() if type(obj) is jit.KernelUnit]
    assert units and all(unit.library is not None and unit.object_code for unit in units)


# A fresh process: no LLVM code generation (the ExecutionEngine's module) is loaded in
# it after a compile.
_CHILD = r'''
import json, sys, torch
x = torch.randn(8, 8)
out = torch.compile(lambda x: torch.relu(x) + x.mean(), backend="mlir")(x)
torch.testing.assert_close(out, torch.relu(x) + x.mean())
import dyno
print(json.dumps({"compiled": dyno.stats()["compiled_graphs"],
                  "engine": [name for name in sys.modules
                             if "ParallelJit" in name or "ExecutionEngine" in name
                             or name.endswith("execution_engine")]}))
'''


def test_the_users_process_loads_no_code_generator(tmp_path):
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"compiled": 1, "engine": []}, result
