"""Float32 matrix products on the GPU: cuBLAS's float32 GEMM (what eager and Inductor run,
TF32 off) against a Triton GEMM whose dot runs on the tensor cores as three TF32 products
(`input_precision="tf32x3"`: a = a_hi + a_lo, a_hi*b_hi + a_hi*b_lo + a_lo*b_hi), and the
single-TF32 and IEEE (FMA) dots for scale, and Dyno's own product as the wrapper calls it
(the Triton runtime's Float32Products: its heuristic configuration and direct launches). Accuracy against a float64 product on the GPU
(relative L2 distance), on three input kinds: normal activations and weights, positive activations (post-GELU-like; the
accumulation error grows), and inputs with a large common offset. Speed: do_bench medians.

    python3 benchmarks/experiments/gpu_f32_gemm_precision.py [--out results.md] [--shapes gpt2] [--weights-kn] [--rows 512,1024] [--quick]   # GPU machine

`--quick`: times only (cuBLAS's mm and addmm with a bias row, the best tf32x3, Dyno's
product with the bias), no accuracy. `--rows`: each shape again with A of these many rows.

Shapes: the zoo's float32 linear layers at "bench" size (2048 rows, width 512) and at
"real" size (GPT-2 124M, BERT-base, ViT-base, the 8-layer Llama of width 2048).
"""
import argparse
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

# Dyno's own tensor-core product (the Triton runtime, self-contained: torch and triton).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "dyno",
                                "targets", "triton"))
from runtime.float32_products import Float32Products  # noqa: E402

SHAPES = [
    # (name, M, K, N)
    ("bench qkv", 2048, 512, 1536),
    ("bench proj", 2048, 512, 512),
    ("bench ffn1", 2048, 512, 2048),
    ("bench ffn2", 2048, 2048, 512),
    ("gpt2 qkv", 4096, 768, 2304),
    ("gpt2 proj", 4096, 768, 768),
    ("gpt2 ffn1", 4096, 768, 3072),
    ("gpt2 ffn2", 4096, 3072, 768),
    ("gpt2 head", 4096, 768, 50264),
    ("vit ffn1", 6304, 768, 3072),
    ("llama q", 2048, 2048, 2048),
    ("llama kv", 2048, 2048, 256),
    ("llama ffn1", 2048, 2048, 5632),
    ("llama ffn2", 2048, 5632, 2048),
    ("llama head", 2048, 2048, 32000),
    ("vit proj", 6304, 768, 768),
    ("vit ffn2", 6304, 3072, 768),
    # ViT at "bench" size (8 images of 65 tokens): its q, k, v projections and MLP
    ("vitbench proj", 520, 512, 512),
    ("vitbench ffn1", 520, 512, 2048),
    ("vitbench ffn2", 520, 2048, 512),
    # Swin and ConvNeXt at "bench" size (width 128: K below 512)
    ("swinbench qkv", 2048, 128, 384),
    ("swinbench ffn1", 2048, 128, 512),
    ("swinbench ffn2", 2048, 512, 128),
]

CONFIGS = [
    triton.Config(dict(BM=bm, BN=bn, BK=bk, GROUP=8), num_warps=w, num_stages=s)
    for bm, bn, bk, w, s in [
        (128, 128, 32, 8, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 256, 32, 8, 3),
        (64, 64, 32, 4, 4), (128, 128, 64, 8, 3), (128, 128, 32, 4, 4), (256, 128, 32, 8, 3)]
]


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, one,
            PRECISION: tl.constexpr, BLOCKWISE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
            GROUP: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    width = GROUP * grid_n
    group = pid // width
    first_m = group * GROUP
    size_m = min(grid_m - first_m, GROUP)
    pid_m = first_m + (pid % width) % size_m
    pid_n = (pid % width) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if BLOCKWISE:
            # Each K block's product starts from zero in the tensor cores, and the
            # running sum adds it in float32 outside them (rounded to nearest; the
            # tensor cores' own accumulation may truncate). `one` (a run-time 1.0)
            # keeps Triton from folding the add into the dot's accumulator.
            acc += tl.dot(a, b, input_precision=PRECISION) * one
        else:
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def triton_mm(a, b, precision, config):
    blockwise = precision.endswith("-blockwise")
    precision = precision.removesuffix("-blockwise")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=torch.float32)
    kw = config.kwargs
    grid = (triton.cdiv(M, kw["BM"]) * triton.cdiv(N, kw["BN"]),)
    _matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                  c.stride(0), c.stride(1), 1.0, PRECISION=precision, BLOCKWISE=blockwise, num_warps=config.num_warps,
                  num_stages=config.num_stages, **kw)
    return c


WEIGHTS_KN = False  # --weights-kn: B stored [K, N] (GPT-2's Conv1D weights)


def inputs(kind, M, K, N, generator):
    a = torch.randn(M, K, device="cuda", generator=generator)
    # A linear layer's weight: [N, K] in memory, read transposed (K-major, as the
    # tensor cores' TF32 operands must be in shared memory); with --weights-kn, [K, N].
    w = (torch.randn(N, K, device="cuda", generator=generator) * K ** -0.5).t()
    if WEIGHTS_KN:
        w = w.contiguous()
    if kind == "positive":
        a = torch.nn.functional.gelu(a) + 0.1
    elif kind == "offset":
        a = a + 8.0
    return a, w


def rel(x, ref):
    d = (x.double() - ref)
    return (d.norm() / ref.norm()).item(), (d.abs().max() / ref.abs().mean()).item()


def best_config(a, b, precision):
    times = []
    for config in CONFIGS:
        try:
            t = triton.testing.do_bench(lambda: triton_mm(a, b, precision, config),
                                        warmup=10, rep=40, return_mode="median")
        except Exception as error:  # out of shared memory for this config
            continue
        times.append((t, config))
    return min(times, key=lambda x: x[0])


VARIANTS = ("tf32x3", "tf32x3-blockwise")
KINDS = ("normal", "positive", "offset")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--shapes", default="", help="names' prefixes, e.g. bench,gpt2")
    parser.add_argument("--weights-kn", action="store_true",
                        help="B stored [K, N] (N contiguous, GPT-2's Conv1D weights); also "
                        "times tf32x3 on a K-major copy of B made in the same call")
    parser.add_argument("--rows", default="",
                        help="also run each shape with A of these many rows, e.g. 512,1024")
    parser.add_argument("--configs", action="store_true",
                        help="times every block configuration of tf32x3 on each shape (K-major)")
    parser.add_argument("--quick", action="store_true",
                        help="times only: cuBLAS mm / addmm, best tf32x3, Dyno's product")
    args = parser.parse_args()
    global WEIGHTS_KN
    WEIGHTS_KN = args.weights_kn
    copies = []
    torch.backends.cuda.matmul.allow_tf32 = False
    generator = torch.Generator(device="cuda").manual_seed(0)
    shapes = [s for s in SHAPES if not args.shapes
              or any(s[0].startswith(p) for p in args.shapes.split(","))]
    if args.rows:
        shapes = [(f"{name} m{m}" if m != M else name, m, K, N) for name, M, K, N in shapes
                  for m in sorted({M, *map(int, args.rows.split(","))})]
    if args.quick:
        return quick(shapes, args.out)
    if args.configs:
        return sweep(shapes, args.out)
    lines = [f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
             f"triton {triton.__version__}", "",
             "Times in ms (do_bench medians; Triton: the fastest of its configurations). "
             "Errors: relative L2 distance from the float64 product, cuBLAS f32 / tf32x3 / "
             "tf32x3-blockwise.", "",
             "`runtime`: Dyno's Float32Products as the wrapper calls it (its heuristic "
             "configuration, its direct launches; K-major B only).", "",
             "| shape | M x K x N | cuBLAS f32 | tf32x3 | tf32x3-blockwise | ieee | tf32 | "
             "runtime | cuBLAS / best x3 | cuBLAS / runtime | err normal | err positive | "
             "err offset |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    products = Float32Products("cuda", interpret=False)
    speedups = {v: [] for v in VARIANTS}
    worse = {v: [] for v in VARIANTS}
    for name, M, K, N in shapes:
        a, b = inputs("normal", M, K, N, generator)
        t_cublas = triton.testing.do_bench(lambda: a @ b, warmup=10, rep=60,
                                           return_mode="median")
        timed = {v: best_config(a, b, v) for v in (*VARIANTS, "ieee", "tf32")}
        out = torch.empty(M, N, device="cuda")
        t_runtime = triton.testing.do_bench(lambda: products(a, b, out=out), warmup=10,
                                            rep=60, return_mode="median")
        torch.testing.assert_close(products(a, b), a @ b, rtol=1e-4, atol=1e-4)
        if WEIGHTS_KN:
            _, config = best_config(a, b.t().contiguous().t(), "tf32x3")
            t_copy = triton.testing.do_bench(
                lambda: triton_mm(a, b.t().contiguous().t(), "tf32x3", config), warmup=10,
                rep=60, return_mode="median")
            copies.append(f"{name}: K-major copy of B + tf32x3 {t_copy:.4f} ms, "
                          f"cuBLAS / that {t_cublas / t_copy:.2f}")
        errs = {}
        for kind in KINDS:
            a2, b2 = inputs(kind, M, K, N, generator)
            ref = a2.double() @ b2.double()
            row = [rel(a2 @ b2, ref)[0]]
            for v in VARIANTS:
                c = triton_mm(a2, b2, v, timed[v][1])
                if not torch.isfinite(c).all():
                    raise SystemExit(f"{name} {v}: non-finite output")
                row.append(rel(c, ref)[0])
                if row[-1] > row[0]:
                    worse[v].append(f"{name} {kind} {row[-1]:.2e} > {row[0]:.2e}")
            errs[kind] = row
            del ref
        for v in VARIANTS:
            speedups[v].append(t_cublas / timed[v][0])
        best = min(timed[v][0] for v in VARIANTS)
        lines.append(
            f"| {name} | {M} x {K} x {N} | {t_cublas:.4f} | "
            + " | ".join(f"{timed[v][0]:.4f}" for v in (*VARIANTS, "ieee", "tf32"))
            + f" | {t_runtime:.4f} | {t_cublas / best:.2f} | {t_cublas / t_runtime:.2f} | "
            + " | ".join(" / ".join(f"{e:.1e}" for e in errs[k]) for k in KINDS) + " |")
        print(lines[-1], flush=True)
    lines.append("")
    lines += copies
    for v in VARIANTS:
        lines.append(f"{v}: geomean cuBLAS f32 time / its time "
                     f"{statistics.geometric_mean(speedups[v]):.2f}; less accurate than cuBLAS "
                     f"f32 in: {'; '.join(worse[v]) or 'none'}")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


SWEEP = [  # (BM, BN, BK, warps, stages): CONFIGS and more
    (128, 128, 32, 8, 3), (128, 128, 32, 4, 4), (128, 256, 32, 8, 3), (256, 128, 32, 8, 3),
    (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 32, 4, 4), (128, 128, 64, 8, 3),
    (128, 128, 16, 4, 5), (64, 256, 32, 8, 3), (128, 64, 64, 4, 3), (64, 128, 64, 4, 3),
    (64, 64, 64, 4, 3), (128, 256, 32, 8, 4), (128, 128, 32, 8, 4), (64, 64, 32, 2, 5)]


def sweep(shapes, out):
    """tf32x3 (K-major operands) with each block configuration of SWEEP on each shape:
    times (ms, do_bench medians), the best, and what cuBLAS's mm takes."""
    lines = [f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
             f"triton {triton.__version__}; tf32x3, B [N, K] read transposed; times in us",
             "", "| shape | M x K x N | cuBLAS mm | " + " | ".join(
                 "x".join(map(str, c[:3])) + f" w{c[3]} s{c[4]}" for c in SWEEP)
             + " | best |", "|---|---|---|" + "---|" * (len(SWEEP) + 1)]
    generator = torch.Generator(device="cuda").manual_seed(0)
    for name, M, K, N in shapes:
        a, b = inputs("normal", M, K, N, generator)
        t_mm = triton.testing.do_bench(lambda: a @ b, warmup=10, rep=40,
                                       return_mode="median")
        times = []
        for bm, bn, bk, w, st in SWEEP:
            config = triton.Config(dict(BM=bm, BN=bn, BK=bk, GROUP=8), num_warps=w,
                                   num_stages=st)
            try:
                times.append(triton.testing.do_bench(
                    lambda: triton_mm(a, b, "tf32x3", config), warmup=10, rep=40,
                    return_mode="median"))
            except Exception:  # out of shared memory
                times.append(float("inf"))
        best = min(range(len(SWEEP)), key=lambda i: times[i])
        lines.append(f"| {name} | {M} x {K} x {N} | {t_mm * 1e3:.1f} | "
                     + " | ".join(f"{t * 1e3:.1f}" for t in times)
                     + f" | {'x'.join(map(str, SWEEP[best]))} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")


def quick(shapes, out):
    """Times only, with a bias row: cuBLAS's mm and addmm (what eager and Inductor run),
    the best tf32x3 configuration (no bias), and Dyno's Float32Products with the bias
    (with --weights-kn: on B as stored, copied K-major in the call)."""
    products = Float32Products("cuda", interpret=False)
    lines = [f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
             f"triton {triton.__version__}; B {'[K, N]' if WEIGHTS_KN else '[N, K] read transposed'}",
             "", "| shape | M x K x N | cuBLAS mm | cuBLAS addmm | best tf32x3 | Dyno's "
             "product + bias | addmm / Dyno's |", "|---|---|---|---|---|---|---|"]
    ratios = []
    generator = torch.Generator(device="cuda").manual_seed(0)
    for name, M, K, N in shapes:
        a, b = inputs("normal", M, K, N, generator)
        bias = torch.randn(N, device="cuda", generator=generator)
        result = torch.empty(M, N, device="cuda")
        bench = lambda f: triton.testing.do_bench(f, warmup=10, rep=60, return_mode="median")
        t_mm = bench(lambda: torch.mm(a, b, out=result))
        t_addmm = bench(lambda: torch.addmm(bias, a, b, out=result))
        t_best, _ = best_config(a, b.t().contiguous().t(), "tf32x3")
        t_dyno = bench(lambda: products(a, b, bias, out=result))
        torch.testing.assert_close(products(a, b, bias), torch.addmm(bias, a, b), rtol=1e-4,
                                   atol=1e-4)
        ratios.append(t_addmm / t_dyno)
        lines.append(f"| {name} | {M} x {K} x {N} | {t_mm:.4f} | {t_addmm:.4f} | "
                     f"{t_best:.4f} | {t_dyno:.4f} | {ratios[-1]:.2f} |")
        print(lines[-1], flush=True)
    lines += ["", f"geomean addmm / Dyno's: {statistics.geometric_mean(ratios):.2f}"]
    text = "\n".join(lines)
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
