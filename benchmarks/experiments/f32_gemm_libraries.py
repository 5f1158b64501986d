"""Float32 linear-layer products on this CPU: torch.mm (MKL) against oneDNN's linear
(`torch.ops.mkldnn._linear_pointwise`), at the shapes of the zoo's layers and around
host_runtime.F32_ONEDNN_LINEAR_MIN_VOLUME.

    python benchmarks/experiments/f32_gemm_libraries.py [--rounds 15]

Each shape: `x @ w.t()` for an [m, k] input and an [n, k] weight, the two ways timed in
blocks in an order of its own each round (report.round_order); medians per call in us, and whether
host_runtime.onednn_linear_pays picks oneDNN for it here.
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # report
from report import round_order  # noqa: E402

SHAPES = [(64, 256, 256), (128, 256, 256), (256, 256, 256), (128, 256, 512),
          (68, 256, 1024), (68, 1024, 256), (96, 512, 512), (512, 256, 256),
          (64, 768, 768), (128, 768, 768), (256, 768, 768), (512, 256, 768),
          (512, 1024, 256), (512, 768, 768), (128, 768, 3072), (512, 768, 3072),
          (512, 3072, 768), (2048, 768, 768)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    from dyno.targets.host_runtime import onednn_linear_pays

    linear = torch.ops.mkldnn._linear_pointwise.default
    print(f"{torch.get_num_threads()} threads; us per call (medians of {args.rounds} "
          "rounds)\n")
    print("| m x k @ k x n | multiply-adds | torch.mm | oneDNN linear | mm / oneDNN | "
          "oneDNN picked here |\n|---|---|---|---|---|---|")
    for m, k, n in SHAPES:
        x, w, out = torch.randn(m, k), torch.randn(n, k), torch.empty(m, n)
        calls = {"mm": lambda: torch.mm(x, w.t(), out=out),
                 "onednn": lambda: linear(x, w, None, "none", [], "")}
        iters = max(3, min(200, int(2e8 / (m * k * n))))
        times = {label: [] for label in calls}
        for call in calls.values():
            for _ in range(3):
                call()
        for round_index in range(args.rounds):
            for label in round_order(calls, round_index):
                start = time.perf_counter()
                for _ in range(iters):
                    calls[label]()
                times[label].append((time.perf_counter() - start) / iters * 1e6)
        mm, onednn = (statistics.median(times[label]) for label in ("mm", "onednn"))
        print(f"| {m} x {k} @ {k} x {n} | {m * k * n / 1e6:.1f}M | {mm:.1f} | {onednn:.1f} "
              f"| {mm / onednn:.3f} | {onednn_linear_pays(torch.float32, m, k, n)} |",
              flush=True)


if __name__ == "__main__":
    main()
