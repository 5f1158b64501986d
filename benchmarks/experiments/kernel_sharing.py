"""Kernels shared across the graphs of a process (issue 23). A zoo model whose every layer
has a forward pre-hook that Dynamo does not trace (a user's logging hook, here a
`torch.compiler.disable`d no-op) compiles as one graph per layer; the layers' graphs
make the same kernels, which the process compiles once (cpu.jit's kernel units, Triton's
shared launchers). Compared with the same process with sharing turned off (the
registries emptied), each in a fresh process, compile cache off; "Dyno s" is the time
spent in Dyno's compiler hook over all graphs, median of `--runs` processes.

    python benchmarks/experiments/kernel_sharing.py [--models gpt2,llama,bert] [--layers 6]
                                        [--target cpu] [--runs 3] [--out FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r'''
import json, sys, time
import torch
sys.path.insert(0, sys.argv[5])
import zoo
import dyno, dyno.backend
from dyno.targets.cpu import jit
from dyno.targets.triton.runtime import kernel_files
name, target, layers, sharing = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
if not sharing:
    class Empty(dict):  # finds nothing, keeps nothing
        def __setitem__(self, key, value):
            pass
    jit._units_by_kernel = kernel_files._shared_launchers = Empty()
zoo.SIZES["sharing"] = dict(zoo.SIZES["cpu"], layers=layers)
model, inputs = zoo.build(name, size="sharing")
model.eval()

@torch.compiler.disable
def log_hook(module, args):  # what Dynamo does not trace: a graph break per layer
    return None

blocks = next(m for m in model.modules() if isinstance(m, torch.nn.ModuleList))
for block in blocks:
    block.register_forward_pre_hook(log_hook)
spent = []
hook = dyno.backend.compile_graph
def timed(*args, **kwargs):
    start = time.perf_counter()
    try:
        return hook(*args, **kwargs)
    finally:
        spent.append(time.perf_counter() - start)
dyno.backend.compile_graph = timed
with torch.no_grad():
    got = torch.compile(model, backend="mlir", options={"target": target})(*inputs)
    want = model(*inputs)
stats = dyno.stats()
print(json.dumps({
    "dyno_s": sum(spent), "graphs": stats["compiled_graphs"], "kernels": stats["kernels"],
    "shared": stats.get("shared_kernels", 0),
    "fallbacks": stats["fallback_graphs"] + stats["runtime_fallbacks"],
    "error": ((got - want).abs().max() / want.abs().max()).item()}))
'''


def measure(name: str, target: str, layers: int, sharing: bool) -> dict:
    env = dict(os.environ, DYNO_CACHE="0")
    env.pop("DYNO_DEBUG_DIR", None)
    done = subprocess.run([sys.executable, "-c", CHILD, name, target, str(layers),
                           "1" if sharing else "0",
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "..", "e2e")],  # (zoo.py)
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="gpt2,llama,bert")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    lines = [f"A graph per layer (an untraced pre-hook on each of {args.layers} layers), "
             f"{args.target} target, zoo \"cpu\" width, fp32, inference; Dyno's compile "
             f"time over all graphs, median of {args.runs} fresh processes (sharing on "
             "and off alternate).", "",
             "| model | graphs | kernels | shared | Dyno s, sharing off | Dyno s, sharing on "
             "| on / off | max rel. error |", "|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for name in args.models.split(","):
        runs = {True: [], False: []}
        for run in range(args.runs):
            for sharing in (False, True):
                runs[sharing].append(measure(name, args.target, args.layers, sharing))
                print(f"  {name} sharing {'on' if sharing else 'off'} run {run + 1}/"
                      f"{args.runs}: {runs[sharing][-1]['dyno_s']:.2f} s",
                      file=sys.stderr, flush=True)
        for result in runs[True] + runs[False]:
            if result["fallbacks"]:
                raise RuntimeError(f"{name}: {result['fallbacks']} graphs fell back")
        off, on = (statistics.median(r["dyno_s"] for r in runs[s]) for s in (False, True))
        last = runs[True][-1]
        error = max(r["error"] for r in runs[True] + runs[False])
        lines.append(f"| {name} | {last['graphs']} | {last['kernels']} | {last['shared']} | "
                     f"{off:.2f} | {on:.2f} | {on / off:.2f}x | {error:.1e} |")
        print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
