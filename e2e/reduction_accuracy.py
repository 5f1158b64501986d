"""Accuracy of long float reductions: compiled and eager, each against a float64 reference.

    python e2e/reduction_accuracy.py                          # every case, both targets
    python e2e/reduction_accuracy.py --lengths 1e3,1e6,3e7 --target cpu
    python e2e/reduction_accuracy.py --ops var,sum --data large_mean
    python e2e/reduction_accuracy.py --backward --lengths 1e6,16e6   # gradients

Each case reduces rows of `length` float32 elements (one row, and 4 rows of length / 4 for
reductions along the last dimension) drawn from centred data (standard normal) or data with
a large mean (uniform in [100, 101] and [1e4, 1e4 + 1]), where a sequential accumulator
loses about log2(length) bits and a variance from an inaccurate mean cancels. The error of a
result is max |result - reference| / max |reference| (the reference: the same function on
the float64 copy of the input). A case passes when the compiled error is at most
max(4 x eager's error, 1e-6): issue 19's bar. The e2e suite runs the short lengths
(e2e/test_reduction_accuracy.py); this command runs the long ones.
"""
import argparse
import math
import sys
import warnings

import torch

# name -> function of one tensor x (rows along the last dimension).
REDUCTIONS = {
    "sum": lambda x: x.sum(-1),
    "mean": lambda x: x.mean(-1),
    "var": lambda x: x.var(-1),
    "var_population": lambda x: x.var(-1, correction=0),
    "std": lambda x: x.std(-1),
    "var_mean": lambda x: torch.var_mean(x, -1),
    "norm": lambda x: torch.linalg.vector_norm(x, dim=-1),
    "logsumexp": lambda x: torch.logsumexp(x, -1),
    "softmax": lambda x: torch.softmax(x, -1),
    "log_softmax": lambda x: torch.log_softmax(x, -1),
    "layer_norm": lambda x: torch.nn.functional.layer_norm(x, x.shape[-1:]),
    # Each row a channel (batch norm, training statistics) or a group (group norm).
    "batch_norm": lambda x: torch.nn.functional.batch_norm(
        x.reshape(1, -1, x.shape[-1]), None, None, training=True).reshape(x.shape),
    "group_norm": lambda x: torch.nn.functional.group_norm(
        x.reshape(1, -1, x.shape[-1]), x.reshape(-1, x.shape[-1]).shape[0]).reshape(x.shape),
    "cumsum": lambda x: torch.cumsum(x, -1),
    "sum_all": lambda x: x.sum(),
}

# name -> (low, high) of a uniform distribution, or None for the standard normal.
DATA = {"centred": None, "large_mean": (100.0, 101.0), "larger_mean": (1e4, 1e4 + 1.0)}

SHORT_LENGTHS = [1_000, 100_000, 1_000_000]
LONG_LENGTHS = [1_000, 10_000, 100_000, 1_000_000, 4_000_000, 16_000_000, 30_000_000]


def make_input(data: str, length: int, rows: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    shape = (rows, length // rows) if rows > 1 else (length,)
    bounds = DATA[data]
    if bounds is None:
        return torch.randn(shape, generator=generator)
    low, high = bounds
    return torch.rand(shape, generator=generator, dtype=torch.float64).mul_(high - low).add_(
        low).float()


def relative_error(result, reference) -> float:
    results, _ = torch.utils._pytree.tree_flatten(result)
    references, _ = torch.utils._pytree.tree_flatten(reference)
    worst = 0.0
    for got, want in zip(results, references):
        scale = want.abs().max().item()
        error = (got.double() - want).abs().max().item()
        worst = max(worst, error / scale if scale else error)
    return worst


class NotCompiled(Exception):
    """The case ran (partly) eagerly: its accuracy says nothing about Dyno's."""


def measure(op: str, data: str, length: int, rows: int, target: str, dynamic=None):
    """(compiled error, eager error) against float64 for one case; `dynamic=True`
    compiles for symbolic sizes (and checks that the graph has some)."""
    import dyno

    fn = REDUCTIONS[op]
    x = make_input(data, length, rows)
    if op in ("softmax", "log_softmax", "logsumexp") and DATA[data] is None:
        x = x * 4  # a spread of exponents, as logits have
    reference = fn(x.double())
    eager = fn(x)
    torch._dynamo.reset()
    dyno.reset_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = torch.compile(fn, backend="mlir", options={"target": target},
                                 dynamic=dynamic)(x)
    stats = dyno.stats()
    if stats["fallback_graphs"] or stats["runtime_fallbacks"] or \
            stats["partially_compiled_graphs"] or not stats["compiled_graphs"]:
        raise NotCompiled(f"{op} did not compile fully: {stats['fallback_reasons']}")
    if stats.get("split_graphs"):
        raise NotCompiled(f"{op} compiled only in parts (its whole graph failed)")
    if dynamic and not stats.get("dynamic_graphs"):
        raise NotCompiled(f"{op} compiled no graph with symbolic sizes")
    return relative_error(compiled, reference), relative_error(eager, reference)


def measure_backward(op: str, data: str, length: int, rows: int, target: str):
    """(compiled error, eager error) against float64 for the gradient of
    sum(fn(x) * g) with respect to x (g: a fixed standard normal cotangent per output):
    the backward graph AOTAutograd compiles, whose sums run over the same long rows."""
    import dyno

    fn = REDUCTIONS[op]
    x = make_input(data, length, rows)
    if op in ("softmax", "log_softmax", "logsumexp") and DATA[data] is None:
        x = x * 4
    generator = torch.Generator().manual_seed(1)
    outputs, _ = torch.utils._pytree.tree_flatten(fn(x))
    cotangents = [torch.randn(o.shape, generator=generator) for o in outputs]

    def gradient(function, t, dtype):
        t = t.to(dtype).detach().requires_grad_()
        results, _ = torch.utils._pytree.tree_flatten(function(t))
        loss = sum((r * g.to(dtype)).sum() for r, g in zip(results, cotangents))
        return torch.autograd.grad(loss, t)[0]

    reference = gradient(fn, x, torch.float64)
    eager = gradient(fn, x, torch.float32)
    torch._dynamo.reset()
    dyno.reset_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = gradient(torch.compile(fn, backend="mlir", options={"target": target}),
                            x, torch.float32)
    stats = dyno.stats()
    if stats["fallback_graphs"] or stats["runtime_fallbacks"] or \
            stats["partially_compiled_graphs"] or stats.get("split_graphs") or \
            stats["compiled_graphs"] < 2:
        raise NotCompiled(f"{op}'s forward and backward did not compile fully: "
                          f"{stats['fallback_reasons']} ({stats['compiled_graphs']} graphs)")
    return relative_error(compiled, reference), relative_error(eager, reference)


def bound(eager_error: float) -> float:
    """The largest compiled error issue 19 accepts."""
    return max(4 * eager_error, 1e-6)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default=",".join(REDUCTIONS))
    parser.add_argument("--data", default=",".join(DATA))
    parser.add_argument("--lengths", default=",".join(str(n) for n in LONG_LENGTHS))
    parser.add_argument("--target", default="cpu,triton")
    parser.add_argument("--rows", default="1,4")
    parser.add_argument("--backward", action="store_true",
                        help="the gradient of sum(fn(x) * g) (the compiled backward graph)")
    args = parser.parse_args()
    run = measure_backward if args.backward else measure
    failures = not_compiled = 0
    print(f"{'target':7s} {'op':15s} {'data':12s} {'length':>9s} {'rows':>4s} "
          f"{'compiled':>9s} {'eager':>9s} ratio  verdict", flush=True)
    for target in args.target.split(","):
        for op in args.ops.split(","):
            for data in args.data.split(","):
                for length in (int(float(n)) for n in args.lengths.split(",")):
                    for rows in (int(r) for r in args.rows.split(",")):
                        if op == "sum_all" and rows > 1:
                            continue
                        try:
                            compiled, eager = run(op, data, length, rows, target)
                        except NotCompiled as error:
                            not_compiled += 1
                            print(f"{target:7s} {op:15s} {data:12s} {length:9d} {rows:4d} "
                                  f"NOT COMPILED: {str(error)[-160:]}", flush=True)
                            continue
                        ok = compiled <= bound(eager)
                        failures += not ok
                        ratio = compiled / eager if eager else math.inf if compiled else 1.0
                        print(f"{target:7s} {op:15s} {data:12s} {length:9d} {rows:4d} "
                              f"{compiled:9.2e} {eager:9.2e} {ratio:5.1f}  "
                              f"{'ok' if ok else 'LESS ACCURATE'}", flush=True)
    print(f"{failures} cases less accurate than the bar (max(4x eager, 1e-6)), "
          f"{not_compiled} not compiled")
    sys.exit(1 if failures or not_compiled else 0)


if __name__ == "__main__":
    main()
