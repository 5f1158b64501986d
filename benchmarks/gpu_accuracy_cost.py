"""What the accurate long reductions cost on a GPU (issue 19):
benchmarks/experiments/accuracy_cost.py's cases exported for the Triton target before and
after, timed there beside eager CUDA.

    python benchmarks/gpu_accuracy_cost.py --export build/gpu-cost              # here
    python3 benchmarks/gpu_accuracy_cost.py --run build/gpu-cost --out FILE     # GPU

"before": no blocked sums (`options={"block_long_sums": False}`) and the plain two-pass
variance, as accuracy_cost.py compiles it; "after": Dyno as shipped. Times are medians of
triton.testing.do_bench in one run; errors are max |error| / max |reference| against
float64 on the GPU, on the same input.
"""
import argparse
import datetime
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_cost  # noqa: E402
from report import geomean, publish  # noqa: E402


def _directory(root, name, variant):
    return os.path.join(root, name.split(" ")[0] + "-" + name.split(" ")[1] + "-" + variant)


def export(root):
    import dyno

    for name, model, x in accuracy_cost.cases():
        model = model.eval()
        with accuracy_cost.variance_before_issue_19():
            dyno.export_triton(model, (x,), _directory(root, name, "before"),
                               options={"block_long_sums": False})
        dyno.export_triton(model, (x,), _directory(root, name, "after"))
        print(f"{name}: exported", flush=True)


def run(root, out):
    from triton.testing import do_bench

    from gpu_run import load_runtime

    device = torch.device("cuda")
    lines = [
        f"# What accurate long reductions cost on a GPU, {datetime.date.today()}",
        "",
        f"{torch.cuda.get_device_name()}; torch {torch.__version__}. Command: python3 "
        "benchmarks/gpu_accuracy_cost.py --run DIR (after --export DIR on the build machine).",
        "before: no blocked sums, plain two-pass variance; after: Dyno as shipped. Times are",
        "medians of triton.testing.do_bench from one run; errors against float64.",
        "",
        "| case | eager (us) | before (us) | after (us) | after / before time "
        "| eager error | before error | after error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for name, model, x in accuracy_cost.cases():
        model = model.eval().to(device)
        x = x.to(device)
        with torch.no_grad():
            reference = model.double()(x.double())
            model.float()
            backends = {"eager": model}
            for variant in ("before", "after"):
                directory = _directory(root, name, variant)
                backends[variant] = load_runtime(directory).load(
                    directory, device=device, cuda_graphs=False).bind(model.state_dict())
            errors, times = {}, {}
            for label, fn in backends.items():
                result = fn(x)
                if isinstance(result, (tuple, list)):
                    result = result[0]
                errors[label] = accuracy_cost.relative_error(result, reference)
            for label, fn in backends.items():
                times[label] = do_bench(lambda fn=fn: fn(x), warmup=25, rep=200,
                                        return_mode="median") * 1e3
        ratio = times["after"] / times["before"]
        ratios.append(ratio)
        line = (f"| {name} | {times['eager']:.1f} | {times['before']:.1f} | "
                f"{times['after']:.1f} | {ratio:.2f} | {errors['eager']:.1e} | "
                f"{errors['before']:.1e} | {errors['after']:.1e} |")
        lines.append(line)
        print(line, flush=True)
    lines.append(f"| **geomean** | | | | {geomean(ratios):.2f} | | | |")
    publish(lines, out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", default="")
    parser.add_argument("--run", default="")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    if args.export:
        export(args.export)
    if args.run:
        run(args.run, args.out)


if __name__ == "__main__":
    main()
