"""Helpers the benchmark scripts share (no torch, no Dyno: gpu_run.py runs where neither
Dyno nor its compiler is installed)."""
import math
import statistics
import time


def geomean(values) -> float:
    return math.exp(statistics.mean(math.log(v) for v in values))


def publish(lines, out: str = "") -> None:
    """Prints the report and writes it to `out` when given."""
    report = "\n".join(lines)
    print(report)
    if out:
        with open(out, "w") as handle:
            handle.write(report + "\n")


def time_calls(fn, inputs, iters):
    """Wall-clock seconds of each of `iters` calls fn(*inputs)."""
    samples = []
    for _ in range(iters):
        start = time.perf_counter()
        fn(*inputs)
        samples.append(time.perf_counter() - start)
    return samples
