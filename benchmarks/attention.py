"""Attention on the CPU: PyTorch's fused flash kernel as a library call, against Dyno's
own compiled decomposition (matmul, softmax, matmul), in one run beside eager.

    python benchmarks/attention.py [--cases a,b] [--dtypes float32,bfloat16]
                                   [--rounds N] [--iters N] [--out FILE]

"library" is Dyno as shipped on the CPU target (`_scaled_dot_product_flash_attention_for_cpu`
and its backward stay dyno.library_calls); "decomposed" compiles the same graph with the
Triton target's decomposition (dyno/attention_decompositions.py) on the CPU target, which
this script selects for that compile only. Cases: `F.scaled_dot_product_attention` alone
(inference; and forward + backward, "train"), causal, unmasked and with an additive mask,
at the transformers zoo's CPU and GPU benchmark shapes and longer sequences; then whole
zoo models (benchmarks/zoo.py, "cpu" size). Each variant's largest difference from eager
is printed beside its time.

Backends run in blocks (warm-up, then `--iters` calls), repeated `--rounds` times in
rotation; times are medians over all timed calls.
"""
import argparse
import contextlib
import datetime
import platform
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, __import__("os").path.dirname(__file__))
import zoo  # noqa: E402
from report import geomean, publish  # noqa: E402
from run import time_calls  # noqa: E402

import dyno  # noqa: E402
from dyno import decompositions  # noqa: E402

SHAPES = {  # batch, heads, tokens, head width
    "zoo-cpu": (4, 4, 128, 64), "zoo-bench": (8, 8, 256, 64),
    "long": (1, 8, 1024, 64), "wide": (2, 16, 512, 64)}
ZOO_MODELS = ("gpt2", "llama", "bert", "bart", "vit")


@contextlib.contextmanager
def _decomposed_attention():
    shipped = decompositions.ATTENTION_LIBRARY_TARGETS
    decompositions.ATTENTION_LIBRARY_TARGETS = ()
    try:
        yield
    finally:
        decompositions.ATTENTION_LIBRARY_TARGETS = shipped


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


def first_tensors(output):
    """The logits of a transformers output, or the tensors of a plain one."""
    if hasattr(output, "logits"):
        return output.logits
    if hasattr(output, "last_hidden_state"):
        return output.last_hidden_state
    return output


def measure(name, model, inputs, train, rounds, iters):
    # Two different backends (Dynamo shares cache entries between equal ones): the first
    # compiles with the decomposition.
    decomposed = torch.compile(model, backend="mlir", options={"target": "cpu"})
    library = torch.compile(model, backend="mlir")
    backends = {"eager": model, "decomposed": decomposed, "library": library}
    context = contextlib.nullcontext() if train else torch.no_grad()
    with context:
        dyno.reset_stats()
        outputs = {}
        for label, fn in backends.items():
            with _decomposed_attention() if label == "decomposed" else contextlib.nullcontext():
                outputs[label] = first_tensors(fn(*inputs))  # compiles
        stats = dyno.stats()
        if stats["fallback_graphs"] or stats["runtime_fallbacks"] or stats["fallback_ops"]:
            raise SystemExit(f"{name}: Dyno fell back: {stats['fallback_reasons']} "
                             f"{stats['fallback_ops']}")
        library_calls = sum(n for op, n in stats["library_calls"].items()
                            if "flash_attention" in op)
        if not library_calls:
            raise SystemExit(f"{name}: the library variant made no flash attention call")
        samples = {label: [] for label in backends}
        for label, fn in backends.items():
            time_calls(fn, inputs, 2)
        for _ in range(rounds):
            for label, fn in backends.items():
                samples[label] += time_calls(fn, inputs, iters)
    medians = {label: statistics.median(s) for label, s in samples.items()}
    errors = {label: difference(outputs[label], outputs["eager"])
              for label in ("decomposed", "library")}
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
        f"Command: python benchmarks/attention.py --rounds {args.rounds} --iters {args.iters}"
        + (f" --cases {args.cases}" if args.cases else "") + f" --dtypes {args.dtypes}"
        + f" --zoo {args.zoo}",
        "library: Dyno as shipped (PyTorch's fused CPU flash kernels as library calls);",
        "decomposed: matmul + softmax + matmul compiled by Dyno. Times are medians per call",
        "from one run; differences are max |variant - eager| / max |eager|.",
        "",
        "| case | dtype | eager (us) | decomposed (us) | library (us) "
        "| decomposed / library time | library speedup over eager "
        "| decomposed difference | library difference |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for dtype_name in args.dtypes.split(","):
        ratios = []
        for name, row_dtype, medians, errors in rows:
            if row_dtype != dtype_name:
                continue
            ratio = medians["decomposed"] / medians["library"]
            ratios.append(ratio)
            lines.append(
                f"| {name} | {row_dtype} | {medians['eager'] * 1e6:.0f} "
                f"| {medians['decomposed'] * 1e6:.0f} | {medians['library'] * 1e6:.0f} "
                f"| {ratio:.2f} | {medians['eager'] / medians['library']:.2f}x "
                f"| {errors['decomposed']:.1e} | {errors['library']:.1e} |")
        if ratios:
            lines.append(f"| **geomean** | {dtype_name} | | | | {geomean(ratios):.2f} | | | |")
    publish(lines, args.out)


if __name__ == "__main__":
    main()
