"""Runs PyTorch's OpInfo database through torch.compile(backend="mlir") and tabulates it.

    python e2e/opinfo_sweep.py                      # every op, float32, CPU target
    python e2e/opinfo_sweep.py --ops add,softmax    # a few ops
    python e2e/opinfo_sweep.py --out e2e/coverage.md
    python e2e/opinfo_sweep.py --target triton --out e2e/coverage-triton.md  # interpreted

For each op (and variant) the first `--samples` float32 sample inputs whose tensors all
have elements are compiled and compared with eager (samples with an empty tensor are
run too, but count only if they fail: an empty input proves nothing compiles) (ops returning uninitialized memory, such as empty_like, are skipped) (rtol 1e-4, atol 1e-5; NaN equal to NaN; integers and bools exact).
An op's status is the worst over its samples, in this order:
  error        the compiled call raised where eager did not
  mismatch     compiled results differ from eager (a miscompile)
  fell back    the whole graph ran eagerly (the reason is recorded)
  partly       some ops ran eagerly, the rest compiled
  compiled     every graph compiled, no fallback (the reason column names the library
               routines, LAPACK or pocketfft, that compiled graphs call: dyno.library_call)
  no graph     Dynamo produced no graph for Dyno (nothing to compile)
"""
import argparse
import collections
import sys
import warnings

import torch

ORDER = ["error", "mismatch", "fell back", "partly", "compiled", "no graph"]

# Ops whose results are uninitialized memory: nothing to compare.
UNINITIALIZED = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided",
                 "empty_permuted"}


def _compare(actual, expected) -> bool:
    flat_actual, _ = torch.utils._pytree.tree_flatten(actual)
    flat_expected, _ = torch.utils._pytree.tree_flatten(expected)
    if len(flat_actual) != len(flat_expected):
        return False
    for got, want in zip(flat_actual, flat_expected):
        if isinstance(want, torch.Tensor):
            if not isinstance(got, torch.Tensor) or got.shape != want.shape:
                return False
            if want.dtype.is_floating_point or want.dtype.is_complex:
                try:
                    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5,
                                               equal_nan=True, check_dtype=True)
                except AssertionError:
                    return False
            elif got.dtype != want.dtype or not torch.equal(got, want):
                return False
        elif got != want and not (got != got and want != want):  # NaN scalars
            return False
    return True


def _tensors(value):
    flat, _ = torch.utils._pytree.tree_flatten(value)
    return [item for item in flat if isinstance(item, torch.Tensor)]


def _has_empty_input(sample) -> bool:
    return any(t.numel() == 0 for t in _tensors((sample.input, sample.args, sample.kwargs)))


def computes_nothing(sample, expected) -> bool:
    """Whether a sample has an empty tensor input, or only empty tensor results:
    nothing to compute, so it cannot show that an op compiles."""
    outputs = _tensors(expected)
    return (_has_empty_input(sample) or
            (bool(outputs) and all(t.numel() == 0 for t in outputs)))


def run_sample(op, sample, target="cpu"):
    """Returns (status, reason, computes nothing) for one sample input, or None when
    eager rejects it."""
    result = _run_sample(op, sample, target)
    if result is None:
        return None
    status, reason, expected = result
    return status, reason, computes_nothing(sample, expected)


def _run_sample(op, sample, target):
    import dyno

    def fn(x, *args):
        return op(x, *args, **sample.kwargs)

    arguments = (sample.input, *sample.args)
    try:
        expected = fn(*arguments)
    except Exception:
        return None  # eager rejects the sample: nothing to compare
    torch._dynamo.reset()
    dyno.reset_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            actual = torch.compile(fn, backend="mlir", options={"target": target})(*arguments)
        except Exception as error:
            return ("error", f"{type(error).__name__}: {str(error).splitlines()[0][:150]}",
                    expected)
    stats = dyno.stats()
    if not _compare(actual, expected):
        return "mismatch", "", expected
    if stats["runtime_fallbacks"]:
        return "fell back", "runtime: " + stats["fallback_reasons"][-1][:150], expected
    if stats["fallback_graphs"]:
        reason = stats["fallback_reasons"][0].split(": ", 1)[-1]
        return "fell back", reason.splitlines()[0][:150], expected
    if stats["partially_compiled_graphs"]:
        return "partly", "eager: " + ", ".join(stats["fallback_ops"]), expected
    if stats["compiled_graphs"]:
        library = ", ".join(sorted(stats["library_calls"]))
        return "compiled", f"library calls: {library}" if library else "", expected
    return "no graph", "", expected


def sweep(names, samples_per_op, target="cpu"):
    from torch.testing._internal.common_methods_invocations import op_db

    rows = []
    for info in op_db:
        full_name = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
        if names and info.name not in names and full_name not in names:
            continue
        if torch.float32 not in info.supported_dtypes("cpu") or info.name in UNINITIALIZED:
            continue
        results = []
        try:
            samples = info.sample_inputs("cpu", torch.float32, requires_grad=False)
            counted, empty_results = 0, []
            for sample in samples:
                if counted == samples_per_op:
                    break
                # A sample with an empty tensor input (ops such as svd list dozens of
                # them first) is skipped after the first few; one that computes nothing
                # can show an error or a mismatch, but never that the op compiles.
                if len(empty_results) >= samples_per_op and _has_empty_input(sample):
                    continue
                result = run_sample(info.op, sample, target)
                if result is None:
                    continue
                if result[2]:
                    empty_results.append(result[:2])
                    continue
                counted += 1
                results.append(result[:2])
            results += [r for r in empty_results
                        if r[0] in ("error", "mismatch") or not counted]
        except Exception as error:  # a sample generator that fails here
            results.append(("error", f"samples: {type(error).__name__}: {error}"[:150]))
        if not results:
            continue
        status, reason = min(results, key=lambda r: ORDER.index(r[0]))
        rows.append((full_name, status, reason))
        print(f"{full_name:40s} {status:10s} {reason}", flush=True)
    return rows


def report(rows, target="cpu") -> str:
    counts = collections.Counter(status for _, status, _ in rows)
    total = len(rows)
    name = {"cpu": "CPU target", "triton": "Triton target (interpreted on CPU)"}[target]
    command = ("python e2e/opinfo_sweep.py --out e2e/coverage.md" if target == "cpu" else
               "python e2e/opinfo_sweep.py --target triton --out e2e/coverage-triton.md")
    lines = [
        f"# OpInfo coverage of the {name} (float32)",
        "",
        f"Command: `{command}` (first 2 samples with elements per op;",
        "rtol 1e-4, atol 1e-5). Statuses are defined in e2e/opinfo_sweep.py.",
        "",
        "| status | ops | share |",
        "|---|---|---|",
    ]
    for status in ORDER:
        lines.append(f"| {status} | {counts[status]} | {100 * counts[status] / max(total, 1):.1f}% |")
    library = sum(1 for _, status, reason in rows
                  if status == "compiled" and reason.startswith("library calls"))
    lines += [f"| total | {total} | |", "",
              f"Of the compiled ops, {library} call a library routine (LAPACK, pocketfft) "
              "from the compiled graph (dyno.library_call), as matmul calls BLAS; "
              f"{counts['compiled'] - library} run in Dyno's kernels alone.", "",
              "| op | status | reason |", "|---|---|---|"]
    for name, status, reason in sorted(rows):
        lines.append(f"| {name} | {status} | {reason.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default="")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--out", default="")
    parser.add_argument("--target", default="cpu", choices=["cpu", "triton"])
    args = parser.parse_args()
    rows = sweep(set(filter(None, args.ops.split(","))), args.samples, args.target)
    text = report(rows, args.target)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
    counts = collections.Counter(status for _, status, _ in rows)
    print(", ".join(f"{counts[s]} {s}" for s in ORDER), f"of {len(rows)} ops")
    sys.exit(0)


if __name__ == "__main__":
    main()
