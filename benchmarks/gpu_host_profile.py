"""Where the host time of an exported program goes without CUDA graphs, beside Inductor's
default, on a GPU machine: cProfile's top functions and torch.profiler's host-side
operator table over a few calls, and the wall time per call with the GPU synchronized
only at the end (host-bound programs show their host cost here).

    python3 benchmarks/gpu_host_profile.py --size real --dtype bfloat16 --models gpt2 \
        --artifacts .gpu/main-real [--calls 20] [--out $OUT/host.txt]
"""
import argparse
import cProfile
import io
import os
import pstats
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
import zoo  # noqa: E402
from gpu_run import load_runtime, program_weights  # noqa: E402


def wall_ms(program, inputs, calls):
    for _ in range(3):
        program(*inputs)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        program(*inputs)
    host = (time.perf_counter() - start) / calls * 1e3
    torch.cuda.synchronize()
    total = (time.perf_counter() - start) / calls * 1e3
    return host, total


def host_profile(program, inputs, calls, rows=25):
    """cProfile's top functions by own time, and torch.profiler's host operators."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        program(*inputs)
    torch.cuda.synchronize()
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(rows)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            program(*inputs)
        torch.cuda.synchronize()
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows)
    return text.getvalue() + "\n" + table


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="real")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--models", required=True)
    parser.add_argument("--artifacts", required=True, help="comma-separated export folders")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    report = []
    for name in args.models.split(","):
        model, inputs = zoo.build(name, getattr(torch, args.dtype), size=args.size)
        model = model.cuda().eval()
        inputs = tuple(x.cuda() for x in inputs)
        state = program_weights(model)
        with torch.no_grad():
            programs = {}
            for index, directory in enumerate(args.artifacts.split(",")):
                export = os.path.join(directory, f"{name}-{args.dtype}")
                runtime = load_runtime(export, f"rt_{name}_{index}")
                label = os.path.basename(directory.rstrip("/"))
                programs[label] = runtime.load(export, device="cuda",
                                               cuda_graphs=False).bind(state)
            programs["inductor"] = torch.compile(model)
            for label, program in programs.items():
                host, total = wall_ms(program, inputs, args.calls)
                line = (f"{name} {args.dtype} {label}: host {host:.3f} ms per call, "
                        f"with the GPU {total:.3f} ms per call")
                print(line, flush=True)
                report.append(f"## {line}\n\n{host_profile(program, inputs, args.calls)}")
            torch._dynamo.reset()
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("\n".join(report))
    else:
        print("\n".join(report))


if __name__ == "__main__":
    main()
