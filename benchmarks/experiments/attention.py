"""Attention on the CPU: PyTorch's fused flash kernels as library calls, against Dyno's
own compiled decomposition (matmul, softmax, matmul), in one run beside eager.

    python benchmarks/experiments/attention.py [--cases a,b] [--dtypes float32,bfloat16]
                                   [--rounds N] [--iters N] [--out FILE]

"kernels" calls `_scaled_dot_product_flash_attention_for_cpu` and its backward as
dyno.library_calls; "decomposed" compiles the same graph with the Triton target's
decomposition (dyno/attention_decompositions.py) on the CPU target; "shipped" is Dyno as
it is: the kernels, but for the backward of short bf16/fp16 attention, which it
decomposes (attention_decompositions.LOW_PRECISION_BACKWARD_SCORES, set from this
script's measurements). The script selects each variant for its compile only. Cases: `F.scaled_dot_product_attention` alone
(inference; and forward + backward, "train"), causal, unmasked and with an additive mask,
at the transformers zoo's CPU and GPU benchmark shapes and longer sequences; then whole
zoo models (e2e/zoo.py, "cpu" size). Each variant's largest difference from eager
is printed beside its time.

Backends run in blocks (warm-up, then `--iters` calls), repeated `--rounds` times in
rotation; times are medians over all timed calls.
"""
import argparse
import contextlib
import datetime
import os
import platform
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # report
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo, models
import zoo  # noqa: E402
from report import geomean, publish  # noqa: E402
from report import time_calls  # noqa: E402

import dyno  # noqa: E402
from dyno.ops import attention_decompositions, decompositions  # noqa: E402

SHAPES = {  # batch, heads, tokens, head width
    "short": (4, 4, 64, 64), "zoo-cpu": (4, 4, 128, 64), "mid": (4, 4, 192, 64),
    "zoo-bench": (8, 8, 256, 64),
    "long": (1, 8, 1024, 64), "wide": (2, 16, 512, 64)}
ZOO_MODELS = ("gpt2", "llama", "bert", "bart", "vit")


@contextlib.contextmanager
def _variant(label):
    """Compiles made inside select the variant `label`."""
    table = decompositions.table
    limit = attention_decompositions.LOW_PRECISION_BACKWARD_SCORES
    if label == "decomposed":  # the CPU target decomposes attention as the Triton target
        decompositions.table = lambda target: table("triton")
    elif label == "kernels":
        attention_decompositions.LOW_PRECISION_BACKWARD_SCORES = 0
    try:
        yield
    finally:
        decompositions.table = table
        attention_decompositions.LOW_PRECISION_BACKWARD_SCORES = limit


class Attention(torch.nn.Module):
    def __init__(self, variant, mask, train):
        super().__init__()
        self.variant, self.mask, self.train_step = variant, mask, train

    def forward(self, q, k, v):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask,
                                             is_causal=self.variant == "causal")
        if not self.train_step:
            return out
        return torch.autograd.grad(out.float().square().sum(), (q, k, v))


def attention_cases(dtype):
    generator = torch.Generator().manual_seed(0)
    for shape_name, (batch, heads, tokens, width) in SHAPES.items():
        for variant in ("causal", "full", "additive"):
            for train in (False, True):
                if train and shape_name in ("long", "wide"):
                    continue
                q, k, v = (torch.randn(batch, heads, tokens, width, generator=generator)
                           .to(dtype).requires_grad_(train) for _ in range(3))
                mask = torch.randn(tokens, tokens, generator=generator).to(dtype) \
                    if variant == "additive" else None
                name = f"sdpa {shape_name} {variant}{' train' if train else ''}"
                yield name, Attention(variant, mask, train), (q, k, v), train


def zoo_cases(dtype, names):
    for name in names:
        model, inputs = zoo.build(name, dtype=dtype, size="cpu")
        yield f"zoo {name}", model.eval(), tuple(inputs), False


def difference(got, want) -> float:
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    return max(((g.float() - w.float()).abs().max() / w.float().abs().max().clamp_min(1e-30))
               .item() for g, w in zip(got, want) if isinstance(g, torch.Tensor))


def measure(name, model, inputs, train, rounds, iters):
    # Different backends (Dynamo shares cache entries between equal ones).
    backends = {"eager": model,
                "decomposed": torch.compile(model, backend="mlir", options={"target": "cpu"}),
                "kernels": torch.compile(model, backend="mlir", options={"target": "auto"}),
                "shipped": torch.compile(model, backend="mlir")}
    context = contextlib.nullcontext() if train else torch.no_grad()
    with context:
        dyno.reset_stats()
        outputs = {}
        for label, fn in backends.items():
            with _variant(label):
                outputs[label] = fn(*inputs)  # compiles (zoo.build's models return logits)
        stats = dyno.stats()
        if stats["fallback_graphs"] or stats["runtime_fallbacks"] or stats["fallback_ops"]:
            raise SystemExit(f"{name}: Dyno fell back: {stats['fallback_reasons']} "
                             f"{stats['fallback_ops']}")
        library_calls = sum(n for op, n in stats["library_calls"].items()
                            if "flash_attention" in op)
        if not library_calls:
            raise SystemExit(f"{name}: the kernels variant made no flash attention call")
        samples = {label: [] for label in backends}
        for label, fn in backends.items():
            time_calls(fn, inputs, 2)
        for _ in range(rounds):
            for label, fn in backends.items():
                samples[label] += time_calls(fn, inputs, iters)
    medians = {label: statistics.median(s) for label, s in samples.items()}
    errors = {label: difference(outputs[label], outputs["eager"])
              for label in ("decomposed", "kernels", "shipped")}
    return medians, errors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="", help="comma-separated prefixes of case names")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--zoo", default=",".join(ZOO_MODELS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    wanted = [c for c in args.cases.split(",") if c]
    zoo_names = [n for n in args.zoo.split(",") if n]

    rows = []
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        for name, model, inputs, train in [*attention_cases(dtype), *zoo_cases(dtype, zoo_names)]:
            if wanted and not any(name.startswith(w) for w in wanted):
                continue
            medians, errors = measure(name, model, inputs, train, args.rounds, args.iters)
            rows.append((name, dtype_name, medians, errors))
            print(name, dtype_name, {k: f"{v * 1e6:.0f} us" for k, v in medians.items()},
                  {k: f"{v:.1e}" for k, v in errors.items()}, flush=True)
            torch._dynamo.reset()

    lines = [
        f"# Attention on the CPU: flash kernel (library call) vs Dyno's decomposition, "
        f"{datetime.date.today()}",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} "
        f"threads; torch {torch.__version__}; Python {platform.python_version()}.",
        f"Command: python benchmarks/experiments/attention.py --rounds {args.rounds} "
        f"--iters {args.iters}"
        + (f" --cases {args.cases}" if args.cases else "") + f" --dtypes {args.dtypes}"
        + f" --zoo {args.zoo}",
        "kernels: PyTorch's fused CPU flash kernels as library calls; decomposed: matmul +",
        "softmax + matmul compiled by Dyno; shipped: Dyno as it is (the kernels, but short",
        "bf16/fp16 backwards decomposed). Times are medians per call from one run;",
        "differences are max |variant - eager| / max |eager|.",
        "",
        "| case | dtype | eager (us) | decomposed (us) | kernels (us) | shipped (us) "
        "| decomposed / kernels time | shipped speedup over eager "
        "| decomposed difference | kernels difference | shipped difference |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for dtype_name in args.dtypes.split(","):
        ratios, speedups = [], []
        for name, row_dtype, medians, errors in rows:
            if row_dtype != dtype_name:
                continue
            ratio = medians["decomposed"] / medians["kernels"]
            speedup = medians["eager"] / medians["shipped"]
            ratios.append(ratio)
            speedups.append(speedup)
            lines.append(
                f"| {name} | {row_dtype} | {medians['eager'] * 1e6:.0f} "
                f"| {medians['decomposed'] * 1e6:.0f} | {medians['kernels'] * 1e6:.0f} "
                f"| {medians['shipped'] * 1e6:.0f} | {ratio:.2f} | {speedup:.2f}x "
                f"| {errors['decomposed']:.1e} | {errors['kernels']:.1e} "
                f"| {errors['shipped']:.1e} |")
        if ratios:
            lines.append(f"| **geomean** | {dtype_name} | | | | | {geomean(ratios):.2f} "
                         f"| {geomean(speedups):.2f}x | | | |")
    publish(lines, args.out)


if __name__ == "__main__":
    main()
