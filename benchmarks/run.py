"""Times eager PyTorch, Inductor and Dyno on the CPU suite in one run.

    python benchmarks/run.py [--models a,b] [--rounds N] [--no-inductor] [--dynamic]
                             [--dtype bfloat16] [--zoo] [--freezing] [--out FILE]

`--dynamic` compiles with `dynamic=True` (Inductor and Dyno alike): code for symbolic
sizes, as a model whose batch size changes gets. `--dtype bfloat16` (or float16) runs
every model with its parameters and inputs in that dtype; `--zoo` adds the transformers
zoo (e2e/zoo.py, "cpu" size). `--freezing` compiles with parameters frozen, for
Inductor (`torch._inductor.config.freezing`) and Dyno (`options={"freezing": True}`) alike:
both then keep GEMM weights packed for oneDNN.

Each backend runs in blocks (warm-up, then `--iters` calls) and the blocks are repeated
`--rounds` times, in an order of its own each round, all orders in turn
(report.round_order: 6 for eager, Inductor and Dyno, so use a multiple of 6); the
reported time is the median over all timed calls.
Every compiled result is checked against eager before timing.
"""
import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import torch
import torch._inductor.config

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
from models import suite  # noqa: E402
import plot_results  # noqa: E402
import zoo  # noqa: E402
from report import geomean, note, progress, publish, round_order, time_calls  # noqa: E402

import dyno  # noqa: E402


def cpu_model() -> str:
    """The CPU's model name (ratios hold for the CPU they were measured on)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()} ({platform.machine()})"
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="")
    parser.add_argument("--rounds", type=int, default=6)  # every order of 3 backends once
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--dynamic", action="store_true")
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--zoo", action="store_true",
                        help="add the transformers zoo and its architecture families")
    parser.add_argument("--freezing", action="store_true",
                        help="parameters frozen, for Inductor and Dyno alike")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    dynamic = True if args.dynamic else None
    wanted = set(filter(None, args.models.split(",")))
    if args.freezing:
        torch._inductor.config.freezing = True
    dyno_options = {"freezing": True} if args.freezing else None

    torch.manual_seed(0)
    rows = []
    models = suite()
    if args.zoo:
        models += [(name, *zoo.build(name, size="cpu")) for name in [*zoo.ZOO, *zoo.FAMILIES]]
    models = [entry for entry in models if not wanted or entry[0] in wanted]
    for number, (name, model, inputs) in enumerate(progress(models, "benchmark"), 1):
        model = model.eval().to(dtype)
        inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
        backends = {"eager": model}
        with torch.no_grad():
            if not args.no_inductor:
                backends["inductor"] = torch.compile(model, backend="inductor", dynamic=dynamic)
            dyno.reset_stats()
            backends["dyno"] = torch.compile(model, backend="mlir", dynamic=dynamic,
                                             options=dyno_options)
            expected = model(*inputs)
            compile_seconds = {}
            for label, fn in backends.items():
                start = time.perf_counter()
                result = fn(*inputs)
                compile_seconds[label] = time.perf_counter() - start
                if dtype == torch.float32:
                    torch.testing.assert_close(result, expected, rtol=1e-3, atol=1e-4)
                else:  # relative L2: a few ulps of an 8- or 11-bit mantissa
                    error = ((result.double() - expected.double()).norm()
                             / expected.double().norm()).item()
                    assert error < 3e-2, f"{name} ({label}): relative error {error:.2e}"
            note(f"[{number}/{len(models)}] {name}: first call (compile and run) "
                 + ", ".join(f"{label} {seconds:.2f} s" for label, seconds
                             in compile_seconds.items()) + "; timing...")
            stats = dyno.stats()
            if stats["fallback_graphs"] or stats["runtime_fallbacks"]:
                note(f"warning: {name}: Dyno fell back: {stats['fallback_reasons']}")
            if args.dynamic and not stats.get("dynamic_graphs"):
                note(f"warning: {name}: Dyno compiled no graph with symbolic sizes")
            samples = {label: [] for label in backends}
            for label, fn in backends.items():
                time_calls(fn, inputs, 5)
            for round_index in range(args.rounds):
                # Each round in an order of its own, all orders in turn (round_order): a
                # backend timed right after another ran slower (a null A/B of one Dyno
                # graph against itself gave 0.94-0.98x in a fixed order, 1.000x
                # shuffled), and in a fixed order Dyno always came after Inductor.
                for label in round_order(backends, round_index):
                    samples[label] += time_calls(backends[label], inputs, args.iters)
        medians = {label: statistics.median(s) for label, s in samples.items()}
        rows.append((name, medians, stats, compile_seconds))
        torch._dynamo.reset()

    labels = ["eager"] + ([] if args.no_inductor else ["inductor"]) + ["dyno"]
    lines = [
        f"# Dyno CPU benchmark, {datetime.date.today()}",
        "",
        f"Machine: {cpu_model()}, {torch.get_num_threads()} threads; "
        f"torch {torch.__version__}; Python {platform.python_version()}.",
        f"Command: python benchmarks/run.py --rounds {args.rounds} --iters {args.iters}"
        + (f" --dtype {args.dtype}" if args.dtype != "float32" else "")
        + (" --zoo" if args.zoo else "")
        + (" --freezing (parameters frozen: Inductor and Dyno)" if args.freezing else "")
        + (" --dynamic (dynamic=True: code for symbolic sizes)" if args.dynamic else ""),
        f"Parameters and inputs in {args.dtype}.",
        "Times are medians per call; speedups are eager time / backend time, from one run.",
        "First calls include the compile (Inductor's and Dyno's on-disk caches as this machine",
        "has them; benchmarks/cold_compile.py measures cold and warm starts in fresh processes).",
        "",
        "| model | " + " | ".join(f"{l} (us)" for l in labels) + " | "
        + " | ".join(f"{l} speedup" for l in labels[1:])
        + (" | dyno / inductor" if "inductor" in labels else "")
        + " | dyno kernels | dyno fallbacks | "
        + " | ".join(f"{l} first call (s)" for l in labels[1:]) + " |",
        "|---" * (1 + 2 * len(labels) - 1 + ("inductor" in labels) + 2 + len(labels) - 1)
        + "|",
    ]
    # Dyno over Inductor per model (above 1 Dyno is faster), timed in the same rounds.
    speedups = {label: [] for label in labels[1:]}
    if "inductor" in labels:
        speedups["dyno / inductor"] = []
    for name, medians, stats, compile_seconds in rows:
        cells = [f"{medians[l] * 1e6:.0f}" for l in labels]
        ratios = []
        for label in labels[1:]:
            ratio = medians["eager"] / medians[label]
            speedups[label].append(ratio)
            ratios.append(f"{ratio:.2f}x")
        if "inductor" in labels:
            ratio = medians["inductor"] / medians["dyno"]
            speedups["dyno / inductor"].append(ratio)
            ratios.append(f"{ratio:.2f}")
        lines.append(f"| {name} | " + " | ".join(cells + ratios)
                     + f" | {stats['kernels']} | {stats['fallback_graphs']} | "
                     + " | ".join(f"{compile_seconds[l]:.2f}" for l in labels[1:]) + " |")
    geomeans = [f"{geomean(v):.2f}" + ("" if label == "dyno / inductor" else "x")
                for label, v in speedups.items()]
    lines.append("| **geomean** | " + " | ".join([""] * len(labels) + geomeans) + " | | |"
                 + " |" * (len(labels) - 1))
    publish(lines, args.out)
    if args.out:  # the speedups as a PNG beside the table
        note("plot: " + plot_results.plot(args.out))


if __name__ == "__main__":
    main()
