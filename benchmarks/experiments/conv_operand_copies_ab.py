"""Paired A/B, in one process, of how the CPU target copies a channels-last convolution's
graph inputs (the image, plain filters), and of the float32 layout rule that follows.

    DYNO_CACHE=0 python benchmarks/experiments/conv_operand_copies_ab.py --compare copies
        [--models resnet,small_cnn,convnext] [--dtype bfloat16] [--rounds 15] [--iters 10]
    DYNO_CACHE=0 python benchmarks/experiments/conv_operand_copies_ab.py --compare f32-rule
        --models small_cnn,resnet --dtype float32

`--compare copies`: "old" leaves the copies to the runtime (ATen's strided copy inside
the convolution call), "new" copies them in kernels of Dyno's (dyno-channels-last-
convolutions' copy-host-operands). `--compare f32-rule`: "old" runs float32
convolutions NCHW, "new" by the rule (channels-last where the copied filters are small
against the outputs, host_runtime.F32_CHANNELS_LAST_MAX_FILTER_SHARE). Eager and Inductor
are timed beside them; each round in an order of its own (report.round_order); medians per call, in us.
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # report
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo
from report import time_interleaved  # noqa: E402
import zoo  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--compare", choices=["copies", "f32-rule"], required=True)
    parser.add_argument("--models", default="resnet,small_cnn,convnext")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    import dyno  # noqa: F401  (registers the backend)
    from dyno.targets import cpu, host_runtime

    dtype = getattr(torch, args.dtype)
    dyno_backend = torch._dynamo.lookup_backend("mlir")

    def compile_with(model, label):
        """`model` compiled by Dyno (a backend of its own per label: Dynamo would share
        one cache entry) with the old or the new choice in force while it compiles."""
        if args.compare == "copies":
            module, name, old_value = cpu, "four_d_inputs_contiguous", lambda gm: False
        else:
            module, name, old_value = host_runtime, "F32_CHANNELS_LAST_MAX_FILTER_SHARE", -1.0
        kept = getattr(module, name)
        if label == "old":
            setattr(module, name, old_value)
        try:
            compiled = torch.compile(
                model, backend=lambda gm, example, dyno=dyno_backend: dyno(gm, example))
            compiled(*inputs)
        finally:
            setattr(module, name, kept)
        return compiled

    print(f"{torch.get_num_threads()} threads, {args.dtype}, --compare {args.compare}")
    for name in args.models.split(","):
        model, inputs = zoo.cpu_benchmark_model(name, dtype)
        with torch.no_grad():
            expected = model(*inputs).float()
            backends = {"eager": model, "inductor": torch.compile(model)}
            backends["inductor"](*inputs)
            for label in ("old", "new"):
                backends[label] = compile_with(model, label)
                difference = (backends[label](*inputs).float() - expected).abs().max().item()
                print(f"{name} dyno {label}: max |compiled - eager| {difference:.3g}")
            samples = time_interleaved(backends, inputs, args.rounds, args.iters)
        median = {label: statistics.median(s) * 1e6 for label, s in samples.items()}
        print(f"{name}: " + ", ".join(f"{label} {us:.0f} us" for label, us in median.items())
              + f"; old/new {median['old'] / median['new']:.3f}x, Dyno/Inductor old "
              f"{median['inductor'] / median['old']:.2f} new {median['inductor'] / median['new']:.2f}")
        torch._dynamo.reset()


if __name__ == "__main__":
    main()
