"""The on-disk compile cache (dyno/driver/compile_cache.py): a later process loads a graph
compiled by an earlier one (CPU and Triton targets), with the same results and without
compiling; processes compiling at once share one cache; a corrupt entry is compiled
again; a graph that differs only in a constant's values is never served another's entry;
the cache stays under its size limit; it can be turned off; a process's entries travel
to another cache as one archive (save_cache_artifacts / load_cache_artifacts); a graph
whose kernels an earlier graph compiled is stored whole, and so is one whose kernels
compiled in parts at once."""
import json
import os
import subprocess
import sys

import pytest
import torch

import dyno

# Compiles a small network (kernels and a library call) and prints its stats and output.
# Under CHECK_NO_COMPILE, Dyno's pass pipelines raise: only a cache hit can succeed.
_REFUSE_COMPILES = r'''
import json, os, sys, torch
import dyno, dyno.lowering.graph_lowering
if os.environ.get("CHECK_NO_COMPILE"):
    def refuse(*args, **kwargs):
        raise RuntimeError("compiled although the cache holds this graph")
    dyno.lowering.graph_lowering.run_dyno_passes = refuse
if os.environ.get("MIN_PART_OPERATIONS"):  # JIT parts however small (DYNO_JIT_THREADS)
    import dyno.targets.cpu.jit
    dyno.targets.cpu.jit.MIN_PART_OPERATIONS = int(os.environ["MIN_PART_OPERATIONS"])
'''
_CHILD = _REFUSE_COMPILES + r'''
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8),
                            torch.nn.LogSoftmax(-1)).eval()
x = torch.randn(4, 16)
if os.environ.get("LOAD_ARTIFACTS"):
    with open(os.environ["LOAD_ARTIFACTS"], "rb") as artifacts:
        print("installed", dyno.load_cache_artifacts(artifacts.read()), file=sys.stderr)
options = {"target": os.environ.get("TARGET", "cpu")}
with torch.no_grad():
    out = torch.compile(model, backend="mlir", options=options)(x)
    torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)
if os.environ.get("SAVE_ARTIFACTS"):
    with open(os.environ["SAVE_ARTIFACTS"], "wb") as artifacts:
        artifacts.write(dyno.save_cache_artifacts())
stats = dyno.stats()
print(json.dumps({"hits": stats.get("cache_hits", 0), "misses": stats.get("cache_misses", 0),
                  "corrupt": stats.get("cache_corrupt_entries", 0),
                  "compiled": stats["compiled_graphs"], "fallbacks": stats["fallback_graphs"],
                  "kernels": stats["kernels"], "out": out.tolist()}))
'''


# What the children below print: stats, the output, and whether each of the JIT's units
# runs from a stored library (once its graph is stored, it does).
_REPORT = r'''
import gc
from dyno.targets.cpu import jit
stats = dyno.stats()
print(json.dumps({"hits": stats.get("cache_hits", 0), "compiled": stats["compiled_graphs"],
                  "fallbacks": stats["fallback_graphs"] + stats["runtime_fallbacks"],
                  "shared": stats.get("shared_kernels", 0), "parts": stats.get("jit_parts", 0),
                  "out": out.tolist(),
                  "units": [os.environ["DYNO_CACHE_DIR"] in unit.library._name
                            for unit in gc.get_objects() if type(unit) is jit.KernelUnit]}))
'''


# Graphs that share kernels (identical layers between graph breaks): the later graphs'
# entries must hold the kernels they took from the first graph's compile.
_SHARING_CHILD = _REFUSE_COMPILES + r'''
torch.manual_seed(0)
layers = torch.nn.ModuleList(torch.nn.Sequential(
    torch.nn.LayerNorm(32), torch.nn.Linear(32, 32), torch.nn.GELU()) for _ in range(3))
def model(x):  # unrolled: Dynamo runs a frame that breaks inside a loop eagerly
    x = layers[0](x * 2)
    torch._dynamo.graph_break()
    x = layers[1](x)
    torch._dynamo.graph_break()
    x = layers[2](x)
    torch._dynamo.graph_break()
    return x.tanh()
x = torch.randn(8, 32)
with torch.no_grad():
    out = torch.compile(model, backend="mlir")(x)
    torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-4)
''' + _REPORT

# One graph with several kernels that share nothing but declarations, split into parts
# however small (under DYNO_JIT_THREADS=2, two parts compiled at once).
_PARTS_CHILD = _REFUSE_COMPILES + r'''
torch.manual_seed(0)
norm, linear = torch.nn.LayerNorm(32), torch.nn.Linear(32, 32)
def model(x):
    h = torch.nn.functional.gelu(linear(norm(x)))
    scores = torch.softmax(h @ h.transpose(-1, -2) / 4, -1)
    return torch.log_softmax(scores @ h + x, -1).tanh()
x = torch.randn(2, 8, 32)
with torch.no_grad():
    out = torch.compile(model, backend="mlir")(x)
    torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)
''' + _REPORT


def _env(cache, **extra):
    env = dict(os.environ, DYNO_CACHE="1", DYNO_CACHE_DIR=str(cache), **extra)
    env.pop("DYNO_DEBUG_DIR", None)
    return env


def _run(cache, child=_CHILD, **extra):
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=600, env=_env(cache, **extra))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _entries(cache):
    return sorted(path for path in (cache / "v1").glob("??/*") if path.is_dir())


def test_a_second_process_loads_the_graph_without_compiling(tmp_path):
    cold = _run(tmp_path)
    assert (cold["hits"], cold["misses"], cold["compiled"], cold["fallbacks"]) == (0, 1, 1, 0)
    assert len(_entries(tmp_path)) == 1
    names = sorted(p.name for p in _entries(tmp_path)[0].iterdir())
    assert names == ["entry.json", "kernels.so", "wrapper.py"]
    warm = _run(tmp_path, CHECK_NO_COMPILE="1")
    assert (warm["hits"], warm["misses"], warm["compiled"]) == (1, 0, 1), warm
    assert warm["kernels"] == cold["kernels"] and warm["out"] == cold["out"]


def test_four_processes_compiling_at_once_share_one_cache(tmp_path):
    children = [subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=_env(tmp_path))
                for _ in range(4)]
    results = []
    for child in children:
        out, err = child.communicate(timeout=600)
        assert child.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r["fallbacks"] == 0 and r["out"] == results[0]["out"] for r in results)
    assert len(_entries(tmp_path)) == 1  # one whole entry; no torn or extra copies
    assert list((tmp_path / "v1" / "tmp").iterdir()) == []
    warm = _run(tmp_path, CHECK_NO_COMPILE="1")
    assert warm["hits"] == 1 and warm["out"] == results[0]["out"]


@pytest.mark.parametrize("damaged", ["kernels.so", "wrapper.py", "entry.json"])
def test_a_corrupt_entry_is_compiled_again(tmp_path, damaged):
    cold = _run(tmp_path)
    (entry,) = _entries(tmp_path)
    path = entry / damaged
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data[: len(data) - 7]))
    again = _run(tmp_path)
    assert (again["hits"], again["misses"], again["corrupt"]) == (0, 1, 1), again
    assert again["out"] == cold["out"] and again["fallbacks"] == 0
    assert _run(tmp_path, CHECK_NO_COMPILE="1")["hits"] == 1  # stored whole again


def test_graphs_differing_only_in_a_constant_get_their_own_entries(tmp_path, monkeypatch):
    """The worst a cache can do is run another graph's code: a graph's constants are
    part of its key."""
    monkeypatch.setenv("DYNO_CACHE", "1")
    monkeypatch.setenv("DYNO_CACHE_DIR", str(tmp_path))
    x = torch.randn(4, 3)
    for values in ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [1.0, 2.0, 3.0]):
        torch._dynamo.reset()

        def fn(t):  # (a tensor made inside: a constant of the graph, not an input)
            return (t * torch.tensor(values)).exp()

        with torch.no_grad():
            torch.testing.assert_close(torch.compile(fn, backend="mlir")(x), fn(x))
    stats = dyno.stats()
    assert (stats["cache_misses"], stats["cache_hits"]) == (2, 1), stats
    assert len(_entries(tmp_path)) == 2


def test_the_cache_stays_under_its_size_and_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNO_CACHE", "1")
    monkeypatch.setenv("DYNO_CACHE_DIR", str(tmp_path / "small"))
    monkeypatch.setenv("DYNO_CACHE_SIZE_MB", "0.000001")  # room for no entry but the newest
    for scale in (2.0, 3.0, 3.0, 2.0):
        torch._dynamo.reset()
        with torch.no_grad():
            torch.compile(lambda t: (t * scale).tanh(), backend="mlir")(torch.randn(8))
        assert len(_entries(tmp_path / "small")) == 1
    stats = dyno.stats()  # 3.0 was still there the second time; 2.0 was not
    assert (stats["cache_misses"], stats["cache_hits"]) == (3, 1), stats

    monkeypatch.setenv("DYNO_CACHE_DIR", str(tmp_path / "off"))
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(lambda t: t.sin() * 2, backend="mlir",
                      options={"cache": False})(torch.randn(8))
    monkeypatch.setenv("DYNO_CACHE", "0")
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(lambda t: t.cos() * 2, backend="mlir")(torch.randn(8))
    assert not (tmp_path / "off").exists()


def test_a_triton_graph_is_loaded_without_compiling(tmp_path):
    """The Triton target's entry holds the kernels' Triton source and the wrapper: a warm
    process runs neither Dyno's pipelines nor its Triton translation."""
    cold = _run(tmp_path, TARGET="triton")
    assert (cold["hits"], cold["misses"], cold["compiled"], cold["fallbacks"]) == (0, 1, 1, 0)
    (entry,) = _entries(tmp_path)
    assert sorted(p.name for p in entry.iterdir()) == ["entry.json", "kernels.py",
                                                       "wrapper.py"]
    warm = _run(tmp_path, TARGET="triton", CHECK_NO_COMPILE="1")
    assert (warm["hits"], warm["misses"], warm["compiled"]) == (1, 0, 1), warm
    assert warm["kernels"] == cold["kernels"] and warm["out"] == cold["out"]
    # The CPU target's graph is another entry.
    assert _run(tmp_path)["misses"] == 1 and len(_entries(tmp_path)) == 2


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_cache_artifacts_start_another_cache_warm(tmp_path, target):
    """Compile where the cache is A, bundle what was compiled; install the bundle into
    an empty cache B: the graph is loaded there without compiling, with the same results."""
    artifacts = tmp_path / "artifacts.tar.gz"
    cold = _run(tmp_path / "a", TARGET=target, SAVE_ARTIFACTS=str(artifacts))
    assert cold["misses"] == 1
    warm = _run(tmp_path / "b", TARGET=target, LOAD_ARTIFACTS=str(artifacts),
                CHECK_NO_COMPILE="1")
    assert (warm["hits"], warm["misses"], warm["compiled"]) == (1, 0, 1), warm
    assert warm["out"] == cold["out"]
    assert [p.name for p in _entries(tmp_path / "b")] == \
        [p.name for p in _entries(tmp_path / "a")]


def test_damaged_or_malformed_cache_artifacts_are_refused_whole(tmp_path, monkeypatch):
    """An archive whose entries are not whole (a file that does not match its digest, a
    file the entry does not list) or that holds anything but entries and autotuning
    results is refused, and nothing of it is installed."""
    import io
    import tarfile

    monkeypatch.setenv("DYNO_CACHE", "1")
    monkeypatch.setenv("DYNO_CACHE_DIR", str(tmp_path / "cache"))

    def archive(members):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return buffer.getvalue()

    import hashlib

    key = "ab" * 32
    wrapper, kernels = b"def call(args):\n    return []\n", b"# kernels\n"
    meta = {"target": "triton", "kernels": 0, "extern_calls": 0, "library_calls": [],
            "files": {"wrapper.py": hashlib.sha256(wrapper).hexdigest(),
                      "kernels.py": hashlib.sha256(kernels).hexdigest()}}
    whole = {f"{key}/entry.json": json.dumps(meta).encode(), f"{key}/wrapper.py": wrapper,
             f"{key}/kernels.py": kernels}
    assert dyno.load_cache_artifacts(archive(whole)) == 1
    assert dyno.load_cache_artifacts(archive(whole)) == 0  # already there
    other = "cd" * 32
    tampered = {name.replace(key, other): data for name, data in whole.items()}
    tampered[f"{other}/wrapper.py"] = wrapper + b"import os\n"
    with pytest.raises(ValueError, match="digests"):
        dyno.load_cache_artifacts(archive(tampered))
    # A whole entry beside a damaged one: neither is installed.
    third = "ef" * 32
    both = dict(tampered, **{name.replace(key, third): data for name, data in whole.items()})
    with pytest.raises(ValueError, match="digests"):
        dyno.load_cache_artifacts(archive(both))
    extra = dict({name.replace(key, third): data for name, data in whole.items()},
                 **{f"{third}/kernels.so": b"not listed"})
    with pytest.raises(ValueError, match="not whole"):
        dyno.load_cache_artifacts(archive(extra))
    for bad in ({f"../{key}/wrapper.py": wrapper}, {f"{key}/evil.so": b"x"},
                {"/etc/passwd": b"x"}):
        with pytest.raises(ValueError, match="not a Dyno cache artifact"):
            dyno.load_cache_artifacts(archive(bad))
    assert sorted(p.name for p in _entries(tmp_path / "cache")) == [key]
    # Triton autotuning results travel too (per kernel and GPU model); a file under
    # autotune/ that is not a result is refused.
    result = json.dumps({"kernel": "kernel_0", "config": {"XBLOCK": 128}}).encode()
    assert dyno.load_cache_artifacts(archive({f"autotune/{'0' * 24}.json": result})) == 1
    assert (tmp_path / "cache" / "autotune" / f"{'0' * 24}.json").read_bytes() == result
    with pytest.raises(ValueError, match="not an autotuning result"):
        dyno.load_cache_artifacts(archive({f"autotune/{'1' * 24}.json": b"[1]"}))
    # What a process tuned is bundled by save_cache_artifacts.
    from dyno.targets.triton.runtime import autotune

    monkeypatch.setattr(autotune, "autotune_results_used",
                        {str(tmp_path / "cache" / "autotune" / f"{'0' * 24}.json")})
    with tarfile.open(fileobj=io.BytesIO(dyno.save_cache_artifacts())) as saved:
        assert saved.getnames() == [f"autotune/{'0' * 24}.json"]


# Graphs without kernels: a library matmul alone, and exp of a tensor with no elements.
_CHILD_WITHOUT_KERNELS = r'''
import json, os, torch
import dyno, dyno.lowering.graph_lowering
if os.environ.get("CHECK_NO_COMPILE"):
    def refuse(*args, **kwargs):
        raise RuntimeError("compiled although the cache holds this graph")
    dyno.lowering.graph_lowering.run_dyno_passes = refuse
a, b = torch.arange(64.).reshape(8, 8), torch.eye(8)
product = torch.compile(lambda a, b: a @ b, backend="mlir")(a, b)
empty = torch.compile(lambda x: torch.exp(x) * 2, backend="mlir")(torch.randn(1, 0, 3))
assert torch.equal(product, a) and empty.shape == (1, 0, 3)
stats = dyno.stats()
print(json.dumps({"hits": stats.get("cache_hits", 0), "kernels": stats["kernels"],
                  "compiled": stats["compiled_graphs"], "fallbacks": stats["fallback_graphs"]}))
'''


def test_graphs_without_kernels_are_stored_and_loaded(tmp_path):
    # Regression: storing such a graph aborted the process (MLIR's JIT object cache
    # asserts that it holds exactly one object; a module without kernels emits none).
    def run(**extra):
        done = subprocess.run([sys.executable, "-c", _CHILD_WITHOUT_KERNELS],
                              capture_output=True, text=True, timeout=600,
                              env=_env(tmp_path, **extra))
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run()
    assert first == {"hits": 0, "kernels": 0, "compiled": 2, "fallbacks": 0}, first
    assert len(_entries(tmp_path)) == 2
    second = run(CHECK_NO_COMPILE="1")
    assert second == {"hits": 2, "kernels": 0, "compiled": 2, "fallbacks": 0}, second


@pytest.mark.parametrize("threads", ["1", "2"])
def test_graphs_sharing_kernels_are_stored_whole(tmp_path, threads):
    """The later layers' graphs take their kernels from the first layer's compile; their
    entries link those kernels in, so a second process loads every graph alone. Under two
    JIT threads the first layer's kernels are compiled in two parts, the units the later
    graphs take them from."""
    first = _run(tmp_path / "cache", _SHARING_CHILD, DYNO_JIT_THREADS=threads,
                 MIN_PART_OPERATIONS="1")
    assert first["compiled"] == 4 and first["fallbacks"] == 0, first
    assert (first["parts"] >= 2) == (threads == "2"), first
    assert first["units"] and all(first["units"]), first  # each runs from a stored library
    # (The third layer's graph is the second's: a hit already in this process.)
    assert first["shared"] >= 1, first
    second = _run(tmp_path / "cache", _SHARING_CHILD, CHECK_NO_COMPILE="1")
    assert second["hits"] == 4 and second["fallbacks"] == 0, second
    assert second["out"] == first["out"]


def test_a_graph_compiled_in_parts_at_once_is_stored_whole(tmp_path):
    """Under two JIT threads a graph's kernels compile in two parts at once
    (jit._split_for_threads, dyno._mlir_libs._dynoParallelJit) to the same results as in
    one part; its entry links both parts' code, so a second process loads it alone."""
    first = _run(tmp_path / "cache", _PARTS_CHILD, DYNO_JIT_THREADS="2", MIN_PART_OPERATIONS="1")
    assert first["parts"] == 2 and first["compiled"] == 1 and first["fallbacks"] == 0, first
    assert first["units"] == [True, True], first  # both parts run from the stored library
    second = _run(tmp_path / "cache", _PARTS_CHILD, DYNO_JIT_THREADS="2",
                  CHECK_NO_COMPILE="1")
    assert second["hits"] == 1 and second["fallbacks"] == 0, second
    one_part = _run(tmp_path / "other", _PARTS_CHILD, DYNO_JIT_THREADS="1",
                    MIN_PART_OPERATIONS="1")
    assert one_part["parts"] == 0 and one_part["fallbacks"] == 0, one_part
    assert second["out"] == first["out"] == one_part["out"]
