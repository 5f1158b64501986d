"""Paired A/B of two host wrappers of the same compiled CPU graph: the wrapper generator
(python/dyno/targets/wrapper.py, memory_planning.py) of another checkout against this
one's, on the same kernels, interleaved in one process.

    python benchmarks/ab_wrapper.py --old REV --models swin,gpt2
        [--dtype bfloat16] [--rounds 15] [--iters 20]

REV: the other commit (its Python; the kernels come from this checkout's dyno-opt). Its
package is made under /tmp/dyno-wrapper-ab-REV: a git worktree of REV and a copy of
build/python_packages/dyno whose links into python/ point into that worktree (kept for
later runs; `git worktree remove --force /tmp/dyno-wrapper-ab-REV/worktree` when done).

For each model (a zoo model at "cpu" size, or one of e2e/models.py's suite): a child
process running the old package compiles it and writes the old wrapper's source
(DYNO_DEBUG_DIR); this process compiles it with its own package and binds both sources
to the one set of JIT-compiled kernels, so that only the wrapper differs (the old
wrapper may call only kernels this build made). The compiled model, whose graph runs
either wrapper, is then timed through torch.compile's whole call in blocks beside
eager and Inductor, in an order of its own each round (report.round_order). Medians per call; results
checked against eager first. Wrappers of the same text give a null A/B (the noise).
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch

E2E = os.path.join(os.path.dirname(__file__), "..", "e2e")
sys.path.insert(0, E2E)  # zoo, models
sys.path.insert(0, os.path.dirname(__file__))  # report
import zoo  # noqa: E402
from report import round_order  # noqa: E402

_CHILD = """
import os, sys, torch
sys.path.insert(0, {e2e!r})
import zoo
model, inputs = zoo.cpu_benchmark_model({name!r}, getattr(torch, {dtype!r}))
with torch.no_grad():
    torch.compile(model, backend="mlir")(*inputs)
"""


def old_package(revision: str) -> str:
    """A folder holding the dyno package of `revision`'s Python (made once)."""
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", revision],
                            check=True, capture_output=True, text=True).stdout.strip()
    folder = os.path.join(tempfile.gettempdir(), f"dyno-wrapper-ab-{commit}")
    package, worktree = os.path.join(folder, "package"), os.path.join(folder, "worktree")
    if not os.path.isdir(package):
        subprocess.run(["git", "-C", root, "worktree", "add", "-f", "--detach", worktree,
                        commit], check=True, capture_output=True)
        shutil.copytree(os.path.join(root, "build", "python_packages", "dyno"), package,
                        symlinks=True)
        python = os.path.join(root, "python") + os.sep
        for directory, _, files in os.walk(package):
            for file in files:
                path = os.path.join(directory, file)
                target = os.readlink(path) if os.path.islink(path) else ""
                if target.startswith(python):
                    os.remove(path)
                    os.symlink(os.path.join(worktree, "python", target[len(python):]), path)
    return package


def old_wrappers(name: str, dtype: str, old_package: str) -> list:
    """The wrapper sources the old package generates for `name`, one per graph."""
    with tempfile.TemporaryDirectory() as directory:
        env = dict(os.environ, DYNO_CACHE="0", DYNO_DEBUG_DIR=directory,
                   PYTHONPATH=old_package)
        subprocess.run([sys.executable, "-c", _CHILD.format(e2e=E2E, name=name,
                                                            dtype=dtype)],
                       env=env, check=True)
        paths = sorted(glob.glob(f"{directory}/graph_*/05-wrapper.py"),
                       key=lambda p: int(re.search(r"graph_(\d+)", p).group(1)))
        return [open(path).read() for path in paths]


def _kernel_names(source: str) -> set:
    return set(re.findall(r"_kernels\['(\w+)'\]", source))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", required=True, help="the other commit")
    parser.add_argument("--models", required=True)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    os.environ["DYNO_CACHE"] = "0"
    import dyno  # noqa: F401
    from dyno.targets import cpu, wrapper

    print(f"{torch.get_num_threads()} threads, {args.dtype}; us per call (medians of "
          f"{args.rounds} rounds of {args.iters} calls)\n")
    print("| model | eager | Inductor | Dyno old wrapper | Dyno new wrapper | old/new | "
          "new Dyno/Inductor | lines old -> new |\n|---|---|---|---|---|---|---|---|")
    package = old_package(args.old)
    for name in args.models.split(","):
        old_sources = old_wrappers(name, args.dtype, package)
        chosen = {"source": "new"}
        loaded = []
        lines = {"old": 0, "new": 0}

        def load(self, artifact, graph_id, device=None, options=None):
            index = len(loaded)
            calls = {}
            for which, source in (("new", artifact.wrapper_source),
                                  ("old", old_sources[index])):
                if _kernel_names(source) - set(artifact.signatures):
                    raise SystemExit(f"{name}: the old wrapper calls kernels this build "
                                     "did not make (the kernels differ)")
                namespace = wrapper.wrapper_globals(artifact.kernels, cpu.jit.sync_threads)
                exec(compile(source, f"<{which} wrapper {graph_id}>", "exec"), namespace)
                calls[which] = namespace["call"]
                lines[which] += source.count("\n")
            loaded.append(calls)
            return lambda call_args: calls[chosen["source"]](call_args)

        original = cpu.CpuTarget.load
        cpu.CpuTarget.load = load
        try:
            model, inputs = zoo.cpu_benchmark_model(name, getattr(torch, args.dtype))
            torch._dynamo.reset()
            compiled = torch.compile(model, backend="mlir")
            inductor = torch.compile(model, backend="inductor")
            with torch.no_grad():
                expected = model(*inputs)
                for which in ("old", "new"):
                    chosen["source"] = which
                    got = compiled(*inputs)
                    _check(expected, got, name, which)
                runs = {"old": [], "new": [], "eager": [], "inductor": []}
                functions = {"eager": model, "inductor": inductor}
                for _ in range(3):
                    inductor(*inputs)
                for round_index in range(args.rounds):
                    # In an order of its own each round: a variant timed right after
                    # eager's or Inductor's calls ran slower (2-12%, a null A/B showed
                    # it), so no variant may always follow the same one.
                    for which in round_order(runs, round_index):
                        if which in ("old", "new"):
                            chosen["source"] = which
                            function = compiled
                        else:
                            function = functions[which]
                        start = time.perf_counter()
                        for _ in range(args.iters):
                            function(*inputs)
                        runs[which].append((time.perf_counter() - start) / args.iters * 1e6)
        finally:
            cpu.CpuTarget.load = original
        m = {k: statistics.median(v) for k, v in runs.items()}
        print(f"| {name} | {m['eager']:.0f} | {m['inductor']:.0f} | {m['old']:.0f} | "
              f"{m['new']:.0f} | {m['old'] / m['new']:.3f}x | "
              f"{m['inductor'] / m['new']:.2f} | {lines['old']} -> {lines['new']} |",
              flush=True)


def _check(expected, got, name, which):
    def tensors(value):
        if isinstance(value, torch.Tensor):
            return [value]
        if hasattr(value, "to_tuple"):
            value = value.to_tuple()
        if isinstance(value, (tuple, list)):
            return [t for v in value for t in tensors(v)]
        return []

    for e, g in zip(tensors(expected), tensors(got)):
        tolerance = 2e-2 if e.dtype in (torch.bfloat16, torch.float16) else 1e-3
        if not torch.allclose(e.float(), g.float(), atol=tolerance, rtol=tolerance):
            raise SystemExit(f"{name} ({which} wrapper): differs from eager by "
                             f"{(e.float() - g.float()).abs().max().item():.3g}")


if __name__ == "__main__":
    main()
