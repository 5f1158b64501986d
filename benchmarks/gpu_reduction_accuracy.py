"""Issue 19's accuracy family on a GPU: the reductions of e2e/reduction_accuracy.py at
lengths up to 3e7, forward and backward, exported here for the Triton target and run
there against eager CUDA, both against float64.

    python benchmarks/gpu_reduction_accuracy.py --export build/gpu-accuracy   # here
    python3 benchmarks/gpu_reduction_accuracy.py --run build/gpu-accuracy --out FILE   # GPU

The export side needs Dyno; the run side torch and triton only. A case passes when
Dyno's error is at most max(4 x eager CUDA's error, 1e-6) (the error: max |result -
reference| / max |reference|, as in e2e/reduction_accuracy.py). Backward cases are the
gradient of sum(fn(x) * g) (g: a fixed standard normal cotangent), exported as a
training step whose one parameter is x.
"""
import argparse
import json
import os
import sys
import time
import traceback

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import reduction_accuracy as family  # noqa: E402

FORWARD_LENGTHS = [1_000, 100_000, 1_000_000, 16_000_000, 30_000_000]
BACKWARD_LENGTHS = [1_000_000, 16_000_000]
BACKWARD_OPS = ["mean", "var", "std", "norm", "logsumexp", "softmax", "log_softmax",
                "layer_norm", "cumsum"]


class Reduction(torch.nn.Module):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x):
        return family.REDUCTIONS[self.op](x)


class ReductionOfParameter(torch.nn.Module):
    """fn(x) with x the module's parameter; the cotangents are the step's inputs."""

    def __init__(self, op, shape):
        super().__init__()
        self.op = op
        self.x = torch.nn.Parameter(torch.zeros(shape))

    def forward(self, *cotangents):
        return family.REDUCTIONS[self.op](self.x)


def weighted_sum(outputs, *cotangents):
    outputs, _ = torch.utils._pytree.tree_flatten(outputs)
    return sum((o * g).sum() for o, g in zip(outputs, cotangents))


def shape_of(length, rows):
    return (rows, length // rows) if rows > 1 else (length,)


def cases(args):
    for op in args.ops.split(","):
        for length in args.lengths:
            for rows in (1, 4):
                if op == "sum_all" and rows > 1:
                    continue
                yield {"name": f"{op}-{length}-{rows}", "op": op, "length": length,
                       "rows": rows, "backward": False}
        if op in BACKWARD_OPS:
            for length in args.backward_lengths:
                yield {"name": f"{op}-{length}-4-backward", "op": op, "length": length,
                       "rows": 4, "backward": True}


def export(args):
    import dyno

    os.makedirs(args.export, exist_ok=True)
    manifest = []
    for case in cases(args):
        start = time.perf_counter()
        directory = os.path.join(args.export, case["name"])
        shape = shape_of(case["length"], case["rows"])
        try:
            if case["backward"]:
                model = ReductionOfParameter(case["op"], shape)
                outputs, _ = torch.utils._pytree.tree_flatten(model())
                cotangents = [torch.zeros(o.shape) for o in outputs]
                dyno.export_triton_training(model, weighted_sum, cotangents, directory,
                                            save_weights=False)
            else:
                dyno.export_triton(Reduction(case["op"]), (torch.zeros(shape),), directory,
                                   save_weights=False)
        except Exception as error:  # noqa: BLE001 - reported, the rest go on
            print(f"{case['name']}: NOT EXPORTED: {error}"[:300], flush=True)
            continue
        manifest.append(case)
        print(f"{case['name']}: exported in {time.perf_counter() - start:.1f} s", flush=True)
    with open(os.path.join(args.export, "manifest.json"), "w") as file:
        json.dump(manifest, file, indent=1)


def run(args):
    from gpu_run import load_runtime

    device = torch.device(args.device)
    with open(os.path.join(args.run, "manifest.json")) as file:
        manifest = json.load(file)
    lines = [f"| case | data | Dyno error | eager CUDA error | ratio | verdict |",
             "|---|---|---|---|---|---|"]
    failures = 0
    for case in manifest:
        directory = os.path.join(args.run, case["name"])
        op, length, rows = case["op"], case["length"], case["rows"]
        fn = family.REDUCTIONS[op]
        try:
            runtime = load_runtime(directory)
            for data in family.DATA:
                x = family.make_input(data, length, rows)
                if op in ("softmax", "log_softmax", "logsumexp") and family.DATA[data] is None:
                    x = x * 4
                x = x.to(device)
                if case["backward"]:
                    generator = torch.Generator().manual_seed(1)
                    outputs, _ = torch.utils._pytree.tree_flatten(fn(x))
                    cotangents = [torch.randn(o.shape, generator=generator).to(device)
                                  for o in outputs]

                    def gradient(t, dtype):
                        t = t.to(dtype).detach().requires_grad_()
                        loss = weighted_sum(fn(t), *(g.to(dtype) for g in cotangents))
                        return torch.autograd.grad(loss, t)[0]

                    reference, eager = gradient(x, torch.float64), gradient(x, torch.float32)
                    model = ReductionOfParameter(op, x.shape).to(device)
                    with torch.no_grad():
                        model.x.copy_(x)
                    runtime.load(directory, device=device, cuda_graphs=False).bind(model)(
                        *cotangents)
                    compiled = model.x.grad
                else:
                    with torch.no_grad():
                        reference, eager = fn(x.double()), fn(x)
                        program = runtime.load(directory, device=device,
                                               cuda_graphs=False).bind({})
                        compiled = program(x)
                        if isinstance(compiled, (tuple, list)) and not isinstance(
                                reference, (tuple, list)):
                            compiled = compiled[0]
                dyno_error = family.relative_error(compiled, reference)
                eager_error = family.relative_error(eager, reference)
                ok = dyno_error <= family.bound(eager_error)
                failures += not ok
                ratio = dyno_error / eager_error if eager_error else float("inf") \
                    if dyno_error else 1.0
                line = (f"| {case['name']} | {data} | {dyno_error:.2e} | {eager_error:.2e} | "
                        f"{ratio:.1f} | {'ok' if ok else 'LESS ACCURATE'} |")
                lines.append(line)
                print(line, flush=True)
        except Exception as error:  # noqa: BLE001 - one broken case must not hide the rest
            traceback.print_exc()
            failures += 1
            lines.append(f"| {case['name']} | - | ERROR: {type(error).__name__} | | | |")
            print(lines[-1], flush=True)
        if args.out:
            with open(args.out, "w") as file:
                file.write("\n".join(lines) + "\n")
    summary = f"{failures} cases less accurate than max(4x eager CUDA, 1e-6) or failed"
    print(summary)
    if args.out:
        with open(args.out, "w") as file:
            file.write("\n".join(lines) + f"\n\n{summary}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", default="")
    parser.add_argument("--run", default="")
    parser.add_argument("--out", default="")
    parser.add_argument("--ops", default=",".join(family.REDUCTIONS))
    parser.add_argument("--lengths", default=",".join(map(str, FORWARD_LENGTHS)))
    parser.add_argument("--backward-lengths", default=",".join(map(str, BACKWARD_LENGTHS)))
    parser.add_argument("--device", default="cuda",
                        help="cpu runs the kernels under Triton's interpreter (a check of "
                             "this script at short lengths)")
    args = parser.parse_args()
    args.lengths = [int(float(n)) for n in args.lengths.split(",")]
    args.backward_lengths = [int(float(n)) for n in args.backward_lengths.split(",")]
    if args.export:
        export(args)
    if args.run:
        run(args)


if __name__ == "__main__":
    main()
