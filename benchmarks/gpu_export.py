"""Compiles the GPU suite for the Triton target on this (CPU-only) machine.

    python benchmarks/gpu_export.py [--out build/gpu-artifacts] [--cases a,b]

Writes one export per case (dyno.export_triton, without weights: gpu_run.py binds the
parameters of the same model built there). The artifacts need only torch and triton.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
from gpu_suite import build, cases, make_inputs  # noqa: E402

import dyno  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="build/gpu-artifacts")
    parser.add_argument("--cases", default="")
    args = parser.parse_args()
    wanted = set(filter(None, args.cases.split(",")))
    for name, kind, builder, specs in cases():
        if wanted and name not in wanted:
            continue
        start = time.perf_counter()
        model = build(builder, "cpu")
        inputs = make_inputs(specs, "cpu")
        directory = os.path.join(args.out, name)
        dyno.export_triton(model, inputs, directory, save_weights=False)
        print(f"{name}: exported in {time.perf_counter() - start:.1f} s -> {directory}")


if __name__ == "__main__":
    main()
