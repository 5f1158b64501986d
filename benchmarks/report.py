"""Helpers the benchmark scripts share (no torch, no Dyno: gpu_run.py runs where neither
Dyno nor its compiler is installed)."""
import math
import statistics


def geomean(values) -> float:
    return math.exp(statistics.mean(math.log(v) for v in values))


def publish(lines, out: str = "") -> None:
    """Prints the report and writes it to `out` when given."""
    report = "\n".join(lines)
    print(report)
    if out:
        with open(out, "w") as handle:
            handle.write(report + "\n")
