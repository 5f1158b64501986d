"""A soak that mixes backends on one GPU in one process (issue 52): Dyno's exported zoo
programs, with and without CUDA graphs, interleaved with Inductor's default and
reduce-overhead compiles of the same models, round after round.

    python3 benchmarks/gpu_soak.py --artifacts .gpu/w --dtypes float32,bfloat16 \
        [--models gpt2,llama,...] [--size bench] [--rounds 3] [--calls 5]

Users mix backends in one process (a module compiled by each, a benchmark comparing
them); an earlier main hit `CUDA error: unspecified launch failure` at the 17th program
of such a process, and every later program failed. Each round builds every model's four
programs afresh (Dynamo reset at the start of each round), calls them in
a shuffled order, compares each result with eager's, then calls every program the round
built so far once more, interleaved across models (CUDA graphs' private memory pools and
Dyno's workspaces of earlier models live on beside the new ones). A failing program is a
row; a CUDA error ends the soak there (the context is lost) with the step it hit. Exit
status 0 only when every program of every round ran and matched.

Inductor's own failures are rows too, not soak failures: on fp32 Mixtral its
reduce-overhead graph records transformers' grouped GEMM fallback, which copies group
offsets to the host ("Cannot copy between CPU and CUDA tensors during CUDA graph
capture").
"""
import argparse
import os
import random
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
import zoo  # noqa: E402
from gpu_run import load_runtime, program_weights, relative_error  # noqa: E402

# Largest relative error (2-norm, gpu_run.relative_error) a program may have against
# eager: Inductor's and Dyno's zoo errors are below 2.2e-2 in bf16 (Mixtral) and 3e-5 in
# fp32 (ResNet-50 with TF32 convolutions) in the like-for-like tables.
TOLERANCE = {"float32": 1e-3, "bfloat16": 6e-2}


def build_programs(name, dtype_name, size, artifacts, index):
    """(programs by label, inputs, eager's result) for zoo model `name`."""
    model, inputs = zoo.build(name, getattr(torch, dtype_name), size=size)
    model = model.cuda().eval()
    inputs = tuple(x.cuda() for x in inputs)
    export = os.path.join(artifacts, f"{name}-{dtype_name}")
    runtime = load_runtime(export, f"soak_rt_{index}")
    state = program_weights(model)
    programs = {
        "dyno": runtime.load(export, device="cuda", cuda_graphs=False).bind(state),
        "dyno+graphs": runtime.load(export, device="cuda").bind(state),
        "inductor": torch.compile(model),
        "inductor-ro": torch.compile(model, mode="reduce-overhead"),
    }
    return programs, inputs, model(*inputs)


def is_cuda_error(error: BaseException) -> bool:
    text = str(error)
    return "CUDA error" in text or "cudaError" in text or "illegal memory access" in text


def checked_call(program, inputs, expected) -> float:
    """One call of `program`, finished on the GPU: its error against eager's result."""
    with torch.no_grad():
        got = program(*inputs)
    torch.cuda.synchronize()
    return relative_error(got, expected)


def failed(failures, step, label, failure, message) -> bool:
    """Records `failure` as a row; True when it is a CUDA error (the soak must stop)."""
    failures.append((step, label, f"{type(failure).__name__}: "
                                  f"{str(failure).splitlines()[0]}"))
    print(f"{message}: FAILED: {failures[-1][2]}", flush=True)
    if is_cuda_error(failure):
        traceback.print_exc()
        return True
    return False


def minimal(artifacts, size):
    """The shortest sequence that hit the illegal memory access: two Dyno CUDA-graph
    programs recorded one after the other (the second took the cuBLAS workspace the first
    made in its own pool), the first dropped, the workspace cache cleared as Inductor's
    CUDA-graph trees clear it, the memory returned to the device, then the second
    replayed. 0 when the replays run and match eager."""
    import gc

    first, inputs_1, _ = build_programs("gpt2", "float32", size, artifacts, 1)
    second, inputs_2, expected = build_programs("bert", "float32", size, artifacts, 2)
    with torch.no_grad():
        first["dyno+graphs"](*inputs_1)
        second["dyno+graphs"](*inputs_2)
        torch.cuda.synchronize()
        del first
        gc.collect()
        torch._C._cuda_clearCublasWorkspaces()  # (cudagraph_trees.clear_cublass_cache)
        torch.cuda.empty_cache()
        worst = max(checked_call(second["dyno+graphs"], inputs_2, expected)
                    for _ in range(5))
    print(f"minimal: 5 replays after the clear, error {worst:.1e}")
    return 0 if worst <= TOLERANCE["float32"] else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--size", default="bench")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--models", default=",".join({**zoo.ZOO, **zoo.FAMILIES}))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--minimal", action="store_true",
                        help="only the shortest sequence that hit the launch failure")
    args = parser.parse_args()
    if args.minimal:
        return minimal(args.artifacts, args.size)
    # Every zoo model runs through one wrapper's forward: a round compiles it for
    # every model twice, past Dynamo's limit of 8 (beyond which it runs eagerly).
    torch._dynamo.config.recompile_limit = 1 << 16
    torch._dynamo.config.accumulated_recompile_limit = 1 << 16
    rng = random.Random(args.seed)
    failures, runs, started = [], 0, time.time()
    index = 0
    for round_number in range(1, args.rounds + 1):
        alive = []  # (label, program, inputs, expected, tolerance) built this round
        # A fresh start per round (Inductor's CUDA-graph trees of the last round freed);
        # within it, a program called again runs the code compiled for it.
        torch._dynamo.reset()
        for dtype_name in args.dtypes.split(","):
            for name in args.models.split(","):
                step = f"round {round_number} {name} {dtype_name}"
                index += 1
                try:
                    with torch.no_grad():
                        programs, inputs, expected = build_programs(
                            name, dtype_name, args.size, args.artifacts, index)
                except Exception as error:  # noqa: BLE001 (a row that says so)
                    failures.append((step, "build", f"{type(error).__name__}: {error}"))
                    print(f"{step}: build FAILED: {error}", flush=True)
                    if is_cuda_error(error):
                        return report(failures, runs, started, fatal=step)
                    continue
                order = [label for label in programs for _ in range(args.calls)]
                rng.shuffle(order)
                errors, calls = {}, {}
                for label in order:
                    calls[label] = calls.get(label, 0) + 1
                    if label in errors and errors[label] is None:
                        continue  # (failed already this round)
                    try:
                        error = checked_call(programs[label], inputs, expected)
                        runs += 1
                    except Exception as failure:  # noqa: BLE001
                        errors[label] = None
                        if failed(failures, step, label, failure,
                                  f"{step} {label} at call {calls[label]}"):
                            return report(failures, runs, started, fatal=f"{step} {label}")
                        continue
                    errors[label] = max(errors.get(label) or 0.0, error)
                cells = []
                for label, error in errors.items():
                    if error is None:
                        cells.append(f"{label} failed")
                        continue
                    cells.append(f"{label} {error:.1e}")
                    if error > TOLERANCE[dtype_name]:
                        failures.append((step, label, f"error {error:.1e} against eager"))
                    alive.append((f"{name} {dtype_name} {label}", programs[label], inputs,
                                  expected, TOLERANCE[dtype_name]))
                print(f"{step}: {', '.join(cells)}", flush=True)
        # Every program of the round once more, interleaved across models.
        rng.shuffle(alive)
        for label, program, inputs, expected, tolerance in alive:
            step = f"round {round_number} again: {label}"
            try:
                error = checked_call(program, inputs, expected)
                runs += 1
            except Exception as failure:  # noqa: BLE001
                if failed(failures, step, "", failure, step):
                    return report(failures, runs, started, fatal=step)
                continue
            if error > tolerance:
                failures.append((step, "", f"error {error:.1e} against eager"))
        print(f"round {round_number}: {len(alive)} programs called again, "
              f"{len(failures)} failures so far, {time.time() - started:.0f} s", flush=True)
    return report(failures, runs, started)


def report(failures, runs, started, fatal=None):
    print(f"\n{runs} program runs in {time.time() - started:.0f} s, "
          f"{len(failures)} failures" + (f"; stopped by a CUDA error at {fatal}" if fatal
                                         else ""))
    for step, label, what in failures:
        print(f"| {step} | {label} | {what} |")
    dyno_failures = [f for f in failures if not f[1].startswith("inductor")]
    return 1 if fatal or dyno_failures else 0


if __name__ == "__main__":
    sys.exit(main())
