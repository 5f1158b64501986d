"""A large fused pointwise kernel on 1 and 2 threads: is the generated code really parallel?

    python benchmarks/experiments/openmp_scaling.py
"""
import statistics
import time

import torch

import dyno


def fused(x, y):
    return torch.tanh(x * 1.5 + y) * torch.sigmoid(y) + x.exp() * 0.1


def main():
    x, y = torch.randn(4096, 4096), torch.randn(4096, 4096)
    compiled = torch.compile(fused, backend="mlir")
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, y), fused(x, y), rtol=1e-4, atol=1e-5)
    assert dyno.stats()["fallback_graphs"] == 0, dyno.stats()
    results = {}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for _ in range(3):
            compiled(x, y)
        samples = []
        for _ in range(15):
            start = time.perf_counter()
            compiled(x, y)
            samples.append(time.perf_counter() - start)
        results[threads] = statistics.median(samples)
        print(f"{threads} thread(s): {results[threads] * 1e3:.2f} ms (median of 15)")
    print(f"speedup on 2 threads over 1: {results[1] / results[2]:.2f}x")


if __name__ == "__main__":
    main()
