"""Kernels over tensors of more than 2**31 elements on a GPU (64-bit index arithmetic).

    python benchmarks/gpu_huge_tensors.py --export --out build/gpu-huge     # here
    python3 benchmarks/gpu_huge_tensors.py --run --out build/gpu-huge      # on the GPU

Each case reads a bf16 tensor of 4 x 800M (3.2e9 elements, 6.4 GB): reductions and a
scan along the short dimension, whose offsets `row * 800000000` pass 2**31 from the
third row. Exported on a CPU-only machine (the export traces, it does not compute);
each case runs in its own process on the GPU (a bad address ends a CUDA context), and
is compared with eager CUDA: exact for max and the scan's carry-free first row, within
bf16 rounding for the sums.
"""
import argparse
import os
import subprocess
import sys

import torch

SHAPE = (4, 800_000_000)


class Sum0(torch.nn.Module):
    def forward(self, x):
        return x.sum(0)


class Amax0(torch.nn.Module):
    def forward(self, x):
        return x.amax(0)


class Cumsum0(torch.nn.Module):
    def forward(self, x):
        return x.cumsum(0)


class ScaleRows(torch.nn.Module):
    def forward(self, x):
        return x * torch.arange(1, SHAPE[0] + 1, dtype=x.dtype, device=x.device)[:, None]


CASES = {"sum0": Sum0, "amax0": Amax0, "cumsum0": Cumsum0, "scale_rows": ScaleRows}


def export(out):
    import dyno

    x = torch.empty(SHAPE, dtype=torch.bfloat16)
    for name, model in CASES.items():
        dyno.export_triton(model(), (x,), os.path.join(out, name), save_weights=False)
        print(f"{name}: exported", flush=True)


def run_case(out, name):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_run import load_runtime

    directory = os.path.join(out, name)
    runtime = load_runtime(directory)
    program = runtime.load(directory, device="cuda", cuda_graphs=False).bind({})
    torch.manual_seed(0)
    x = torch.randn(SHAPE, dtype=torch.bfloat16, device="cuda")
    with torch.no_grad():
        want = CASES[name]()(x)
        got = program(x)
        got = got[0] if isinstance(got, (list, tuple)) else got
        assert got.shape == want.shape, (got.shape, want.shape)
        torch.cuda.synchronize()
        difference = (got.float() - want.float()).abs()
        scale = want.float().abs().max().item()
        print(f"{name}: max |dyno - eager| {difference.max().item():.3e} "
              f"(max |eager| {scale:.3e}); mismatches beyond 1e-2 relative: "
              f"{(difference > 1e-2 * max(scale, 1.0)).sum().item()}", flush=True)
        start, end = torch.cuda.Event(True), torch.cuda.Event(True)
        for label, fn in (("eager", lambda: CASES[name]()(x)), ("dyno", lambda: program(x))):
            fn()
            start.record()
            for _ in range(5):
                fn()
            end.record()
            torch.cuda.synchronize()
            print(f"{name}: {label} {start.elapsed_time(end) / 5:.2f} ms", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="build/gpu-huge")
    parser.add_argument("--export", action="store_true")
    parser.add_argument("--run", action="store_true")
    parser.add_argument("--case", default="")
    args = parser.parse_args()
    if args.export:
        export(args.out)
    if args.case:
        run_case(args.out, args.case)
    elif args.run:
        for name in CASES:
            done = subprocess.run([sys.executable, __file__, "--out", args.out, "--case", name],
                                  capture_output=True, text=True, timeout=300)
            print(done.stdout.strip() or f"{name}: no output", flush=True)
            if done.returncode:
                print(f"{name}: exit {done.returncode}: {done.stderr.strip()[-600:]}",
                      flush=True)


if __name__ == "__main__":
    main()
