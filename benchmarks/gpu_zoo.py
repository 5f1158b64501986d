"""The transformers zoo on a GPU: exported here, run there.

    python benchmarks/gpu_zoo.py export [--out build/gpu-zoo] [--models a,b] [--dtypes float32,autocast-bfloat16]
    python3 benchmarks/gpu_zoo.py run --artifacts build/gpu-zoo [--out results.md] [--profile kernels.txt]   # GPU machine

`export` compiles every zoo model (benchmarks/zoo.py, "bench" size) for the Triton target
on this CPU-only machine (dyno.export_triton, without weights). `run` needs only torch,
triton and transformers: it builds the same models (same seed), binds their weights,
checks the exported programs against eager on the GPU and times eager, Inductor and Dyno
in one run, also with CUDA graphs on both sides (Inductor's reduce-overhead); it prints
speedups over eager and their geomeans per dtype. `autocast-bfloat16`/`autocast-float16`
are the float32 models under torch.autocast("cuda") (exported with `autocast=`).
"""
import argparse
import contextlib
import datetime
import os
import platform
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(__file__))
import zoo  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# A float32 model under torch.autocast("cuda", dtype): exported with autocast=dtype, eager
# and Inductor run inside the autocast region.
AUTOCAST = {"autocast-bfloat16": torch.bfloat16, "autocast-float16": torch.float16}
# Relative L2 error from eager that counts as a match: float32 (TF32 off on both sides),
# bf16 (8-bit mantissa through 4 layers), fp16 (11 bits).
TOLERANCE = {"float32": 1e-4, "bfloat16": 3e-2, "float16": 4e-3,
             "autocast-bfloat16": 3e-2, "autocast-float16": 4e-3}


def model_dtype(dtype_name):
    return torch.float32 if dtype_name in AUTOCAST else DTYPES[dtype_name]


def autocast_region(dtype_name):
    if dtype_name in AUTOCAST:
        return torch.autocast("cuda", dtype=AUTOCAST[dtype_name])
    return contextlib.nullcontext()


def export(args):
    import dyno

    for name in args.models:
        for dtype_name in args.dtypes:
            start = time.perf_counter()
            model, inputs = zoo.build(name, model_dtype(dtype_name), size="bench")
            directory = os.path.join(args.out, f"{name}-{dtype_name}")
            try:
                dyno.export_triton(model, inputs, directory, save_weights=False,
                                   autocast=AUTOCAST.get(dtype_name))
            except Exception as error:  # e.g. data-dependent control flow: not one graph
                print(f"{name} {dtype_name}: NOT EXPORTED: {type(error).__name__}: "
                      f"{str(error).splitlines()[0][:200]}", flush=True)
                continue
            print(f"{name} {dtype_name}: exported in {time.perf_counter() - start:.1f} s",
                  flush=True)


def run(args):
    import triton
    from gpu_run import load_runtime, median_ms, relative_error
    from report import geomean, publish

    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    runtime = None
    rows = []
    # Dyno's exported programs record CUDA graphs by default; Inductor's default does not
    # (its reduce-overhead mode does): both sides are timed both ways.
    labels = ["eager", "inductor", "dyno", "inductor_cudagraphs", "dyno_no_cudagraphs"]
    for name in args.models:
        for dtype_name in args.dtypes:
            directory = os.path.join(args.artifacts, f"{name}-{dtype_name}")
            if not os.path.isdir(directory):
                continue
            runtime = runtime or load_runtime(directory)
            try:
                model, inputs = zoo.build(name, model_dtype(dtype_name), size="bench")
                model = model.to(device)
                inputs = tuple(x.to(device) for x in inputs)
                state = model.state_dict()
                program = runtime.load(directory, device=device).bind(state)
                ungraphed = runtime.load(directory, device=device, cuda_graphs=False).bind(state)
                with torch.no_grad(), autocast_region(dtype_name):
                    expected = model(*inputs)
                    # The first call compiles the program's kernels (Triton's JIT).
                    torch.cuda.synchronize()
                    start = time.perf_counter()
                    first = program(*inputs)
                    torch.cuda.synchronize()
                    first_seconds = time.perf_counter() - start
                    error = max(relative_error(first, expected),
                                relative_error(ungraphed(*inputs), expected))
                    times = {"eager": median_ms(lambda: model(*inputs))}
                    compiled = torch.compile(model)
                    compiled(*inputs)
                    times["inductor"] = median_ms(lambda: compiled(*inputs))
                    times["dyno"] = median_ms(lambda: program(*inputs))
                    torch._dynamo.reset()
                    graphed_inductor = torch.compile(model, mode="reduce-overhead")
                    for _ in range(3):
                        graphed_inductor(*inputs)
                    times["inductor_cudagraphs"] = median_ms(lambda: graphed_inductor(*inputs))
                    times["dyno_no_cudagraphs"] = median_ms(lambda: ungraphed(*inputs))
                    torch._dynamo.reset()
                kernels = len(ungraphed.call.__globals__["_kernels"].launchers)
                if args.profile:
                    with torch.no_grad(), autocast_region(dtype_name):
                        profile_kernels(args.profile, f"{name} {dtype_name}",
                                        {"dyno_no_cudagraphs": ungraphed, "inductor": compiled},
                                        inputs)
            except Exception as exc:  # one broken model must not hide the rest
                traceback.print_exc()
                rows.append((name, dtype_name, "ERROR", f"{type(exc).__name__}: {exc}"[:100],
                             None, None, None))
                continue
            verdict = "ok" if error <= TOLERANCE[dtype_name] else "MISMATCH"
            rows.append((name, dtype_name, verdict, f"{error:.1e}", kernels, first_seconds,
                         times))
            print(name, dtype_name, verdict, f"{error:.1e}",
                  {k: round(v, 3) for k, v in times.items()}, flush=True)

    props = torch.cuda.get_device_properties(device)
    lines = [f"# Transformers zoo on {props.name}, {datetime.date.today()}", "",
             f"torch {torch.__version__}, triton {triton.__version__}, Python "
             f"{platform.python_version()}; {props.multi_processor_count} SMs. Models: "
             "benchmarks/zoo.py at \"bench\" size (width 512, 4 layers, batch 8 x 256 "
             "tokens; images 64x64), random weights. Exported on a CPU-only machine "
             "(benchmarks/gpu_zoo.py export), run here with torch, triton and transformers "
             "only. TF32 off. `dyno` is the exported program as loaded by default (a CUDA graph "
             "on CUDA devices), `dyno_no_cudagraphs` the same with cuda_graphs=False; "
             "`inductor_cudagraphs` is mode=\"reduce-overhead\". Times: medians of "
             "triton.testing.do_bench; speedup = eager "
             "time / backend time, same run. `first call` is Dyno's first call, which "
             "compiles its kernels (Triton's cache empty unless an earlier run filled it).", "",
             "| model | dtype | numerics (rel. L2 vs eager) | kernels | first call s | "
             + " | ".join(f"{l} ms" for l in labels) + " | "
             + " | ".join(f"{l} speedup" for l in labels[1:]) + " |",
             "|---" * (5 + 2 * len(labels) - 1) + "|"]
    for name, dtype_name, verdict, error, kernels, first_seconds, times in rows:
        if times is None:
            lines.append(f"| {name} | {dtype_name} | {verdict}: {error} |"
                         + " |" * (1 + 2 * len(labels)))
            continue
        lines.append(f"| {name} | {dtype_name} | {verdict} ({error}) | {kernels} | "
                     f"{first_seconds:.2f} | "
                     + " | ".join(f"{times[l]:.3f}" for l in labels) + " | "
                     + " | ".join(f"{times['eager'] / times[l]:.2f}x" for l in labels[1:])
                     + " |")
    lines += ["", "Geomean speedup over eager:", "",
              "| dtype | " + " | ".join(labels[1:]) + " |", "|---" * len(labels) + "|"]
    for dtype_name in args.dtypes:
        timed = [t for _, d, _, _, _, _, t in rows if d == dtype_name and t]
        if timed:
            lines.append(f"| {dtype_name} | " + " | ".join(
                f"{geomean([t['eager'] / t[l] for t in timed]):.2f}x" for l in labels[1:]) + " |")
    publish(lines, args.out)
    if args.out:  # the speedups as a PNG beside the table, where matplotlib is installed
        import plot_results
        try:
            print("plot: " + plot_results.plot(args.out))
        except ImportError:
            print(f"plot: no matplotlib here; run benchmarks/plot_results.py {args.out} "
                  "where Dyno is installed")


def profile_kernels(path, title, programs, inputs, calls=10, rows=12):
    """Appends to `path` each program's GPU time per kernel (torch.profiler, `calls`
    calls), the `rows` costliest: where a model's time goes, side by side."""
    from torch.profiler import ProfilerActivity, profile

    with open(path, "a") as out:
        for label, program in programs.items():
            program(*inputs)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(calls):
                    program(*inputs)
                torch.cuda.synchronize()
            table = prof.key_averages().table(sort_by="self_device_time_total", row_limit=rows,
                                              max_name_column_width=70)
            out.write(f"## {title}: {label}, {calls} calls\n\n{table}\n")


def export_here_run_there(export, run, artifacts: str, models: str, **extra):
    """The command line both zoo benchmarks share: `export` on this machine, `run` on the
    GPU machine, over --models; `extra` adds options (name -> argparse keywords)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["export", "run"])
    parser.add_argument("--out", default="")
    parser.add_argument("--artifacts", default=artifacts)
    parser.add_argument("--models", default=models)
    for name, options in extra.items():
        parser.add_argument(f"--{name}", **options)
    args = parser.parse_args()
    args.models = args.models.split(",")
    if args.mode == "export":
        args.out = args.out or args.artifacts
        export(args)
    else:
        run(args)


def main():
    def run_dtypes(args):
        args.dtypes = args.dtypes.split(",")
        run(args)

    def export_dtypes(args):
        args.dtypes = args.dtypes.split(",")
        export(args)

    export_here_run_there(export_dtypes, run_dtypes, "build/gpu-zoo", ",".join(zoo.ZOO),
                          dtypes=dict(default=",".join([*DTYPES, *AUTOCAST])),
                          profile=dict(default="", help="append per-kernel GPU times of "
                                       "Dyno (no CUDA graph) and Inductor to this file"))


if __name__ == "__main__":
    main()
