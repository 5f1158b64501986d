"""A compiled training step of zoo models on a GPU: exported here, run there.

    python benchmarks/gpu_zoo_training.py export [--out build/gpu-zoo-training] [--models gpt2,llama,resnet]
    python3 benchmarks/gpu_zoo_training.py run --artifacts build/gpu-zoo-training [--out results.md]  # GPU

`export` writes each model's training step (forward, e2e/zoo.py's training_loss,
backward: dyno.export_triton_training, no weights) for the Triton target on this CPU-only
machine. `run` needs only torch, triton and transformers: it builds the same model three
times (same seed), trains eager, Inductor (torch.compile) and Dyno's exported step with
the same optimizer (SGD with momentum, eager PyTorch in all three), compares losses,
gradients and parameters with eager after every step, then times one whole step
(zero_grad, forward, backward, optimizer) for each.
"""
import copy
import datetime
import os
import platform
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
import zoo  # noqa: E402

STEPS = 3
# Relative L2 error from eager (TF32 off): rounding differences only, grown over STEPS.
TOLERANCE = 1e-3
# Otherwise the step must be about as accurate as eager: gradients and parameters no
# farther from a float64 run of the same steps than ACCURACY_FACTOR x eager's distance.
ACCURACY_FACTOR = 4
KINDS = ("loss", "gradients", "parameters")


def export(args):
    import dyno

    for name in args.models:
        start = time.perf_counter()
        model, inputs = zoo.build(name, torch.float32, size=args.size)
        model.train()
        directory = os.path.join(args.out, name)
        dyno.export_triton_training(model, zoo.training_loss, inputs, directory,
                                    save_weights=False)
        print(f"{name}: training step exported in {time.perf_counter() - start:.1f} s",
              flush=True)


def _relative(got, want):
    return ((got.double() - want.double()).norm() / want.double().norm().clamp_min(1e-30)).item()


def run(args):
    import triton
    from gpu_run import load_runtime, median_ms
    from report import geomean, publish

    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    labels = ["eager", "inductor", "dyno"]
    for name in args.models:
        directory = os.path.join(args.artifacts, name)
        if not os.path.isdir(directory):
            continue
        runtime = load_runtime(directory)
        try:
            model, inputs = zoo.build(name, torch.float32, size=args.size)
            model = model.to(device).train()
            inputs = tuple(x.to(device) for x in inputs)
            models = {label: copy.deepcopy(model) for label in labels}
            models["float64"] = copy.deepcopy(model).double()
            inputs64 = tuple(x.double() if x.is_floating_point() else x for x in inputs)
            program = runtime.load(directory, device=device).bind(models["dyno"])
            compiled = torch.compile(models["inductor"])
            steps = {
                "eager": lambda: zoo.training_loss(models["eager"](*inputs), inputs[0]),
                "float64": lambda: zoo.training_loss(models["float64"](*inputs64), inputs64[0]),
                "inductor": lambda: zoo.training_loss(compiled(*inputs), inputs[0]),
                "dyno": lambda: program(*inputs),
            }
            optimizers = {label: torch.optim.SGD(models[label].parameters(), lr=0.01,
                                                 momentum=0.9) for label in models}

            def step(label):
                optimizers[label].zero_grad()
                loss = steps[label]()
                if label != "dyno":  # Dyno's step runs its own backward
                    loss.backward()
                optimizers[label].step()
                return loss

            # errors[reference][label][kind]: largest over the steps
            errors = {reference: {label: dict.fromkeys(KINDS, 0.0) for label in labels}
                      for reference in ("eager", "float64")}
            for _ in range(STEPS):
                losses = {label: step(label).detach() for label in models}
                for reference, table in errors.items():
                    for label, record in table.items():
                        pairs = list(zip(models[reference].parameters(),
                                         models[label].parameters()))
                        found = {
                            "loss": _relative(losses[label], losses[reference]),
                            "gradients": max(_relative(b.grad, a.grad) for a, b in pairs
                                             if a.grad is not None),
                            "parameters": max(_relative(b, a) for a, b in pairs)}
                        for kind in KINDS:
                            record[kind] = max(record[kind], found[kind])
            times = {label: median_ms(lambda label=label: step(label)) for label in labels}
            torch._dynamo.reset()
        except Exception as exc:  # one broken model must not hide the rest
            traceback.print_exc()
            rows.append((name, "ERROR", f"{type(exc).__name__}: {exc}"[:100], None))
            continue
        dyno_vs_eager = errors["eager"]["dyno"]
        exact = errors["float64"]
        close = all(dyno_vs_eager[kind] <= TOLERANCE for kind in KINDS)
        accurate = all(exact["dyno"][kind] <= ACCURACY_FACTOR * exact["eager"][kind]
                       for kind in ("gradients", "parameters"))
        verdict = "ok" if close else "ok (as accurate as eager)" if accurate else "MISMATCH"
        rows.append((name, verdict, errors, times))
        print(name, verdict, errors, {k: round(v, 3) for k, v in times.items()}, flush=True)

    props = torch.cuda.get_device_properties(device)
    lines = [f"# A compiled training step of zoo models on {props.name}, "
             f"{datetime.date.today()}", "",
             f"torch {torch.__version__}, triton {triton.__version__}, Python "
             f"{platform.python_version()}. Models: e2e/zoo.py at \"{args.size}\" size, "
             "float32, train mode, random weights; loss: zoo.training_loss. The step "
             "(forward, loss, backward) was exported on a CPU-only machine "
             "(benchmarks/gpu_zoo_training.py export, dyno.export_triton_training) and runs "
             "here with torch and triton only, as a CUDA graph; the optimizer (SGD, momentum "
             "0.9) is eager PyTorch for all three. Errors: largest relative L2 difference "
             f"from eager, and from a float64 run of the same steps, over {STEPS} steps "
             f"(TF32 off). A match: within {TOLERANCE:g} of eager, or gradients and "
             f"parameters no farther from float64 than {ACCURACY_FACTOR}x eager's. Times: "
             "median of triton.testing.do_bench over whole steps (zero_grad, forward, "
             "backward, optimizer).", "",
             "| model | verdict | Dyno vs eager (loss / gradients / parameters) | "
             "Inductor vs eager | vs float64: eager | Inductor | Dyno | "
             + " | ".join(f"{l} ms" for l in labels) + " | "
             + " | ".join(f"{l} speedup" for l in labels[1:]) + " |",
             "|---" * (7 + 2 * len(labels) - 1) + "|"]
    for name, verdict, errors, times in rows:
        if times is None:
            lines.append(f"| {name} | {verdict}: {errors} |" + " |" * (5 + 2 * len(labels)))
            continue
        show = lambda e: " / ".join(f"{e[k]:.1e}" for k in KINDS)
        lines.append(f"| {name} | {verdict} | {show(errors['eager']['dyno'])} | "
                     f"{show(errors['eager']['inductor'])} | "
                     + " | ".join(show(errors["float64"][l]) for l in labels) + " | "
                     + " | ".join(f"{times[l]:.3f}" for l in labels) + " | "
                     + " | ".join(f"{times['eager'] / times[l]:.2f}x" for l in labels[1:])
                     + " |")
    timed = [t for *_, t in rows if t]
    if timed:
        lines += ["", "Geomean speedup over eager: " + ", ".join(
            f"{l} {geomean([t['eager'] / t[l] for t in timed]):.2f}x" for l in labels[1:])]
    publish(lines, args.out)


def main():
    from gpu_zoo import export_here_run_there

    export_here_run_there(export, run, "build/gpu-zoo-training", "gpt2,llama,resnet",
                          size=dict(default="bench", choices=list(zoo.SIZES)))


if __name__ == "__main__":
    main()
