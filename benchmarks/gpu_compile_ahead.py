"""Triton kernels compiled ahead of their first launch, on a GPU (issue 23): the time from
loading an exported program to its first result, with its kernels compiled one after
another at their first launches (DYNO_JIT_THREADS=1) and compiled ahead on the compile
threads (--threads, default 8). Every run is a fresh process with an empty Triton cache;
the two settings alternate, and medians are printed with their ratio. The first result is
checked against eager, and kernels that Triton compiled again at their launch (a compile
ahead whose signature missed) are counted. The floor is printed too: a last run with
Triton's cache already holding the program's kernels.

    python benchmarks/gpu_zoo.py export --models gpt2,llama,bert --dtypes float32,bfloat16
    python3 benchmarks/gpu_compile_ahead.py run --artifacts build/gpu-zoo [--runs 3]   # GPU
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from gpu_zoo import export_here_run_there  # noqa: E402

CHILD = r'''
import json, sys, time
import torch
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/../e2e")
import zoo
from gpu_run import load_runtime, relative_error
from gpu_zoo import autocast_region, model_dtype

directory, name, dtype_name = sys.argv[2:5]
device = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False
model, inputs = zoo.build(name, model_dtype(dtype_name), size="bench")
model = model.to(device)
inputs = tuple(x.to(device) for x in inputs)
runtime = load_runtime(directory)
torch.cuda.synchronize()
with torch.no_grad(), autocast_region(dtype_name):
    start = time.perf_counter()
    program = runtime.load(directory, device=device, cuda_graphs=False).bind(model)
    first = program(*inputs)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    error = relative_error(first, model(*inputs))
launchers = program.call.__globals__["_kernels"]
compiled = [len(l.function.device_caches[torch.cuda.current_device()][0])
            for l in set(launchers.launchers.values())]
print(json.dumps({"seconds": seconds, "error": error, "kernels": len(compiled),
                  "ahead": launchers.compiled_ahead,
                  "compiled_again": sum(c - 1 for c in compiled if c > 1)}))
'''


# Every run's Triton cache, under one directory removed at the end.
CACHES = tempfile.TemporaryDirectory(prefix="dyno-compile-ahead-")


def child(directory, name, dtype_name, threads, triton_cache=None):
    environment = dict(os.environ, DYNO_JIT_THREADS=str(threads),
                       TRITON_CACHE_DIR=triton_cache or tempfile.mkdtemp(dir=CACHES.name))
    result = subprocess.run([sys.executable, "-c", CHILD, os.path.dirname(__file__),
                             directory, name, dtype_name], env=environment,
                            capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"{name} {dtype_name}: {result.stderr[-2000:]}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]),
                triton_cache=environment["TRITON_CACHE_DIR"])


def run(args):
    from gpu_zoo import TOLERANCE
    from report import publish

    settings = [1, args.threads]
    lines = ["| model | dtype | kernels | compiled ahead | compiled again | at launch (s) | "
             "ahead (s) | ratio | Triton cache warm (s) | rel. error |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name in args.models:
        for dtype_name in args.dtypes:
            directory = os.path.join(args.artifacts, f"{name}-{dtype_name}")
            if not os.path.isdir(directory):
                continue
            runs = {threads: [] for threads in settings}
            for _ in range(args.runs):
                for threads in settings:
                    runs[threads].append(child(directory, name, dtype_name, threads))
            # The floor: the same program with Triton's cache already holding its kernels.
            warm = child(directory, name, dtype_name, 1, runs[1][-1]["triton_cache"])
            serial = statistics.median(r["seconds"] for r in runs[1])
            ahead = statistics.median(r["seconds"] for r in runs[args.threads])
            last = runs[args.threads][-1]
            error = max(r["error"] for rs in runs.values() for r in rs)
            verdict = "" if error <= TOLERANCE[dtype_name] else " MISMATCH"
            lines.append(f"| {name} | {dtype_name} | {last['kernels']} | {last['ahead']} | "
                         f"{last['compiled_again']} | {serial:.2f} | {ahead:.2f} | "
                         f"{ahead / serial:.2f}x | {warm['seconds']:.2f} | {error:.1e}{verdict} |")
            print(lines[-1], flush=True)
    import torch

    title = (f"# Triton compiles ahead of the first launch ({torch.cuda.get_device_name()}, "
             f"{args.threads} threads against 1, medians of {args.runs} fresh processes)")
    publish([title, "", "From loading the exported program to its first result.", "",
             *lines], args.out)


def main():
    def with_dtypes(action):
        def act(args):
            args.dtypes = args.dtypes.split(",")
            action(args)
        return act

    from gpu_zoo import export

    export_here_run_there(with_dtypes(export), with_dtypes(run), "build/gpu-zoo",
                          "gpt2,llama,bert",
                          dtypes=dict(default="float32,bfloat16"),
                          runs=dict(type=int, default=3),
                          threads=dict(type=int, default=8))


if __name__ == "__main__":
    main()
