"""Runs PyTorch's OpInfo database through torch.compile(backend="mlir") and tabulates it.

    python e2e/opinfo_sweep.py                      # every op, float32, CPU target
    python e2e/opinfo_sweep.py --ops add,softmax    # a few ops
    python e2e/opinfo_sweep.py --out e2e/coverage.md
    python e2e/opinfo_sweep.py --target triton --out e2e/coverage-triton.md  # interpreted
    python e2e/opinfo_sweep.py --dtype bfloat16 --out e2e/coverage-bfloat16.md

For each op (and variant) the first `--samples` sample inputs of the dtype (float32 unless
`--dtype bfloat16` or `--dtype float16`) whose tensors all have elements are compiled and
compared with eager (samples with an empty tensor are run too, but count only if they
fail: an empty input proves nothing compiles; ops returning uninitialized memory, such as
empty_like, are skipped). Tolerances per dtype (TOLERANCES: float32 rtol 1e-4, atol 1e-5;
bfloat16 and float16 those of torch.testing.assert_close); NaN equal to NaN; integers and
bools exact. In bfloat16 and float16 Dyno computes in float32 and rounds where results are
stored, eager rounds after every op: a result outside the tolerance still counts as
matching when it is at least as close as eager's to the op computed in float32 from the
same inputs ("more accurate than eager" in the reason column), or, where the sample passes
float scalars (a margin, a threshold), to the op computed in float32 with those scalars
rounded to the sample's dtype: eager rounds them so (ATen's composites spell
`margin - input` as a tensor filled with the margin, and its CPU kernels read a scalar
operand in the tensor's dtype), so every low-precision evaluation of the op computes
with the rounded value, and against the unrounded one an exact result can lose to one
whose roundings happen to cancel the scalar's ("... with its scalars rounded to float16").
An op's status is the worst over its samples, in this order:
  error        the compiled call raised where eager did not
  mismatch     compiled results differ from eager beyond the dtype's tolerance and are
               less accurate than eager's (a miscompile)
  fell back    the whole graph ran eagerly (the reason is recorded)
  partly       some ops ran eagerly, the rest compiled
  compiled     every graph compiled, no fallback (the reason column names the library
               routines, LAPACK or pocketfft, that compiled graphs call: dyno.library_call)
  no graph     Dynamo produced no graph for Dyno (nothing to compile)
"""
import argparse
import collections
import os
import sys
import warnings

import torch

ORDER = ["error", "mismatch", "fell back", "partly", "compiled", "no graph"]

# Ops whose results are uninitialized memory: nothing to compare.
UNINITIALIZED = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided",
                 "empty_permuted"}


# (rtol, atol) per dtype: float32 tighter than assert_close's default; the low precisions
# assert_close's own (one bfloat16 ulp is 7.8e-3 relative, one float16 ulp 9.8e-4).
TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.bfloat16: (1.6e-2, 1e-5),
              torch.float16: (1e-3, 1e-5)}
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _compare(actual, expected, tolerance=TOLERANCES[torch.float32]) -> bool:
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
                    torch.testing.assert_close(got, want, rtol=tolerance[0],
                                               atol=tolerance[1], equal_nan=True,
                                               check_dtype=True)
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


def run_sample(op, sample, target="cpu", dtype=torch.float32):
    """Returns (status, reason, computes nothing) for one sample input, or None when
    eager rejects it."""
    result = _run_sample(op, sample, target, dtype)
    if result is None:
        return None
    status, reason, expected = result
    return status, reason, computes_nothing(sample, expected)


def _widened(value):
    """value with its bfloat16 and float16 tensors in float32."""
    return torch.utils._pytree.tree_map(
        lambda item: item.float() if isinstance(item, torch.Tensor) and
        item.dtype in (torch.bfloat16, torch.float16) else item, value)


def _worst_error(got, reference, tolerance) -> float:
    """Largest |got - reference| in units of the tolerance (atol + rtol |reference|);
    NaN where the reference has NaN counts as exact, NaN elsewhere as infinite."""
    got, reference = got.double(), reference.double()
    error = (got - reference).abs() / (tolerance[1] + tolerance[0] * reference.abs())
    error = torch.where(reference.isnan() & got.isnan(), 0.0, error)
    error = torch.where(got.isnan() & ~reference.isnan(), float("inf"), error)
    infinite = reference.isinf() | got.isinf()
    error = torch.where(infinite, torch.where(got == reference, 0.0, float("inf")), error)
    return error.max().item() if error.numel() else 0.0


def _scalars_rounded(value, dtype):
    """value with its Python floats rounded to `dtype` (tensors and integers as they are)."""
    return torch.utils._pytree.tree_map(
        lambda item: float(torch.tensor(item, dtype=dtype)) if type(item) is float else item,
        value)


def _at_least_as_accurate(actual, expected, reference, tolerance) -> bool:
    """Whether every low-precision float result of the compiled call is at least as close
    as eager's to the float32 reference."""
    flat = [torch.utils._pytree.tree_flatten(v)[0] for v in (actual, expected, reference)]
    if not len(flat[0]) == len(flat[1]) == len(flat[2]):
        return False
    for got, want, exact in zip(*flat):
        if not isinstance(want, torch.Tensor):
            if got != want and not (got != got and want != want):
                return False
            continue
        if (not isinstance(got, torch.Tensor) or not isinstance(exact, torch.Tensor) or
                got.shape != want.shape or exact.shape != want.shape or
                got.dtype != want.dtype):
            return False
        if want.dtype not in (torch.bfloat16, torch.float16):
            if not _compare(got, want, tolerance):
                return False
        elif _worst_error(got, exact, tolerance) > max(_worst_error(want, exact, tolerance),
                                                        1.0):
            return False
    return True


def _sort_dim(name, sample):
    """The dimension a sort-like op orders along, from its sample's arguments."""
    position = {"sort": 0, "argsort": 0, "topk": 1}[name]
    if len(sample.args) > position:
        return sample.args[position]
    return sample.kwargs.get("dim", -1)


def _same_up_to_tie_order(name, sample, actual, expected) -> bool:
    """sort/argsort/topk without stable=True may order equal elements either way (eager's
    CPU sort is not stable; Dyno's is): the compiled result counts as equal when its
    indices pick the same values as eager's, in the same places."""
    if name not in ("sort", "argsort", "topk") or sample.kwargs.get("stable"):
        return False
    dim = _sort_dim(name, sample)
    got_indices = actual if name == "argsort" else actual[1]
    want_indices = expected if name == "argsort" else expected[1]
    if got_indices.shape != want_indices.shape:
        return False
    x = sample.input.reshape(1) if sample.input.dim() == 0 else sample.input
    picked = lambda indices: x.gather(dim, indices.reshape(1) if indices.dim() == 0  # noqa: E731
                                      else indices)
    if not torch.equal(picked(got_indices), picked(want_indices)):
        return False
    return name == "argsort" or torch.equal(actual[0], expected[0])


def _run_sample(op, sample, target, dtype=torch.float32):
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
    tolerance = TOLERANCES[dtype]
    accuracy_note = ""
    if not _compare(actual, expected, tolerance) and _same_up_to_tie_order(
            getattr(op, "__name__", ""), sample, actual, expected):
        accuracy_note = "equal elements in another order than eager's (unstable) sort"
    elif not _compare(actual, expected, tolerance):
        if dtype == torch.float32:
            return "mismatch", "", expected
        try:  # the op in float32 on the same (rounded) inputs
            widened_kwargs = _widened(sample.kwargs)
            reference = op(*_widened(arguments), **widened_kwargs)
        except Exception:
            return "mismatch", "no float32 reference", expected
        accuracy_note = "more accurate than eager (outside the tolerance of eager's result)"
        if not _at_least_as_accurate(actual, expected, reference, tolerance):
            scalars = [item for item in torch.utils._pytree.tree_flatten(
                (arguments, sample.kwargs))[0] if type(item) is float]
            if _scalars_rounded(scalars, dtype) == scalars:  # nothing eager rounds
                return "mismatch", "less accurate than eager against float32", expected
            rounded_args, rounded_kwargs = _scalars_rounded((arguments, sample.kwargs), dtype)
            try:  # the op in float32 with the scalars eager rounds rounded
                reference = op(*_widened(rounded_args), **_widened(rounded_kwargs))
            except Exception:
                return "mismatch", "less accurate than eager against float32", expected
            if not _at_least_as_accurate(actual, expected, reference, tolerance):
                return "mismatch", "less accurate than eager against float32", expected
            dtype_name = str(dtype).removeprefix("torch.")
            accuracy_note = (f"more accurate than eager against the op with its scalars "
                             f"rounded to {dtype_name}")
    if stats["runtime_fallbacks"]:
        reason = stats["fallback_reasons"][-1]
        if "TritonCompileCheckError" in reason:  # DYNO_TRITON_COMPILE_CHECK
            return "error", "GPU compiler: " + reason.split("TritonCompileCheckError")[-1][:150], expected
        return "fell back", "runtime: " + reason[:150], expected
    if stats["fallback_graphs"]:
        reason = stats["fallback_reasons"][0].split(": ", 1)[-1]
        return "fell back", reason.splitlines()[0][:150], expected
    if stats["partially_compiled_graphs"]:
        return "partly", "eager: " + ", ".join(stats["fallback_ops"]), expected
    if stats["compiled_graphs"]:
        library = ", ".join(sorted(stats["library_calls"]))
        notes = [f"library calls: {library}" if library else "", accuracy_note]
        return "compiled", "; ".join(filter(None, notes)), expected
    return "no graph", "", expected


def sweep(names, samples_per_op, target="cpu", dtype=torch.float32):
    from torch.testing._internal.common_methods_invocations import op_db

    from tqdm import tqdm

    def full(info):
        return info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")

    ops = [info for info in op_db
           if (not names or info.name in names or full(info) in names)
           and dtype in info.supported_dtypes("cpu") and info.name not in UNINITIALIZED]
    # A progress bar on a terminal (stderr), above which each op's line is printed.
    bar = tqdm(ops, desc=f"OpInfo sweep, {target}, {str(dtype).removeprefix('torch.')}",
               unit="op", file=sys.stderr, disable=not sys.stderr.isatty())
    rows = []
    for info in bar:
        full_name = full(info)
        results = []
        try:
            samples = info.sample_inputs("cpu", dtype, requires_grad=False)
            counted, empty_results = 0, []
            for sample in samples:
                if counted == samples_per_op:
                    break
                # A sample with an empty tensor input (ops such as svd list dozens of
                # them first) is skipped after the first few; one that computes nothing
                # can show an error or a mismatch, but never that the op compiles.
                if len(empty_results) >= samples_per_op and _has_empty_input(sample):
                    continue
                result = run_sample(info.op, sample, target, dtype)
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
        # The worst status; among samples of that status, one with a reason to give.
        status, reason = min(results, key=lambda r: (ORDER.index(r[0]), not r[1]))
        rows.append((full_name, status, reason))
        bar.write(f"{full_name:40s} {status:10s} {reason}", file=sys.stdout)
        sys.stdout.flush()
    return rows


def command_line(target="cpu", dtype=torch.float32) -> str:
    """The sweep's command for one table, e.g. e2e/coverage-triton-bfloat16.md."""
    dtype_name = str(dtype).removeprefix("torch.")
    suffix = ("" if target == "cpu" else "-triton") + (
        "" if dtype == torch.float32 else f"-{dtype_name}")
    options = ("" if target == "cpu" else " --target triton") + (
        "" if dtype == torch.float32 else f" --dtype {dtype_name}")
    return f"python e2e/opinfo_sweep.py{options} --out e2e/coverage{suffix}.md"


def report(rows, target="cpu", dtype=torch.float32) -> str:
    counts = collections.Counter(status for _, status, _ in rows)
    total = len(rows)
    name = {"cpu": "CPU target", "triton": "Triton target (interpreted on CPU)"}[target]
    dtype_name = str(dtype).removeprefix("torch.")
    rtol, atol = TOLERANCES[dtype]
    check = os.environ.get("DYNO_TRITON_COMPILE_CHECK", "")
    lines = [
        f"# OpInfo coverage of the {name} ({dtype_name})",
        "",
        f"Command: `{command_line(target, dtype)}` (first 2 samples with elements per op;",
        f"rtol {rtol:g}, atol {atol:g}). Statuses are defined in e2e/opinfo_sweep.py.",
    ]
    if target == "triton":
        lines.append(f"Triton's GPU compiler checked every kernel: "
                     f"DYNO_TRITON_COMPILE_CHECK={check}; a rejection counts as an error."
                     if check else "Triton's GPU compiler did not check the kernels.")
    if dtype != torch.float32:
        accurate = sum(1 for _, status, reason in rows
                       if status == "compiled" and "more accurate" in reason)
        lines.append(f"{accurate} compiled ops differ from eager beyond the tolerance and are "
                     "closer than eager to the op in float32 (counted as compiled).")
    lines += [
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
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    args = parser.parse_args()
    if args.target == "triton":  # the GPU compiler checks each kernel unless told not to
        os.environ.setdefault("DYNO_TRITON_COMPILE_CHECK", "cuda:90")
    dtype = DTYPES[args.dtype]
    rows = sweep(set(filter(None, args.ops.split(","))), args.samples, args.target, dtype)
    text = report(rows, args.target, dtype)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
    counts = collections.Counter(status for _, status, _ in rows)
    print(", ".join(f"{counts[s]} {s}" for s in ORDER), f"of {len(rows)} ops")
    sys.exit(0)


if __name__ == "__main__":
    main()
