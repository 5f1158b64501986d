"""The transformers zoo on a GPU: exported here, run there.

    python benchmarks/gpu_zoo.py export [--size bench|real] [--out build/gpu-zoo] [--models a,b] [--dtypes float32,bfloat16] [--options JSON]
    python3 benchmarks/gpu_zoo.py run [--size bench|real] --artifacts build/gpu-zoo[,other-build] [--out results.md] [--profile kernels.txt]   # GPU machine

`export` compiles zoo models (e2e/zoo.py: the zoo and its families at "bench"
size, or the standard configurations at "real" size) for the Triton target on this
CPU-only machine (dyno.export_triton, without weights). `run` needs only torch, triton
and transformers: it builds the same models (same seed), binds their weights, checks
the exported programs against eager on the GPU and times eager, Inductor and Dyno in one
run, like for like: Dyno without CUDA graphs against Inductor's default, Dyno's CUDA
graph against Inductor's mode="reduce-overhead"; with kernels and GPU time per call
(torch.profiler). Several comma-separated artifacts folders (exports of two Dyno
builds) are timed side by side against the same Inductor. `autocast-bfloat16` /
`autocast-float16` are the float32 models under torch.autocast("cuda") (exported with
`autocast=`).
"""
import argparse
import contextlib
import json
import datetime
import os
import platform
import statistics
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
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
            try:
                model, inputs = zoo.build(name, model_dtype(dtype_name), size=args.size)
            except KeyError as error:  # no "real" configuration for this model
                print(f"{name}: {error}", flush=True)
                break
            directory = os.path.join(args.out, f"{name}-{dtype_name}")
            try:
                dyno.export_triton(model, inputs, directory, save_weights=False,
                                   autocast=AUTOCAST.get(dtype_name),
                                   options=json.loads(getattr(args, "options", "") or "{}"))
            except Exception as error:  # e.g. data-dependent control flow: not one graph
                print(f"{name} {dtype_name}: NOT EXPORTED: {type(error).__name__}: "
                      f"{str(error).splitlines()[0][:200]}", flush=True)
                continue
            print(f"{name} {dtype_name}: exported in {time.perf_counter() - start:.1f} s",
                  flush=True)


def _profiled(program, inputs, calls):
    """torch.profiler's record of `calls` calls of `program` on the GPU (after one)."""
    from torch.profiler import ProfilerActivity, profile

    program(*inputs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            program(*inputs)
        torch.cuda.synchronize()
    return prof


def gpu_profile(program, inputs, calls=5):
    """(kernels per call, GPU ms per call) of `program` by torch.profiler: every CUDA
    kernel, library ones (cuBLAS, cuDNN) included; memory copies and sets not counted
    as kernels, but their time is."""
    kernels, device_us = 0, 0.0
    for event in _profiled(program, inputs, calls).events():
        if event.device_type != torch.autograd.DeviceType.CUDA:
            continue
        device_us += event.device_time
        name = event.name.lower()
        if not (name.startswith("memcpy") or name.startswith("memset")):
            kernels += 1
    return kernels / calls, device_us / 1e3 / calls


def run(args):
    import triton
    from gpu_run import load_runtime, median_ms, program_weights, relative_error
    from report import geomean, publish

    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # Each artifacts folder is one Dyno build's exports (several compare builds A/B in
    # one run), labelled by its folder's name.
    variants = [path for path in args.artifacts.split(",") if path]
    labels = {path: os.path.basename(os.path.normpath(path)) for path in variants}
    runtimes = {}
    rows = []
    for name in args.models:
        for dtype_name in args.dtypes:
            present = [v for v in variants
                       if os.path.isdir(os.path.join(v, f"{name}-{dtype_name}"))]
            if not present:
                continue
            try:
                model, inputs = zoo.build(name, model_dtype(dtype_name), size=args.size)
                model = model.to(device)
                inputs = tuple(x.to(device) for x in inputs)
                state = program_weights(model)
                row = {"model": name, "dtype": dtype_name, "times": {}, "errors": {},
                       "profile": {}}
                with torch.no_grad(), autocast_region(dtype_name):
                    expected = model(*inputs)
                    row["times"]["eager"] = median_ms(lambda: model(*inputs))
                    compiled = torch.compile(model)
                    row["strides"] = {"eager": expected.stride(),
                                      "inductor": compiled(*inputs).stride()}
                    row["times"]["inductor"] = median_ms(lambda: compiled(*inputs))
                    row["profile"]["inductor"] = gpu_profile(compiled, inputs)
                    # No reset between the two: Dynamo keeps both compiles (its backend
                    # guard picks each one's own), so the default is timed again below,
                    # in turns with Dyno's programs.
                    graphed_inductor = torch.compile(model, mode="reduce-overhead")
                    for _ in range(3):
                        graphed_inductor(*inputs)
                    row["times"]["inductor_cudagraphs"] = median_ms(
                        lambda: graphed_inductor(*inputs))
                    loaded = {}
                    for variant in present:
                        directory = os.path.join(variant, f"{name}-{dtype_name}")
                        if variant not in runtimes:
                            runtimes[variant] = load_runtime(
                                directory, f"dyno_triton_runtime_{len(runtimes)}")
                        runtime, label = runtimes[variant], labels[variant]
                        program = runtime.load(directory, device=device).bind(state)
                        ungraphed = runtime.load(directory, device=device,
                                                 cuda_graphs=False).bind(state)
                        result = ungraphed(*inputs)
                        row["strides"][label] = result.stride()
                        row["errors"][label] = max(
                            relative_error(program(*inputs), expected),
                            relative_error(result, expected))
                        row["profile"][label] = gpu_profile(ungraphed, inputs)
                        if args.profile:
                            profile_kernels(args.profile, f"{name} {dtype_name}",
                                            {label: ungraphed, "inductor": compiled}
                                            if variant == present[-1] else {label: ungraphed},
                                            inputs)
                        loaded[label] = (program, ungraphed)
                    # Builds and Inductor's default timed in turns (3 rounds, medians):
                    # without CUDA graphs they are bound by the host, whose speed drifts
                    # within a process (the same program measured 4.2 and 6.3 ms apart).
                    samples = {}
                    for _ in range(3):
                        samples.setdefault("inductor", []).append(
                            median_ms(lambda: compiled(*inputs)))
                        for label, (program, ungraphed) in loaded.items():
                            samples.setdefault(label, []).append(
                                median_ms(lambda: ungraphed(*inputs)))
                            samples.setdefault(f"{label}_cudagraphs", []).append(
                                median_ms(lambda: program(*inputs)))
                    for key, values in samples.items():
                        row["times"][key] = statistics.median(values)
                    del loaded, program, ungraphed
                    del compiled, graphed_inductor
                    torch._dynamo.reset()
            except Exception as exc:  # one broken model must not hide the rest
                traceback.print_exc()
                rows.append({"model": name, "dtype": dtype_name,
                             "failure": f"{type(exc).__name__}: {exc}"[:120]})
                continue
            rows.append(row)
            print(name, dtype_name, {k: round(v, 3) for k, v in row["times"].items()},
                  row["errors"], row["profile"], "output strides:", row["strides"],
                  flush=True)
    publish(report_lines(rows, [labels[v] for v in variants], args, triton.__version__),
            args.out)


def report_lines(rows, labels, args, triton_version):
    """The results table: like for like (Dyno without CUDA graphs against Inductor's
    default, with them against reduce-overhead), kernels and GPU time per call."""
    import platform

    from report import geomean

    tolerance = TOLERANCE
    props = torch.cuda.get_device_properties(0)
    lines = [f"# Transformers zoo on {props.name}, {datetime.date.today()}, size "
             f"\"{args.size}\"", "",
             f"torch {torch.__version__}, triton {triton_version}, Python "
             f"{platform.python_version()}; {props.multi_processor_count} SMs. "
             f"`python3 benchmarks/gpu_zoo.py run --size {args.size} --artifacts "
             f"{args.artifacts}` (exported on a CPU-only machine with `gpu_zoo.py export`). "
             "Random weights (e2e/zoo.py), TF32 off. Like for like: Dyno's program "
             "without CUDA graphs against Inductor's default (`/ind`), with its CUDA graph "
             "against Inductor's mode=\"reduce-overhead\" (`/ind-ro`); above 1 Dyno is "
             "faster. Times: medians of triton.testing.do_bench, ms (Inductor's default and Dyno's builds timed in turns, the median of 3 rounds). Kernels and GPU ms "
             "per call: torch.profiler over 5 calls without CUDA graphs (memory copies "
             "timed, not counted as kernels).", ""]
    header = ["model", "dtype", "eager ms", "inductor ms", "inductor-ro ms",
              "inductor kernels", "inductor GPU ms"]
    for label in labels:
        header += [f"{label} numerics", f"{label} ms", f"{label} graphs ms",
                   f"{label} kernels", f"{label} GPU ms", f"{label} /ind", f"{label} /ind-ro"]
    lines += ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    ratios = {}  # (dtype, label, mode) -> [Dyno's speedup over Inductor]
    for row in rows:
        if "failure" in row:
            lines.append(f"| {row['model']} | {row['dtype']} | FAILED: {row['failure']} |"
                         + " |" * (len(header) - 3))
            continue
        times, profile = row["times"], row["profile"]
        cells = [row["model"], row["dtype"], f"{times['eager']:.3f}",
                 f"{times['inductor']:.3f}", f"{times['inductor_cudagraphs']:.3f}",
                 f"{profile['inductor'][0]:.0f}", f"{profile['inductor'][1]:.3f}"]
        for label in labels:
            if label not in row["errors"]:
                cells += [""] * 7
                continue
            error = row["errors"][label]
            verdict = "ok" if error <= tolerance[row["dtype"]] else "MISMATCH"
            plain = times["inductor"] / times[label]
            graphed = times["inductor_cudagraphs"] / times[f"{label}_cudagraphs"]
            ratios.setdefault((row["dtype"], label, "plain"), []).append(plain)
            ratios.setdefault((row["dtype"], label, "graphs"), []).append(graphed)
            cells += [f"{verdict} ({error:.1e})", f"{times[label]:.3f}",
                      f"{times[label + '_cudagraphs']:.3f}", f"{profile[label][0]:.0f}",
                      f"{profile[label][1]:.3f}", f"{plain:.2f}", f"{graphed:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Geomean of Dyno's speedup over Inductor, like for like:", "",
              "| dtype | build | no CUDA graphs (/ind) | CUDA graphs (/ind-ro) | models |",
              "|---|---|---|---|---|"]
    for dtype_name in args.dtypes:
        for label in labels:
            plain = ratios.get((dtype_name, label, "plain"))
            if plain:
                graphed = ratios[(dtype_name, label, "graphs")]
                lines.append(f"| {dtype_name} | {label} | {geomean(plain):.2f} | "
                             f"{geomean(graphed):.2f} | {len(plain)} |")
    return lines


def kernel_sequence(program, inputs):
    """The names of the CUDA kernels one call of `program` launches, in launch order
    (memory copies and sets included, marked as such by their names): two programs'
    kernels compared one by one."""
    events = [event for event in _profiled(program, inputs, 1).events()
              if event.device_type == torch.autograd.DeviceType.CUDA]
    events.sort(key=lambda event: event.time_range.start)
    return [event.name for event in events]


def profile_kernels(path, title, programs, inputs, calls=10, rows=12):
    """Appends to `path` each program's GPU time per kernel (torch.profiler, `calls`
    calls), the `rows` costliest: where a model's time goes, side by side."""
    with open(path, "a") as out:
        for label, program in programs.items():
            table = _profiled(program, inputs, calls).key_averages().table(sort_by="self_device_time_total", row_limit=rows,
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
    if not args.models:  # the zoo and its families; at "real" size, those that have one
        size = getattr(args, "size", "bench")
        args.models = ",".join(zoo.REAL_SIZES if size == "real"
                               else [*zoo.ZOO, *zoo.FAMILIES])
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

    export_here_run_there(export_dtypes, run_dtypes, "build/gpu-zoo", "",
                          size=dict(default="bench", choices=[*zoo.SIZES, "real"],
                                    help="\"real\": the standard configurations of the "
                                    "models zoo.REAL_SIZES lists"),
                          dtypes=dict(default=",".join([*DTYPES, *AUTOCAST])),
                          options=dict(default="", help="export: torch.compile's options "
                                       "for backend=\"mlir\" as JSON, e.g. "
                                       "'{\"tensor_core_float32\": false}'"),
                          profile=dict(default="", help="append per-kernel GPU times of "
                                       "Dyno (no CUDA graph) and Inductor to this file"))


if __name__ == "__main__":
    main()
