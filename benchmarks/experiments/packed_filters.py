"""Paired A/B of the CPU's packed convolution filters, in one process.

    DYNO_CACHE=0 python benchmarks/experiments/packed_filters.py [--models resnet,small_cnn]
                                                [--dtype float32] [--rounds 15]

Each model is compiled twice by Dyno, each time through a backend function of its own
(Dynamo shares a cache entry between compiles of one module's code with one backend):
"packed", as the compiler does (an inference graph's filters that are parameters are
kept packed for oneDNN, host_runtime.PackedWeights.conv2d, checked against their bytes
on every call), and "copied", as it did before (no parameter inputs: kernels copy the
filters channels-last on every call where the layout rule picks channels-last, and
oneDNN reorders them). Eager and Inductor are timed beside them in rounds, each in an
order of its own (report.round_order); medians per call in us, then copied/packed and
Inductor/packed (above 1: packed faster), and whether the two Dyno results are bitwise
equal.
"""
import argparse
import contextlib
import os
import statistics
import sys
from unittest import mock

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # report
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo, models
from report import compile_variants, time_interleaved  # noqa: E402
import zoo  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="resnet,small_cnn,convnext")
    parser.add_argument("--dtype", default="float32", choices=["bfloat16", "float32"])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--iters", type=int, default=15)
    args = parser.parse_args()
    import dyno  # noqa: F401  (registers the backend)
    from dyno.driver import compiler

    dtype = getattr(torch, args.dtype)
    variants = {"copied": lambda: mock.patch.object(compiler, "_parameter_inputs",
                                                    lambda inference: frozenset()),
                "packed": contextlib.nullcontext}
    print(f"{torch.get_num_threads()} threads, {args.dtype}")
    for name in args.models.split(","):
        torch.manual_seed(0)
        model, inputs = zoo.cpu_benchmark_model(name, dtype)
        with torch.no_grad():
            backends = {"eager": model, "inductor": torch.compile(model, backend="inductor")}
            backends["inductor"](*inputs)
            compiled = compile_variants(model, inputs, variants)
            backends.update({label: function for label, (function, _) in compiled.items()})
            same = torch.equal(compiled["copied"][1], compiled["packed"][1])
            samples = time_interleaved(backends, inputs, args.rounds, args.iters)
        medians = {label: statistics.median(s) * 1e6 for label, s in samples.items()}
        print(f"{name}: " + ", ".join(f"{label} {value:.0f} us"
                                      for label, value in medians.items())
              + f"; copied/packed {medians['copied'] / medians['packed']:.3f}x, "
              f"inductor/packed {medians['inductor'] / medians['packed']:.3f}x; "
              f"bitwise equal: {'yes' if same else 'no'}", flush=True)
        torch._dynamo.reset()


if __name__ == "__main__":
    main()
