"""Helpers the benchmark scripts share (no torch, no Dyno at import: gpu_run.py runs
where neither Dyno nor its compiler is installed)."""
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


def round_order(labels, round_index):
    """The order in which round `round_index` of an interleaved timing runs `labels`.
    In a fixed order, whoever ran right after a given neighbour was timed slower (a
    null A/B gave 0.94-0.98x). Rounds cycle through every order of the labels (seeded
    shuffle of all of them, up to 5 labels; a seeded random order per round beyond):
    over each multiple of len(labels)! rounds every label runs first, second, ...
    equally often, and after each other label equally often. (Seeded random orders did
    not balance: for 3 labels, 7 rounds put Dyno right after eager 4 times and
    Inductor 2.)"""
    import itertools
    import random

    labels = list(labels)
    if len(labels) > 5:
        return random.Random(round_index).sample(labels, len(labels))
    orders = list(itertools.permutations(labels))
    random.Random(0).shuffle(orders)
    return list(orders[round_index % len(orders)])


def compile_variants(model, inputs, variants):
    """Dyno's compiles of `model`, one per variant: `variants` maps a label to a function
    of no arguments returning the context manager under which that variant compiles (a
    switch of the compiler patched, say). Each compiles through a backend function of
    its own: Dynamo shares a cache entry between compiles of one module's code with one
    backend, so that every label would run one graph. Returns label -> (the compiled
    callable, its result on `inputs`)."""
    import torch

    dyno = torch._dynamo.lookup_backend("mlir")
    compiled = {}
    for label, context in variants.items():
        with context():
            function = torch.compile(
                model, backend=lambda gm, example, dyno=dyno: dyno(gm, example))
            compiled[label] = (function, function(*inputs))
    return compiled


def time_interleaved(functions, inputs, rounds, iters, warmup=5):
    """Seconds per call of each of `functions` (label -> fn) on `inputs`: after `warmup`
    calls each, `rounds` rounds of `iters` calls each, each round in its order
    (round_order). Returns label -> samples."""
    samples = {label: [] for label in functions}
    for fn in functions.values():
        time_calls(fn, inputs, warmup)
    for round_index in range(rounds):
        for label in round_order(functions, round_index):
            samples[label] += time_calls(functions[label], inputs, iters)
    return samples
