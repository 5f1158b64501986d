"""Paired host-bound timing on a GPU machine, without CUDA graphs: exported builds of the
zoo against each other and Inductor's default, in one process.

    python3 benchmarks/gpu_host_ab.py --size bench --dtype bfloat16 --models llama,gpt2 \
        --artifacts .gpu/old,.gpu/new [--rounds 40] [--graphs] [--no-inductor] \
        [--kernels kernels.md] [--sequence sequence.md] [--float64]

Each round times 20 calls of every program (and of Inductor's default) in a shuffled
order; printed: per build the median ms per call and the median over rounds of
Inductor's time / the build's (or the first build's, with --no-inductor), and before
the rounds each program's error from eager, kernels and GPU ms per call
(torch.profiler); `--sequence` writes each program's kernels of one call in launch
order, to compare two programs kernel by kernel. `--graphs` also times each build's CUDA-graph program ("+g"), against
Inductor's mode="reduce-overhead" ("inductor-ro"). Small models are bound by the host's launches, whose
speed drifts within a process on the GPU machines: only rounds taken side by side tell
a change of 10% apart (gpu_zoo.py's do_bench medians of whole runs moved 30% for one
program).
"""

import argparse
import os
import random
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
import zoo  # noqa: E402
from gpu_run import load_runtime, program_weights, relative_error  # noqa: E402
from gpu_zoo import gpu_profile, kernel_sequence, profile_kernels  # noqa: E402

CALLS = 20  # per program per round


def programs(name, dtype_name, size, artifacts, graphs=False, inductor=True):
    """The exported builds of zoo model `name` (without CUDA graphs, and with them as
    "<label>+g" when `graphs`) and Inductor's default, by label, with the inputs and
    eager's result."""
    model, inputs = zoo.build(name, getattr(torch, dtype_name), size=size)
    model = model.cuda().eval()
    inputs = tuple(x.cuda() for x in inputs)
    state = program_weights(model)
    result = {}
    for index, directory in enumerate(artifacts):
        export = os.path.join(directory, f"{name}-{dtype_name}")
        runtime = load_runtime(export, f"rt_{name}_{index}")
        label = os.path.basename(directory.rstrip("/"))
        result[label] = runtime.load(export, device="cuda", cuda_graphs=False).bind(state)
        if graphs:
            result[label + "+g"] = runtime.load(export, device="cuda").bind(state)
    if inductor:
        result["inductor"] = torch.compile(model)
        if graphs:  # like for like with the builds' CUDA graphs
            result["inductor-ro"] = torch.compile(model, mode="reduce-overhead")
    return result, inputs, model(*inputs)


def float64_result(name, size, inputs):
    """The zoo model `name` (the same weights: the zoo builds it from a fixed seed)
    computed in float64 on the GPU, on `inputs` (floating ones widened)."""
    model, _ = zoo.build(name, torch.float64, size=size)
    model = model.cuda().eval()
    wide = tuple(x.double() if x.is_floating_point() else x for x in inputs)
    with torch.no_grad():
        result = model(*wide)
    del model
    return result


def reference_for(label, built):
    """Like for like: a CUDA-graph program against Inductor's reduce-overhead, the others
    against Inductor's default (or the first build, without Inductor)."""
    if "inductor" not in built:
        return next(iter(built))
    if (label.endswith("+g") or label == "inductor-ro") and "inductor-ro" in built:
        return "inductor-ro"
    return "inductor"


def timed_rounds(programs, inputs, rounds):
    """ms per call of each program, one sample per round, the order shuffled per round."""
    times = {label: [] for label in programs}
    for program in programs.values():
        for _ in range(5):
            program(*inputs)
    for _ in range(rounds):
        order = list(programs)
        random.shuffle(order)
        for label in order:
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(CALLS):
                programs[label](*inputs)
            torch.cuda.synchronize()
            times[label].append((time.perf_counter() - start) / CALLS * 1e3)
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="bench")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--models", required=True)
    parser.add_argument("--artifacts", required=True, help="comma-separated export folders")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--graphs", action="store_true")
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--kernels", default="",
                        help="also append each program's costliest kernels to this file")
    parser.add_argument("--float64", action="store_true",
                        help="also print each program's and eager's distance from the "
                        "model computed in float64 on the GPU")
    parser.add_argument("--sequence", default="",
                        help="also append each program's kernels of one call, in order")
    args = parser.parse_args()
    for name in args.models.split(","):
        # Each model's Inductor compiles start afresh: past Dynamo's recompile limit
        # (8 entries of the modules' shared code, reached by the fifth model with
        # --graphs) torch.compile silently runs eagerly.
        torch._dynamo.reset()
        with torch.no_grad():
            built, inputs, expected = programs(name, args.dtype, args.size,
                                               args.artifacts.split(","), args.graphs,
                                               not args.no_inductor)
            if args.float64:
                exact = float64_result(name, args.size, inputs)
                print(f"{name} eager: error from float64 "
                      f"{relative_error(expected, exact):.2e}", flush=True)
            for label, program in list(built.items()):
                try:
                    error = relative_error(program(*inputs), expected)
                    if args.float64 and not label.endswith("+g"):
                        print(f"{name} {label}: error from float64 "
                              f"{relative_error(program(*inputs), exact):.2e}", flush=True)
                    kernels, gpu_ms = gpu_profile(program, inputs)
                except Exception as failure:  # noqa: BLE001 (a row that says so)
                    # (Inductor's reduce-overhead fails on fp32 Mixtral: its CUDA graph
                    # records transformers' grouped GEMM fallback, which reads offsets on
                    # the host; the other programs still compare.)
                    print(f"{name} {label}: FAILED: {type(failure).__name__}: "
                          f"{str(failure).splitlines()[0]}", flush=True)
                    del built[label]
                    continue
                print(f"{name} {label}: error {error:.1e}, {kernels:.0f} kernels, "
                      f"{gpu_ms:.3f} GPU ms per call", flush=True)
            if args.kernels:
                profile_kernels(args.kernels, name, built, inputs, rows=40)
            if args.sequence:
                with open(args.sequence, "a") as out:
                    for label, program in built.items():
                        if label.endswith("+g") or label == "inductor-ro":
                            continue  # a graph replay's kernels are the same
                        names = kernel_sequence(program, inputs)
                        out.write(f"## {name} {args.dtype} {label}: {len(names)} kernels\n\n")
                        out.writelines(f"{i:3d} {n[:110]}\n" for i, n in enumerate(names))
                        out.write("\n")
            times = timed_rounds(built, inputs, args.rounds)
        cells = []
        for label in built:
            reference = reference_for(label, built)
            if reference not in built:
                reference = label
            ratio = statistics.median(i / t for i, t in zip(times[reference], times[label]))
            cells.append(f"{label} {statistics.median(times[label]):.3f} ms "
                         f"(/{reference} {ratio:.2f})")
        print(f"| {name} | {' | '.join(cells)} |", flush=True)

if __name__ == "__main__":
    main()
