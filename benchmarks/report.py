"""Helpers the benchmark scripts share (no torch, no Dyno: gpu_run.py runs where neither
Dyno nor its compiler is installed)."""
import math
import statistics
import sys
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


def progress(items, description: str):
    """`items`, with a progress bar on stderr when it is a terminal (tqdm); as they are
    where it is not, or where tqdm is missing."""
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=description, unit="model", file=sys.stderr,
                disable=not sys.stderr.isatty())


def note(text: str) -> None:
    """Prints a line above any progress bar."""
    try:
        from tqdm import tqdm
    except ImportError:
        print(text, flush=True)
        return
    tqdm.write(text, file=sys.stdout)
    sys.stdout.flush()


def time_calls(fn, inputs, iters):
    """Wall-clock seconds of each of `iters` calls fn(*inputs)."""
    samples = []
    for _ in range(iters):
        start = time.perf_counter()
        fn(*inputs)
        samples.append(time.perf_counter() - start)
    return samples
