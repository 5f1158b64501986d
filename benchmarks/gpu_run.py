"""Runs the exported GPU suite on a GPU machine: numerics against eager, then eager,
Inductor and Dyno's Triton kernels timed in one run. Needs only torch and triton.

    python benchmarks/gpu_run.py --artifacts build/gpu-artifacts [--out results.md]

Times are medians of triton.testing.do_bench; speedups are eager time / backend time.
The bandwidth case reports Dyno's fused pointwise kernel against the device-to-device
copy bandwidth torch measures in the same run (bytes read + bytes written).
"""
import argparse
import datetime
import importlib.util
import os
import platform
import sys
import traceback

import torch
import triton
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(__file__))
from gpu_suite import build, cases, make_inputs  # noqa: E402
from report import geomean, publish  # noqa: E402


def load_file(path, name):
    """The Python file at `path` as module `name`, without importing its package (the
    GPU machine has no Dyno installed)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_runtime(directory, name="dyno_triton_runtime"):
    """The Triton runtime export `directory` ships, imported as a fresh module `name`:
    the package triton_runtime/ (a single file, triton_runtime.py, in exports made before
    2026-12-03, which older builds' folders still hold)."""
    package = os.path.join(directory, "triton_runtime")
    if not os.path.isdir(package):
        return load_file(os.path.join(directory, "triton_runtime.py"), name)
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]  # (another export's copy: each load is its own)
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(package, "__init__.py"), submodule_search_locations=[package])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (its modules import each other relatively)
    spec.loader.exec_module(module)
    return module


def program_weights(model):
    """`model`'s parameters and buffers as an export's weights file gives them to its
    program: on the CPU, so that the program's device copies are its own, laid out as its
    reads want them (runtime.Program: convolution filters channels-last). Bound as the
    model's own CUDA tensors they would stay the caller's, read as they are."""
    return {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}


def load_programs(runtime, directory, device, state):
    """The exported program as the heuristic launches it and as autotuned, both without
    CUDA graphs (kernel and host time as they are), bound to `state`."""
    return (runtime.load(directory, device=device, cuda_graphs=False).bind(state),
            runtime.load(directory, device=device, autotune=True,
                         cuda_graphs=False).bind(state))


def relative_error(got, want):
    got, want = got.double(), want.double()
    finite = torch.isfinite(want)
    if not torch.equal(finite, torch.isfinite(got)):
        return float("inf")
    denominator = want[finite].norm().item() or 1.0
    return (got[finite] - want[finite]).norm().item() / denominator


def median_ms(fn):
    return do_bench(fn, warmup=50, rep=300, return_mode="median")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--artifacts", default="build/gpu-artifacts")
    parser.add_argument("--out", default="")
    parser.add_argument("--cases", default="")
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--device", default="cuda",
                        help="cpu runs the kernels under Triton's interpreter (numerics only)")
    args = parser.parse_args()
    wanted = set(filter(None, args.cases.split(",")))
    device = torch.device(args.device)
    runtime = None
    check_rows, bench_rows, bandwidth_rows = [], [], []
    for name, kind, builder, specs in cases():
        if wanted and name not in wanted:
            continue
        directory = os.path.join(args.artifacts, name)
        runtime = runtime or load_runtime(directory)
        try:
            model = build(builder, device)
            inputs = make_inputs(specs, device, seed=1)
            program, tuned = load_programs(runtime, directory, device, model.state_dict())
            graphed = runtime.load(directory, device=device, autotune=True,
                                   cuda_graphs=True).bind(model.state_dict())
            with torch.no_grad():
                expected = model(*inputs)
                actual = program(*inputs)
                actual_tuned = tuned(*inputs)
                actual_graphed = graphed(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize()
            expected_list = expected if isinstance(expected, tuple) else (expected,)
            errors = []
            for result in (actual, actual_tuned, actual_graphed):
                result_list = result if isinstance(result, tuple) else (result,)
                for want, got in zip(expected_list, result_list):
                    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
                    errors.append(relative_error(got, want))
            error = max(errors)
            kernels = len(program.call.__globals__["_kernels"].launchers)
        except Exception as exc:  # report and go on: one broken case must not hide the rest
            traceback.print_exc()
            check_rows.append((name, kind, "ERROR", f"{type(exc).__name__}: {exc}"[:120], "-"))
            continue
        # float32 to 1e-4; a bf16/fp16 output to a few ulps of its 8- or 11-bit mantissa.
        low_precision = any(t.dtype in (torch.bfloat16, torch.float16) for t in expected_list)
        ok = error < (3e-2 if low_precision else 1e-4)
        check_rows.append((name, kind, "ok" if ok else "MISMATCH", f"{error:.1e}", kernels))
        if kind == "check" or device.type != "cuda":
            continue
        with torch.no_grad():
            times = {"eager": median_ms(lambda: model(*inputs))}
            if not args.no_inductor:
                compiled = torch.compile(model)
                compiled(*inputs)
                times["inductor"] = median_ms(lambda: compiled(*inputs))
            times["dyno"] = median_ms(lambda: program(*inputs))
            times["dyno_autotuned"] = median_ms(lambda: tuned(*inputs))
            if not args.no_inductor:
                graphed_inductor = torch.compile(model, mode="reduce-overhead")
                for _ in range(3):
                    graphed_inductor(*inputs)
                times["inductor_cudagraphs"] = median_ms(lambda: graphed_inductor(*inputs))
            times["dyno_cudagraphs"] = median_ms(lambda: graphed(*inputs))
        if kind == "bench":
            bench_rows.append((name, times))
        else:
            x = inputs[0]
            copy_out = torch.empty_like(x)
            copy_ms = median_ms(lambda: copy_out.copy_(x))
            moved = 2 * x.numel() * x.element_size()
            bandwidth_rows.append((name, times, copy_ms, moved))
        torch._dynamo.reset()

    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        machine = f"{props.name}; {props.multi_processor_count} SMs"
    else:
        machine = "CPU, Triton interpreter"
    lines = [f"# Dyno Triton target on {machine.split(';')[0]}, {datetime.date.today()}", "",
             f"torch {torch.__version__}, triton {triton.__version__}, Python "
             f"{platform.python_version()}; {machine}.",
             "Artifacts compiled ahead of time on a CPU-only machine (benchmarks/gpu_export.py), "
             "run here with torch and triton only (benchmarks/gpu_run.py).", "",
             "## Numerics (compiled vs eager on the GPU, relative L2 error; heuristic, "
             "autotuned and CUDA-graph programs)", "", "| case | kind | result | max rel. error | kernels |",
             "|---|---|---|---|---|"]
    lines += [f"| {n} | {k} | {r} | {e} | {c} |" for n, k, r, e, c in check_rows]
    labels = (["eager"] + ([] if args.no_inductor else ["inductor"]) + ["dyno", "dyno_autotuned"]
              + ([] if args.no_inductor else ["inductor_cudagraphs"]) + ["dyno_cudagraphs"])
    if bench_rows:
        lines += ["", "## Speed (median ms per call; speedup = eager / backend, same run)", "",
                  "| model | " + " | ".join(f"{l} ms" for l in labels) + " | "
                  + " | ".join(f"{l} speedup" for l in labels[1:]) + " |",
                  "|---" * (1 + 2 * len(labels) - 1) + "|"]
        speedups = {l: [] for l in labels[1:]}
        for name, times in bench_rows:
            ratios = []
            for label in labels[1:]:
                speedups[label].append(times["eager"] / times[label])
                ratios.append(f"{times['eager'] / times[label]:.2f}x")
            lines.append(f"| {name} | " + " | ".join(f"{times[l]:.3f}" for l in labels)
                         + " | " + " | ".join(ratios) + " |")
        lines.append("| **geomean** | " + " | ".join([""] * len(labels)) + " | "
                     + " | ".join(f"{geomean(v):.2f}x" for v in speedups.values()) + " |")
    for name, times, copy_ms, moved in bandwidth_rows:
        lines += ["", f"## Bandwidth: {name} ({moved / 2**30:.1f} GiB moved per call)", "",
                  "| | ms | GB/s | of copy bandwidth |", "|---|---|---|---|",
                  f"| torch copy_ | {copy_ms:.3f} | {moved / copy_ms / 1e6:.0f} | 100% |"]
        for label in labels:
            if "cudagraphs" in label:
                continue  # a graph's input copy would be counted as the kernel's traffic
            lines.append(f"| {label} | {times[label]:.3f} | {moved / times[label] / 1e6:.0f} | "
                         f"{copy_ms / times[label] * 100:.0f}% |")
    publish(lines, args.out)


if __name__ == "__main__":
    main()
