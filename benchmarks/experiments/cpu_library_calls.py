"""How the CPU target calls its libraries in bf16/f16, against what eager calls.

Linear layers: PyTorch's addmm (what eager's F.linear runs, and Dyno called before)
against oneDNN's linear with the bias in its accumulator (host_runtime.linear), with and
without a GELU epilogue (dyno-fuse-matmul-epilogues), on the linear layers of the
benchmark models and the zoo. Convolutions: on NCHW tensors (eager's) against a
channels-last copy of the input (host_runtime.conv2d), and with the result also copied
back to NCHW (what a kernel after the convolution reads).

    python benchmarks/experiments/cpu_library_calls.py [--dtype bfloat16] [--rounds 5]

Medians per call in microseconds, the variants of a shape timed in rotating blocks in one
run; `x` columns are the eager form's time over the variant's.
"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), ".."))

# (batch, channels, height, width, filters, kernel size, stride, padding): the small
# CNN's two convolutions, a ResNet stage's 3x3 and its 7x7 stem.
CONV_SHAPES = [(8, 3, 32, 32, 16, 3, 1, 1), (8, 16, 16, 16, 32, 3, 1, 1),
               (4, 64, 56, 56, 64, 3, 1, 1), (4, 3, 224, 224, 64, 7, 2, 3)]

# (rows, in features, out features): the MLP's layers (64 rows), a BERT/ViT-sized
# feed-forward block (512 tokens, 768 -> 3072 -> 768), the zoo's small configs, one token.
LINEAR_SHAPES = [(64, 512, 1024), (64, 1024, 1024), (64, 1024, 10), (512, 768, 3072),
          (512, 3072, 768), (256, 256, 1024), (2048, 64, 64), (1, 768, 768)]


def median_us(fn, iters=40):
    for _ in range(3):
        fn()
    samples = []
    for _ in range(iters):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from dyno.targets.host_runtime import onednn_computes, conv2d, linear

    dtype = getattr(torch, args.dtype)
    print(f"threads {torch.get_num_threads()}, {args.dtype}, oneDNN computes it: "
          f"{onednn_computes(dtype)}")
    print("| rows x in -> out | addmm | linear | addmm, then GELU | linear + GELU epilogue "
          "| linear x | GELU epilogue x |")
    print("|---|---|---|---|---|---|---|")
    torch.manual_seed(0)
    with torch.no_grad():
        for rows, inputs, outputs in LINEAR_SHAPES:
            x = torch.randn(rows, inputs).to(dtype)
            weight = (torch.randn(outputs, inputs) / inputs ** 0.5).to(dtype)
            bias = torch.randn(outputs).to(dtype)
            wt = weight.t()
            variants = {
                "addmm": lambda: torch.addmm(bias, x, wt),
                "linear": lambda: linear(x, wt, bias),
                "addmm+gelu": lambda: F.gelu(torch.addmm(bias, x, wt)),
                "linear gelu": lambda: linear(x, wt, bias, "gelu"),
            }
            samples = {name: [] for name in variants}
            for _ in range(args.rounds):
                for name, fn in variants.items():
                    samples[name].append(median_us(fn))
            t = {name: statistics.median(values) for name, values in samples.items()}
            print(f"| {rows} x {inputs} -> {outputs} | {t['addmm']:.1f} | {t['linear']:.1f} "
                  f"| {t['addmm+gelu']:.1f} | {t['linear gelu']:.1f} "
                  f"| {t['addmm'] / t['linear']:.2f}x "
                  f"| {t['addmm+gelu'] / t['linear gelu']:.2f}x |")
        print()
        print("| input, filters, kernel, stride | NCHW (eager) | channels-last input "
              "| channels-last, result to NCHW | x | x with the copy back |")
        print("|---|---|---|---|---|---|")
        for batch, channels, height, width, filters, size, stride, padding in CONV_SHAPES:
            x = torch.randn(batch, channels, height, width).to(dtype)
            weight = (torch.randn(filters, channels, size, size) / size).to(dtype)
            bias = torch.randn(filters).to(dtype)
            variants = {
                "nchw": lambda: torch.conv2d(x, weight, bias, stride, padding),
                "cl": lambda: conv2d(x, weight, bias, (stride,) * 2, (padding,) * 2, (1, 1), 1),
                "cl back": lambda: conv2d(x, weight, bias, (stride,) * 2, (padding,) * 2,
                                          (1, 1), 1).contiguous(),
            }
            samples = {name: [] for name in variants}
            for _ in range(args.rounds):
                for name, fn in variants.items():
                    samples[name].append(median_us(fn, iters=20))
            t = {name: statistics.median(values) for name, values in samples.items()}
            print(f"| {batch}x{channels}x{height}x{width}, {filters}, {size}x{size}, {stride} "
                  f"| {t['nchw']:.1f} | {t['cl']:.1f} | {t['cl back']:.1f} "
                  f"| {t['nchw'] / t['cl']:.2f}x | {t['nchw'] / t['cl back']:.2f}x |")


if __name__ == "__main__":
    main()
