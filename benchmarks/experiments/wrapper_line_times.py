"""Where a Dyno-compiled CPU call's time goes, line by line of its wrapper, beside the time
before the wrapper runs (Dynamo's frame, AOTAutograd's runtime wrapper) and after it.

    python benchmarks/experiments/wrapper_line_times.py MODEL [--dtype bfloat16] [--calls 300]
                                            [--top 40] [--inductor]

MODEL: a zoo model ("cpu" size) or one of e2e/models.py's suite. The wrapper's source is
compiled with a clock reading before each statement of `_planned_call` (the compile
cache is off, so the graph is compiled here); each line's time is the median, over the
calls, of the time to the next reading. A line's time includes what it starts: a kernel
launch runs the kernel, `_conv2d` the library. Lines are grouped by kind (kernel
launches, matmuls, library calls, views, `del`, ...) and the slowest are listed. The
torch.profiler's "Torch-Compiled Region" self time overstates the wrapper's own cost
(the profiler's bookkeeping per recorded op lands there); these are wall-clock times
without it. `--inductor` also times Inductor's call of the same model and splits it
the same way at its compiled graph's entry and exit (`CompiledFxGraph.__call__`), and
its wrapper's `call` line by line (the generated module compiled again with the same
clock readings; its kernels come from Inductor's caches).
"""
import argparse
import collections
import os
import re
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo, models
import zoo  # noqa: E402

_KINDS = [("kernel launch", "_kernels["), ("matmul", "_mm("), ("matmul", "_addmm("),
          ("matmul", "_bmm("), ("matmul", "_baddbmm("), ("matmul", "_linear"),
          ("matmul", "_packed.linear"), ("library call", "_library_call("),
          ("convolution", "_conv2d("), ("convolution", "_packed.conv2d("),
          ("workspace", "_ws["), ("view", "_view("), ("contiguous", ".contiguous()"),
          # Inductor's wrapper
          ("matmul", "extern_kernels.mm("), ("matmul", "extern_kernels.addmm("),
          ("matmul", "extern_kernels.bmm("), ("matmul", "extern_kernels.baddbmm("),
          ("convolution", "extern_kernels.convolution("), ("library call", "torch.ops."),
          ("kernel launch", "cpp_fused_"), ("allocation", "empty_strided_cpu("),
          ("allocation", "_empty("), ("input check", "assert_size_stride("),
          ("view", "reinterpret_tensor(")]
_VIEW = re.compile(r"\.(permute|mT|T|t\(|reshape|expand|transpose|unsqueeze|squeeze)")


def _kind(line: str) -> str:
    if line.startswith("del "):
        return "del"
    for kind, marker in _KINDS:
        if marker in line:
            return kind
    return "view" if _VIEW.search(line) else "other"


def instrumented(source: str, header: str = "def _planned_call", indent: int = 4):
    """`source` with `_T.append(_clock())` before each statement of the function whose
    `def` line starts with `header` (its statements indented by `indent`; comments are
    not statements), and the statements in order."""
    lines, statements, inside = [], [], False
    body = " " * indent
    for line in source.splitlines():
        if line.lstrip().startswith(header):
            inside = True
        elif inside and line.strip() and not line.startswith(body):
            inside = False  # the function ended
        elif inside and line.startswith(body) and not line.startswith(body + " ") \
                and not line.strip().startswith("#"):
            lines.append(body + "_T.append(_clock())")
            statements.append(line.strip())
        lines.append(line)
    return "\n".join(lines), statements


def timed_calls(compiled, inputs, calls: int, stamps: list):
    """Per call: its total time, the time to the first of `stamps` (read inside the call)
    and from the last, and the gaps between the stamps (ns)."""
    runs = []
    with torch.no_grad():
        for _ in range(20):
            compiled(*inputs)
        for _ in range(calls):
            del stamps[:]
            start = time.perf_counter_ns()
            compiled(*inputs)
            end = time.perf_counter_ns()
            runs.append((end - start, stamps[0] - start, end - stamps[-1],
                         [b - a for a, b in zip(stamps, stamps[1:])]))
    return runs


def _median_us(values) -> float:
    return statistics.median(values) / 1e3


def dyno_lines(model, inputs, calls: int):
    os.environ["DYNO_CACHE"] = "0"
    import dyno  # noqa: F401  (registers the backend)
    from dyno.targets import cpu, wrapper

    stamps, statements = [], []

    def load(self, artifact, graph_id, device=None, options=None):
        namespace = wrapper.wrapper_globals(artifact.kernels, cpu.jit.sync_threads)
        source, lines = instrumented(artifact.wrapper_source)
        statements.append(lines)
        namespace.update(_T=stamps, _clock=time.perf_counter_ns)
        exec(compile(source, f"<dyno graph {graph_id}>", "exec"), namespace)
        return namespace["call"]

    cpu.CpuTarget.load = load
    runs = timed_calls(torch.compile(model, backend="mlir"), inputs, calls, stamps)
    if len(statements) != 1:
        print(f"note: {len(statements)} graphs; lines of the first only", file=sys.stderr)
    lines = statements[0]
    # (The last statement, the return, ends in the time "after" the wrapper.)
    per_line = [_median_us([gaps[i] for *_, gaps in runs]) for i in range(len(runs[0][3]))]
    return (_median_us([run[0] for run in runs]), _median_us([run[1] for run in runs]),
            _median_us([run[2] for run in runs]), list(zip(per_line, lines)))


def inductor_lines(model, inputs, calls: int):
    """As dyno_lines, for Inductor's compiled graph: its wrapper's `call` (the generated
    module's Runner.call) timed line by line, the module compiled again with clock
    readings (its kernels come from Inductor's caches)."""
    from torch._inductor import output_code

    stamps, statements, graphs = [], [], []
    original = output_code.CompiledFxGraph.__call__

    def call(self, args):
        if self not in graphs:
            graphs.append(self)
            source, lines = instrumented(self.source_code, "def call(self, args)", 8)
            statements.append(lines)
            namespace = {"_T": stamps, "_clock": time.perf_counter_ns,
                         "__name__": "inductor_graph_timed"}
            exec(compile(source, "<inductor graph>", "exec"), namespace)
            self.current_callable = namespace["call"]
        return original(self, args)

    output_code.CompiledFxGraph.__call__ = call
    try:
        runs = timed_calls(torch.compile(model, backend="inductor"), inputs, calls, stamps)
    finally:
        output_code.CompiledFxGraph.__call__ = original
    if len(statements) != 1:
        print(f"note: {len(statements)} Inductor graphs; lines of the first only",
              file=sys.stderr)
    per_line = [_median_us([gaps[i] for *_, gaps in runs]) for i in range(len(runs[0][3]))]
    return (_median_us([run[0] for run in runs]), _median_us([run[1] for run in runs]),
            _median_us([run[2] for run in runs]), list(zip(per_line, statements[0])))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--inductor", action="store_true")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    model, inputs = zoo.cpu_benchmark_model(args.model, dtype)
    total, before, after, lines = dyno_lines(model, inputs, args.calls)
    print(f"{args.model} {args.dtype}, {torch.get_num_threads()} threads: Dyno's call "
          f"{total:.1f} us = {before:.1f} before its wrapper + {sum(t for t, _ in lines):.1f} "
          f"in it + {after:.1f} after")
    report("Dyno", lines, args.top)
    if args.inductor:
        total, before, after, lines = inductor_lines(model, inputs, args.calls)
        print(f"\nInductor's call {total:.1f} us = {before:.1f} before its graph + "
              f"{sum(t for t, _ in lines):.1f} in it + {after:.1f} after")
        report("Inductor", lines, args.top)


def report(who: str, lines, top: int) -> None:
    kinds, counts = collections.Counter(), collections.Counter()
    for seconds, line in lines:
        kinds[_kind(line)] += seconds
        counts[_kind(line)] += 1
    print(f"\n{who}: | kind | us | lines |\n|---|---|---|")
    for kind, seconds in kinds.most_common():
        print(f"| {kind} | {seconds:.1f} | {counts[kind]} |")
    print(f"\n{who}: slowest {top} lines (median us):")
    for seconds, line in sorted(lines, key=lambda entry: -entry[0])[:top]:
        print(f"{seconds:8.1f}  {line[:140]}")


if __name__ == "__main__":
    main()
