"""How much of each CPU model's time is library calls (GEMMs, convolutions, attention)
that eager, Inductor and Dyno all make, and so how far any compiler could pull ahead.

    python benchmarks/experiments/cpu_time_split.py [--dtype bfloat16] [--zoo] [--models a,b]
                                        [--rounds 5] [--iters 20]

For each model, in one process: eager, Inductor and Dyno timed in rotating rounds
(medians per call, as benchmarks/run.py), then one torch.profiler run of each compiled
model, whose library ops' share of the profiled time, applied to the median, is that
backend's library time L. What is left, the call's time minus L, is everything a
compiler owns (its kernels, its wrapper, Dynamo's frame). The last column is the bound
on Dyno's speedup over Inductor if Dyno's own part took no time at all: Inductor's time
/ Dyno's L. A bar above that bound is out of reach for a compiler that calls the same
libraries.
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # report
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo, models
from models import suite  # noqa: E402
from report import geomean, note, publish, time_calls  # noqa: E402
import zoo  # noqa: E402

# ATen and oneDNN ops that run a library's compute (MKL, oneDNN, PyTorch's fused
# attention): matched against the profiler's event names.
LIBRARY_OPS = (
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
    "aten::mkldnn_convolution", "aten::convolution", "aten::_convolution",
    "aten::conv2d", "aten::_scaled_dot_product_flash_attention_for_cpu",
    "aten::_scaled_dot_product_attention_math", "aten::_mkl_linear", "aten::linear",
    "mkldnn::_linear_pointwise", "mkldnn::_convolution_pointwise",
    "aten::mkldnn_rnn_layer", "aten::_addmm_activation",
)


def library_share(fn, inputs, calls=20) -> float:
    """The library ops' self time over the wall time of `calls` profiled calls of fn.
    The profiler's own cost per recorded op falls mostly outside the libraries, so the
    share errs low (and the bound below high)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        for _ in range(calls):
            fn(*inputs)
        wall = time.perf_counter() - start
    library = sum(event.self_cpu_time_total for event in prof.key_averages()
                  if event.key in LIBRARY_OPS) * 1e-6
    return min(library / wall, 1.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--zoo", action="store_true", help="add the transformers zoo")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    import dyno  # noqa: F401  (registers the backend)

    dtype = getattr(torch, args.dtype)
    wanted = set(filter(None, args.models.split(",")))
    torch.manual_seed(0)
    models = suite()
    if args.zoo:
        models += [(name, *zoo.build(name, size="cpu")) for name in zoo.ZOO]
    models = [entry for entry in models if not wanted or entry[0] in wanted]
    rows = []
    for name, model, inputs in models:
        model = model.eval().to(dtype)
        inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
        with torch.no_grad():
            backends = {"eager": model,
                        "inductor": torch.compile(model, backend="inductor"),
                        "dyno": torch.compile(model, backend="mlir")}
            for fn in backends.values():
                time_calls(fn, inputs, 5)
            samples = {label: [] for label in backends}
            for _ in range(args.rounds):
                for label, fn in backends.items():
                    samples[label] += time_calls(fn, inputs, args.iters)
            times = {label: statistics.median(s) * 1e6 for label, s in samples.items()}
            library = {label: library_share(fn, inputs) * times[label]
                       for label, fn in backends.items()}
        rows.append((name, times, library))
        note(f"{name}: " + ", ".join(f"{label} {times[label]:.0f} us (library "
                                     f"{library[label]:.0f})" for label in backends))
        torch._dynamo.reset()

    lines = [
        f"Command: python benchmarks/experiments/cpu_time_split.py --rounds {args.rounds} "
        f"--iters {args.iters}" + (f" --dtype {args.dtype}" if args.dtype != "float32" else "")
        + (" --zoo" if args.zoo else "") + (f" --models {args.models}" if args.models else ""),
        f"{torch.get_num_threads()} threads, {args.dtype}. Times in us per call (medians); "
        "L: the library ops' share of a profiled call times the median.", "",
        "| model | eager | inductor | dyno | L eager | L inductor | L dyno | dyno's own part "
        "| inductor's own part | dyno / inductor | bound: inductor / L dyno |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, times, library in rows:
        own = {label: times[label] - library[label] for label in times}
        lines.append(
            f"| {name} | {times['eager']:.0f} | {times['inductor']:.0f} | {times['dyno']:.0f} "
            f"| {library['eager']:.0f} | {library['inductor']:.0f} | {library['dyno']:.0f} "
            f"| {own['dyno']:.0f} | {own['inductor']:.0f} "
            f"| {times['inductor'] / times['dyno']:.2f}x "
            + (f"| {times['inductor'] / library['dyno']:.2f}x |" if library["dyno"] >= 1
               else "| none (no library calls) |"))
    bounded = [times["inductor"] / library["dyno"] for _, times, library in rows
               if library["dyno"] >= 1]
    lines += ["", f"Geomean dyno / inductor: "
              f"{geomean([t['inductor'] / t['dyno'] for _, t, _ in rows]):.2f}x; "
              f"geomean of the bound over the {len(bounded)} models with library calls: "
              f"{geomean(bounded):.2f}x."]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
