"""CPU kernels around convolutions in channels-last order, on and off (dyno-channels-last-
convolutions).

    python benchmarks/experiments/channels_last.py [--models small_cnn,resnet]
        [--dtypes bfloat16,float32] [--repeats 2] [--rounds 21] [--out FILE.md]

"off" compiles without the lowering option `channels-last-convolutions`: the runtime is
the same (convolutions channels-last where host_runtime.convolves_channels_last says so),
and the kernels read and write NCHW, so the wrapper copies each convolution's result to
NCHW and each kernel result a convolution reads back to channels-last. f32 is measured
with frozen filters only (plain f32 convolutions stay NCHW: the pass does nothing there).
On a CPU without AMX plain bf16 convolutions run NCHW too, so there only the frozen bf16
rows compare anything (benchmarks/experiments/conv_layout_ab.py compares the two layouts).

Each variant runs in a process of its own (Dynamo keeps one compiled graph per frame,
whatever the backend's options, and transformers models compile several frames), timed
against eager in alternating rounds in that process; the processes alternate `repeats`
times and the table shows the median speedup of each variant over eager.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # report
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo, models


def build(name, dtype):
    import zoo
    from models import SmallCNN

    torch.manual_seed(0)
    if name == "small_cnn":
        return SmallCNN().eval().to(dtype), (torch.randn(8, 3, 32, 32).to(dtype),)
    model, inputs = zoo.build(name, dtype, size="cpu")
    return model, tuple(inputs)


def measure(name, dtype, freezing, channels_last, rounds):
    """One variant in this process: eager and compiled medians (us), and the copies
    (aten::copy_) one compiled call makes."""
    import dyno  # noqa: F401
    from dyno.targets import cpu

    if not channels_last:
        original = cpu.pipeline_options
        cpu.pipeline_options = (
            lambda options, *args, **kwargs: " ".join(
                option for option in original(options, *args, **kwargs).split()
                if not option.startswith("channels-last-convolutions")))
    model, inputs = build(name, dtype)
    compiled = torch.compile(model, backend="mlir",
                             options={"freezing": freezing, "cache": False})
    samples = {"eager": [], "dyno": []}
    with torch.no_grad():
        for _ in range(3):
            compiled(*inputs)
            model(*inputs)
        with torch.profiler.profile() as profile:
            compiled(*inputs)
        copies = sum(event.name == "aten::copy_" for event in profile.events())
        for round_ in range(rounds):
            order = [("eager", model), ("dyno", compiled)]
            for label, fn in (order if round_ % 2 else order[::-1]):
                start = time.perf_counter()
                for _ in range(10):
                    fn(*inputs)
                samples[label].append((time.perf_counter() - start) / 10 * 1e6)
    return {"eager": statistics.median(samples["eager"]),
            "dyno": statistics.median(samples["dyno"]), "copies": copies}


def run_variant(name, dtype_name, freezing, channels_last, rounds):
    command = [sys.executable, __file__, "--one", name, dtype_name, str(int(freezing)),
               str(int(channels_last)), "--rounds", str(rounds)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="small_cnn,resnet")
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--out")
    parser.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        name, dtype_name, freezing, channels_last = args.one
        print(json.dumps(measure(name, getattr(torch, dtype_name), freezing == "1",
                                 channels_last == "1", args.rounds)))
        return
    lines = [f"threads {torch.get_num_threads()}; per variant {args.repeats} processes "
             f"(alternating), each timing eager and Dyno in {args.rounds} alternating "
             "rounds of 10 calls; median speedups over eager", "",
             "| model | dtype | frozen | off speedup | on speedup | on / off "
             "| copies per call off / on |", "|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for name in args.models.split(","):
        for dtype_name in args.dtypes.split(","):
            for freezing in ((False, True) if dtype_name != "float32" else (True,)):
                speedups = {False: [], True: []}
                copies = {}
                for _ in range(args.repeats):
                    for channels_last in (False, True):
                        r = run_variant(name, dtype_name, freezing, channels_last,
                                        args.rounds)
                        speedups[channels_last].append(r["eager"] / r["dyno"])
                        copies[channels_last] = r["copies"]
                off, on = (statistics.median(speedups[v]) for v in (False, True))
                line = (f"| {name} | {dtype_name} | {'yes' if freezing else 'no'} | "
                        f"{off:.2f}x | {on:.2f}x | {on / off:.2f} | "
                        f"{copies[False]} / {copies[True]} |")
                lines.append(line)
                print(line, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
