"""LLVM compiles of a graph's kernels at once (issue 23): the JIT stage of zoo models'
graphs (CPU target, fp32, benchmark sizes) in one part against split into parts compiled
on several threads (`DYNO_JIT_THREADS`, cpu.jit._split_for_threads). Each model is
compiled once to capture its graphs' LLVM-dialect kernels; then, in the same process,
each graph's kernels are JIT-compiled again `--runs` times per thread count, alternating,
with kernel sharing across graphs off (each compile makes all its kernels). Prints the
median JIT seconds per model (all its graphs; parsing the captured text included, the
same in both) and the ratio.

    python benchmarks/experiments/parallel_jit.py [--models gpt2,llama,bert,vit] [--threads 2]
                                      [--runs 5] [--out FILE]
"""
import argparse
import gc
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo, models
import zoo  # noqa: E402

os.environ["DYNO_CACHE"] = "0"
from dyno.targets.cpu import jit  # noqa: E402


class _Nothing(dict):
    """A sharing registry that finds nothing and keeps nothing."""

    def __setitem__(self, key, value):
        pass


def capture(name):
    """[(LLVM-dialect text, kernel signatures)] of the graphs `name` compiles into."""
    captured = []
    compile_kernels = jit.CpuKernels

    def capturing(lowered, signatures):
        captured.append((str(lowered), dict(signatures)))
        return compile_kernels(lowered, signatures)

    jit.CpuKernels = capturing
    try:
        torch._dynamo.reset()
        model, inputs = zoo.build(name, size="cpu")
        with torch.no_grad():
            torch.compile(model.eval(), backend="mlir", options={"target": "cpu"})(*inputs)
    finally:
        jit.CpuKernels = compile_kernels
    return [graph for graph in captured if graph[1]]


def jit_seconds(graphs, threads):
    os.environ["DYNO_JIT_THREADS"] = str(threads)
    gc.collect()
    start = time.perf_counter()
    compiled = [jit.CpuKernels(text, signatures) for text, signatures in graphs]
    spent = time.perf_counter() - start
    parts = sum(kernels.parts for kernels in compiled)
    del compiled
    return spent, parts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="gpt2,llama,bert,vit")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.threads < 2:
        parser.error("--threads: at least 2 (one thread is the baseline)")
    rows = [f"| model | graphs | kernels | parts | JIT s, 1 thread | JIT s, {args.threads} "
            "threads | ratio |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    print(rows[0], flush=True)
    for name in args.models.split(","):
        graphs = capture(name)
        jit._units_by_kernel = _Nothing()
        times = {1: [], args.threads: []}
        parts = 0
        for _ in range(args.runs):
            for threads in times:
                spent, made = jit_seconds(graphs, threads)
                times[threads].append(spent)
                parts = made if threads > 1 else parts
        jit._units_by_kernel = __import__("weakref").WeakValueDictionary()
        one, many = (statistics.median(times[t]) for t in times)
        kernels = sum(len(signatures) for _, signatures in graphs)
        rows.append(f"| {name} | {len(graphs)} | {kernels} | {parts} | {one:.3f} | "
                    f"{many:.3f} | {many / one:.2f}x |")
        print(rows[-1], flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
