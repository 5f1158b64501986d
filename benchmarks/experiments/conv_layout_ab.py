"""Paired A/B of the CPU convolution layouts for plain (not frozen) filters, in one process.

    DYNO_CACHE=0 python benchmarks/experiments/conv_layout_ab.py [--models resnet,small_cnn]
                                                     [--dtype bfloat16] [--rounds 8]
                                                     [--resnet50-batch N]

Each model is compiled twice by Dyno, each time through a backend function of its own
(Dynamo shares a cache entry between compiles of one module's code with one backend, so
that before 2026-12-04 this script timed one compiled graph under both labels): once
with its convolutions channels-last (oneDNN then copies each plain filter to
channels-last on every call; the kernels around the convolutions read and write NHWC),
once NCHW; `host_runtime.convolves_channels_last`, the rule both the compiler and the
runtime read, is switched for each. Eager and Inductor are timed beside them in
rounds, each in an order of its own (report.round_order); medians per call, in us. Which layout
`convolves_channels_last` picks on this machine is printed too. `--resnet50-batch N`
adds ResNet-50 (the zoo's "real" configuration) with N images to the models.
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # report
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo, models
from report import time_interleaved  # noqa: E402
import zoo  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="resnet,small_cnn")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--iters", type=int, default=15)
    parser.add_argument("--resnet50-batch", type=int, default=0)
    args = parser.parse_args()
    import dyno  # noqa: F401  (registers the backend)
    from dyno.targets import host_runtime

    dtype = getattr(torch, args.dtype)
    dyno_backend = torch._dynamo.lookup_backend("mlir")
    rule = host_runtime.convolves_channels_last
    layouts = {"channels_last": lambda dtype, frozen_filters, **_: True,
               "nchw": lambda dtype, frozen_filters, **_: False}
    print(f"{torch.get_num_threads()} threads, {args.dtype}; this machine's rule: "
          f"{'channels-last' if rule(dtype, frozen_filters=False) else 'NCHW'}")
    names = args.models.split(",") + (["resnet50"] if args.resnet50_batch else [])
    for name in names:
        if name == "resnet50":
            model, inputs = zoo.build("resnet", dtype, size="real")
            inputs = tuple(x[:args.resnet50_batch] for x in inputs)
        else:
            model, inputs = zoo.cpu_benchmark_model(name, dtype)
        with torch.no_grad():
            expected = model(*inputs).float()
            backends = {"eager": model, "inductor": torch.compile(model, backend="inductor")}
            backends["inductor"](*inputs)
            for label, layout in layouts.items():
                # Each layout compiles with a backend of its own: Dynamo shares a cache
                # entry between compiles of one module's code (even of copies of the
                # module) with one backend, so that all labels would run one graph.
                host_runtime.convolves_channels_last = layout
                try:
                    compiled = torch.compile(
                        model, backend=lambda gm, example, dyno=dyno_backend: dyno(gm, example))
                    compiled(*inputs)
                finally:
                    host_runtime.convolves_channels_last = rule

                def run(*call_inputs, compiled=compiled, layout=layout):
                    host_runtime.convolves_channels_last = layout
                    try:
                        return compiled(*call_inputs)
                    finally:
                        host_runtime.convolves_channels_last = rule

                difference = (run(*inputs).float() - expected).abs().max().item()
                print(f"{name} dyno {label}: max |compiled - eager| {difference:.3g}")
                backends[f"dyno_{label}"] = run
            samples = time_interleaved(backends, inputs, args.rounds, args.iters)
        print(f"{name}: " + ", ".join(f"{label} {statistics.median(s) * 1e6:.0f} us"
                                      for label, s in samples.items()))
        torch._dynamo.reset()


if __name__ == "__main__":
    main()
