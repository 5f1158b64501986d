"""Paired A/B of the CPU's patch embeddings as matrix products, in one process.

    DYNO_CACHE=0 python benchmarks/experiments/patch_embeddings_ab.py [--models convnext,swin,vit]
                                                [--dtype float32] [--rounds 12]

Each model is compiled twice by Dyno, each time through a backend function of its own
(Dynamo shares a cache entry between compiles of one module's code with one backend):
"matmul", as the compiler does (a convolution whose stride is its kernel's size is a
product of the image's patches with the flattened filter,
ops/convolution_decompositions.py), and "conv", as it did before (oneDNN's
convolution). Eager and Inductor are timed beside them in rounds, each in an order of
its own (report.round_order); medians per call in us, then conv/matmul and
Inductor/matmul (above 1: the product faster), and each Dyno result's relative error
against float64 beside eager's.
"""
import argparse
import contextlib
import copy
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
    parser.add_argument("--models", default="convnext,swin,vit")
    parser.add_argument("--dtype", default="float32", choices=["bfloat16", "float32"])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--iters", type=int, default=15)
    args = parser.parse_args()
    import dyno  # noqa: F401  (registers the backend)
    from dyno.ops import convolution_decompositions as convolutions

    dtype = getattr(torch, args.dtype)
    variants = {"conv": lambda: mock.patch.object(convolutions, "_patches_as_matmul",
                                                  lambda *arguments: NotImplemented),
                "matmul": contextlib.nullcontext}
    print(f"{torch.get_num_threads()} threads, {args.dtype}")
    for name in args.models.split(","):
        torch.manual_seed(0)
        model, inputs = zoo.cpu_benchmark_model(name, dtype)
        with torch.no_grad():
            reference = copy.deepcopy(model).double()(
                *[x.double() if x.is_floating_point() else x for x in inputs])
            results = {"eager": model(*inputs)}
            backends = {"eager": model, "inductor": torch.compile(model, backend="inductor")}
            backends["inductor"](*inputs)
            for label, (function, result) in compile_variants(model, inputs,
                                                              variants).items():
                backends[label], results[label] = function, result
            samples = time_interleaved(backends, inputs, args.rounds, args.iters)
        errors = {label: ((result.double() - reference).norm() / reference.norm()).item()
                  for label, result in results.items()}
        medians = {label: statistics.median(s) * 1e6 for label, s in samples.items()}
        print(f"{name}: " + ", ".join(f"{label} {value:.0f} us"
                                      for label, value in medians.items())
              + f"; conv/matmul {medians['conv'] / medians['matmul']:.3f}x, "
              f"inductor/matmul {medians['inductor'] / medians['matmul']:.3f}x; "
              "relative error vs float64: "
              + ", ".join(f"{label} {error:.2e}" for label, error in errors.items()),
              flush=True)
        torch._dynamo.reset()


if __name__ == "__main__":
    main()
