"""Paired A/B of two dyno-opt builds on the same models, interleaved in one process.

    python benchmarks/ab_dyno_opt.py --old /tmp/dyno-opt-old [--new build/bin/dyno-opt]
        --models resnet,small_cnn [--dtype float32] [--rounds 8] [--old-options JSON]
        [--old-kernel-formation PIPELINE]

Each model (a zoo model at "cpu" size, one of e2e/models.py's suite, or
`transpose:ROWSxCOLUMNS`, `x.t().contiguous()` alone) is compiled twice, once with each
dyno-opt (DYNO_OPT; the compile cache off), and the two compiled graphs are timed in
blocks with eager, in an order of its own each round (report.round_order), as AOTAutograd's callables: Dynamo's
frame, the same for both, is left out. Medians per call; whether the two results are
bitwise equal (a pass that changes a sum's order may change the last bits: check those
against float64). On this noisy machine only such paired runs tell a few percent apart.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
import zoo  # noqa: E402
from report import round_order  # noqa: E402


def compiled_graph(model, inputs, dyno_opt, options=None, kernel_formation=None):
    """AOTAutograd's callable for `model` compiled with `dyno_opt` (and torch.compile's
    `options` for backend="mlir"; `kernel_formation`: the CPU target's kernel-formation
    pipeline, with its options, instead of its own), and its inputs."""
    import dataclasses

    import dyno.targets.cpu as cpu
    from dyno.backend import mlir

    os.environ["DYNO_OPT"] = dyno_opt
    passes = cpu.PASSES
    if kernel_formation is not None:
        cpu.PASSES = dataclasses.replace(passes, kernel_formation=kernel_formation)
    captured = {}

    def backend(gm, example_inputs):
        captured["graph"] = mlir(gm, example_inputs, options=options)
        captured["inputs"] = list(example_inputs)
        return captured["graph"]

    torch._dynamo.reset()
    try:
        with torch.no_grad():
            torch.compile(model, backend=backend)(*inputs)
    finally:
        cpu.PASSES = passes
    return captured["graph"], captured["inputs"]


class Transpose(torch.nn.Module):
    def forward(self, x):
        return x.t().contiguous()


def first(result):
    return result[0] if isinstance(result, (list, tuple)) else result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", required=True, help="the dyno-opt to compare against")
    parser.add_argument("--new", default="build/bin/dyno-opt")
    parser.add_argument("--models", required=True, help="comma-separated names")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--old-options", type=json.loads, default=None, metavar="JSON",
                        help="torch.compile options the old build compiles with (the same "
                             "dyno-opt for both then compares an option, e.g. "
                             "'{\"causal_masks\": false}')")
    parser.add_argument("--old-kernel-formation", default=None, metavar="PIPELINE",
                        help="the CPU target's kernel-formation pipeline the old build "
                             "compiles with, e.g. 'dyno-kernel-formation-pipeline' (without "
                             "the CPU's row-bias-in-library=true)")
    args = parser.parse_args()
    os.environ["DYNO_CACHE"] = "0"
    import dyno  # noqa: F401

    dtype = getattr(torch, args.dtype)
    for name in args.models.split(","):
        if name.startswith("transpose:"):
            rows, columns = (int(n) for n in name.split(":")[1].split("x"))
            model, inputs = Transpose(), (torch.randn(rows, columns, dtype=dtype),)
        else:
            model, inputs = zoo.cpu_benchmark_model(name, dtype)
        old, flat = compiled_graph(model, inputs, os.path.abspath(args.old), args.old_options,
                                   args.old_kernel_formation)
        new, _ = compiled_graph(model, inputs, os.path.abspath(args.new))
        calls = {"eager": lambda: model(*inputs), "old": lambda: old(*flat),
                 "new": lambda: new(*flat)}
        samples = {label: [] for label in calls}
        with torch.no_grad():
            equal = torch.equal(first(old(*flat)), first(new(*flat)))
            for call in calls.values():
                for _ in range(5):
                    call()
            for round_index in range(args.rounds):
                # An order of its own each round (all in turn): a variant timed right
                # after another ran slower, so none may always follow the same one.
                for label in round_order(calls, round_index):
                    call = calls[label]
                    for _ in range(15):
                        start = time.perf_counter()
                        call()
                        samples[label].append(time.perf_counter() - start)
        us = {label: statistics.median(s) * 1e6 for label, s in samples.items()}
        print(f"{name:28s} {args.dtype:9s} eager {us['eager']:8.0f} old {us['old']:8.0f} "
              f"new {us['new']:8.0f} us  old/new {us['old'] / us['new']:.2f}x  "
              f"bitwise equal: {equal}", flush=True)


if __name__ == "__main__":
    main()
