"""GEMMs whose rows are not a multiple of 16 bytes, padded or not, on a GPU. Needs only
torch (and triton for do_bench).

    python3 benchmarks/gpu_gemm_padding.py [--out results.md]

cuBLAS runs a slower kernel (`align1`/`align2`) when a row of an operand or of the result
is not 16-byte aligned: GPT-2's LM head (N = 50257) and BERT's (N = 30522). For each
shape `a[M, K] @ w[N, K].t()` (a linear layer) this times, with do_bench medians:
- `plain`: the product as it is;
- `ldc`: into a result whose rows are padded (`out=` a view of an [M, N'] buffer);
- `weight`: with the weight padded to N' rows once, beforehand (as freezing would);
- `weight per call`: the weight padded on every call (F.pad), then the product;
- `k per call`: K padded on both operands on every call (unaligned K).
and each padded variant's dense copy of the result (what returning eager's layout costs).
"""
import argparse
import datetime

import torch
import torch.nn.functional as F

# (label, M, K, N): the heads of real models, and smaller unaligned products
SHAPES = [
    ("GPT-2 LM head, 8x512 tokens", 4096, 768, 50257),
    ("GPT-2 LM head, 1x128 tokens", 128, 768, 50257),
    ("BERT-base MLM head, 16x256", 4096, 768, 30522),
    ("odd N", 2048, 512, 1001),
    ("odd N", 1024, 512, 1001),
    ("odd N", 512, 512, 1001),
    ("odd N", 256, 256, 1001),
    ("odd K", 4096, 1001, 768),
    ("odd K", 1024, 1001, 768),
    ("odd K", 512, 1001, 512),
    ("GPT-2 LM head backward, input gradient (K = 50257)", 4096, 50257, 768),
]


def pad_to(size: int, multiple: int) -> int:
    return (size + multiple - 1) // multiple * multiple


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    from triton.testing import do_bench

    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda")
    lines = [f"# Unaligned GEMMs on {torch.cuda.get_device_name()}, {datetime.date.today()}",
             "", f"torch {torch.__version__}; `python3 benchmarks/gpu_gemm_padding.py`; "
             "do_bench medians in us; TF32 off.", "",
             "| shape | dtype | M K N | plain | ldc | weight | weight per call | "
             "k per call | dense copy of result | max abs diff padded vs plain |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for dtype in (torch.bfloat16, torch.float32):
        multiple = 16 // torch.empty((), dtype=dtype).element_size()
        for label, m, k, n in SHAPES:
            a = torch.randn(m, k, device=device, dtype=dtype)
            w = torch.randn(n, k, device=device, dtype=dtype) / k ** 0.5
            n_padded, k_padded = pad_to(n, multiple), pad_to(k, multiple)
            w_padded = F.pad(w, (0, 0, 0, n_padded - n))
            out = torch.empty(m, n_padded, device=device, dtype=dtype)

            def plain():
                return torch.mm(a, w.t())

            def ldc():
                return torch.mm(a, w.t(), out=out[:, :n])

            def weight():
                return torch.mm(a, w_padded.t())[:, :n]

            def weight_per_call():
                return torch.mm(a, F.pad(w, (0, 0, 0, n_padded - n)).t())[:, :n]

            def k_per_call():
                return torch.mm(F.pad(a, (0, k_padded - k)), F.pad(w, (0, k_padded - k)).t())

            expected = plain()
            difference = max((f() - expected).abs().max().item()
                             for f in (ldc, weight, weight_per_call, k_per_call))
            times = [do_bench(f, return_mode="median") * 1e3
                     for f in (plain, ldc, weight, weight_per_call, k_per_call)]
            result = weight()
            copy = do_bench(lambda: result.contiguous(), return_mode="median") * 1e3
            lines.append(f"| {label} | {str(dtype)[6:]} | {m} {k} {n} | "
                         + " | ".join(f"{t:.1f}" for t in times)
                         + f" | {copy:.1f} | {difference:.2e} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as file:
            file.write(text)


if __name__ == "__main__":
    main()
