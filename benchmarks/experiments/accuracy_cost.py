"""What the accurate long reductions cost (issue 19): fused layernorm/softmax kernels and
large sums compiled by Dyno before and after, timed in one run beside eager.

    python benchmarks/experiments/accuracy_cost.py [--cases a,b] [--rounds N] [--iters N]
                                                   [--out FILE]

"before" compiles with the forms Dyno had before issue 19: no blocked sums
(`options={"block_long_sums": False}`, dyno-block-long-sums left out of the lowering) and
the plain two-pass variance (the mean, then the squared deviations from it), which this
script puts in place of Dyno's shifted, corrected one for that compile only. "after" is
Dyno as shipped. Each variant's error against float64 (max |error| / max |reference|)
is printed beside eager's, on the same inputs.

Backends run in blocks (warm-up, then `--iters` calls), repeated `--rounds` times in
rotation; times are medians over all timed calls.
"""
import argparse
import contextlib
import datetime
import math
import os
import platform
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # report
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo, models
from models import NormActBlock  # noqa: E402
from report import geomean, publish, time_calls  # noqa: E402

aten = torch.ops.aten


def _plain_two_pass_var_and_mean(x, dim, correction, keepdim):
    """Dyno's variance before issue 19: the mean, then the sum of squared deviations."""
    from dyno.ops import moment_decompositions

    dims = moment_decompositions._reduced_dims(x, dim)
    count = math.prod(x.shape[d] for d in dims) if x.dim() else 1
    correction = 1 if correction is None else correction
    mean = aten.mean.dim(x, dims, True)
    deviation = aten.sub.Tensor(x, mean)
    total = aten.sum.dim_IntList(aten.mul.Tensor(deviation, deviation), dims, keepdim)
    var = aten.div.Scalar(total, max(count - correction, 0))
    if not keepdim:
        mean = aten.squeeze.dims(mean, dims)
    return var, mean


@contextlib.contextmanager
def variance_before_issue_19():
    """The plain two-pass variance, and x - mean(x) left as it is (centred_differences
    would otherwise rewrite that variance's deviations)."""
    from dyno.lowering import frontend
    from dyno.ops import moment_decompositions

    shipped = moment_decompositions._var_and_mean, frontend.with_centred_differences
    moment_decompositions._var_and_mean = _plain_two_pass_var_and_mean
    frontend.with_centred_differences = lambda gm: gm
    try:
        yield
    finally:
        moment_decompositions._var_and_mean, frontend.with_centred_differences = shipped


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _uniform(shape, low, high):
    generator = torch.Generator().manual_seed(0)
    return torch.rand(shape, generator=generator) * (high - low) + low


def cases():
    """(name, model, input): fused kernels on the benchmark suite's sizes, then long
    rows and a whole-tensor sum of values near 100 (where a single accumulator per lane
    loses digits)."""
    torch.manual_seed(0)
    return [
        ("layernorm_gelu_softmax 256x1024", NormActBlock(), torch.randn(256, 1024)),
        ("layernorm_gelu_softmax 2048x1024", NormActBlock(), torch.randn(2048, 1024)),
        ("layer_norm 16x262144", torch.nn.LayerNorm(262144), _uniform((16, 262144), 100, 101)),
        ("softmax 16x262144", Fn(lambda x: torch.softmax(x, -1)), torch.randn(16, 262144)),
        ("sum 16M (whole tensor)", Fn(lambda x: x.sum()), _uniform((4096, 4096), 100, 101)),
        ("sum rows 16x1M", Fn(lambda x: x.sum(-1)), _uniform((16, 1 << 20), 100, 101)),
        ("var rows 4x4M", Fn(lambda x: x.var(-1)), _uniform((4, 1 << 22), 100, 101)),
    ]


def relative_error(got, reference) -> float:
    return ((got.double() - reference).abs().max() / reference.abs().max()).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="", help="comma-separated prefixes of case names")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    wanted = [c for c in args.cases.split(",") if c]
    import dyno

    rows = []
    for name, model, x in cases():
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        model = model.eval()
        with torch.no_grad():
            reference = model.double()(x.double())
            model.float()
            before = torch.compile(model, backend="mlir",
                                   options={"block_long_sums": False})
            after = torch.compile(model, backend="mlir")
            backends = {"eager": model, "before": before, "after": after}
            dyno.reset_stats()
            errors = {}
            for label, fn in backends.items():
                context = variance_before_issue_19() if label == "before" else \
                    contextlib.nullcontext()
                with context:
                    result = fn(x)  # compiles
                errors[label] = relative_error(result, reference)
            stats = dyno.stats()
            if stats["fallback_graphs"] or stats["runtime_fallbacks"]:
                raise SystemExit(f"{name}: Dyno fell back: {stats['fallback_reasons']}")
            samples = {label: [] for label in backends}
            for label, fn in backends.items():
                time_calls(fn, (x,), 3)
            for _ in range(args.rounds):
                for label, fn in backends.items():
                    samples[label] += time_calls(fn, (x,), args.iters)
        medians = {label: statistics.median(s) for label, s in samples.items()}
        rows.append((name, medians, errors))
        print(name, {k: f"{v * 1e6:.0f} us" for k, v in medians.items()},
              {k: f"{v:.1e}" for k, v in errors.items()}, flush=True)
        torch._dynamo.reset()

    lines = [
        f"# What accurate long reductions cost (CPU), {datetime.date.today()}",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} "
        f"threads; torch {torch.__version__}; Python {platform.python_version()}.",
        f"Command: python benchmarks/experiments/accuracy_cost.py --rounds {args.rounds} "
        f"--iters {args.iters}" + (f" --cases {args.cases}" if args.cases else ""),
        "before: no blocked sums, plain two-pass variance; after: Dyno as shipped. Times are",
        "medians per call from one run; errors are max |error| / max |reference| against",
        "float64 on the same input (float32 everywhere).",
        "",
        "| case | eager (us) | before (us) | after (us) | after / before time "
        "| eager error | before error | after error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for name, medians, errors in rows:
        ratio = medians["after"] / medians["before"]
        ratios.append(ratio)
        lines.append(f"| {name} | {medians['eager'] * 1e6:.0f} | {medians['before'] * 1e6:.0f} "
                     f"| {medians['after'] * 1e6:.0f} | {ratio:.2f} | {errors['eager']:.1e} "
                     f"| {errors['before']:.1e} | {errors['after']:.1e} |")
    lines.append(f"| **geomean** | | | | {geomean(ratios):.2f} | | | |")
    publish(lines, args.out)


if __name__ == "__main__":
    main()
