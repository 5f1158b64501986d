"""Where a compiled GPU program's time goes: per-kernel device time (torch.profiler) and
the host time per call, for exported cases. Needs only torch and triton.

    python benchmarks/gpu_profile.py --artifacts build/gpu-artifacts --cases small_cnn
"""
import argparse
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(__file__))
from gpu_run import load_runtime  # noqa: E402
from gpu_suite import build, cases, make_inputs  # noqa: E402


def host_us_per_call(fn, calls=200):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - start) / calls
    torch.cuda.synchronize()
    return host * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--artifacts", default="build/gpu-artifacts")
    parser.add_argument("--cases", default="small_cnn")
    args = parser.parse_args()
    wanted = set(args.cases.split(","))
    for name, kind, builder, specs in cases():
        if name not in wanted:
            continue
        directory = os.path.join(args.artifacts, name)
        runtime = load_runtime(directory)
        model = build(builder, "cuda")
        inputs = make_inputs(specs, "cuda", seed=1)
        program = runtime.load(directory, device="cuda",
                               cuda_graphs=False).bind(model.state_dict())
        with torch.no_grad():
            for label, fn in (("eager", lambda: model(*inputs)), ("dyno", lambda: program(*inputs))):
                print(f"{name} {label}: host {host_us_per_call(fn):.1f} us per call")
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(20):
                        fn()
                    torch.cuda.synchronize()
                print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12))


if __name__ == "__main__":
    main()
