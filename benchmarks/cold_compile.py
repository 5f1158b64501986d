"""Cold compile time against depth, and warm starts (issue 23): GPT-2 small (width 768, 12
heads) with 2 and with 12 layers, batch 1 x 128 tokens, fp32, CPU. Each (depth, backend)
runs in a fresh process with empty caches (Inductor's and Dyno's in a new temporary
directory, Inductor's FX graph cache off), and times the first call (Dynamo's capture,
AOTAutograd, the backend's compile, one run), then the median of 5 later calls. For
Dyno a second process then starts warm from the first's compile cache; "Dyno s/graph"
is the time spent in Dyno's compiler hook per graph (import, pipelines, JIT, or the
cache's lookup and load).

    python benchmarks/cold_compile.py [--layers 2,12] [--backends inductor,mlir] [--out FILE]

The ratio of the deepest model's first call to the shallowest's is printed per backend.
Dyno's stats (kernels compiled, distinct kernels) are printed beside its times.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import json, statistics, sys, time
import torch, transformers
layers, backend = int(sys.argv[1]), sys.argv[2]
torch.manual_seed(0)
config = transformers.GPT2Config(vocab_size=50257, n_embd=768, n_layer=layers, n_head=12,
                                 n_positions=1024, resid_pdrop=0.0, embd_pdrop=0.0,
                                 attn_pdrop=0.0)
model = transformers.GPT2LMHeadModel(config).eval()
tokens = torch.randint(0, 50257, (1, 128))
spent = []
if backend == "mlir":
    import dyno.backend
    hook = dyno.backend.compile_graph
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return hook(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)
    dyno.backend.compile_graph = timed
compiled = torch.compile(model, backend=backend)
with torch.no_grad():
    start = time.perf_counter()
    compiled(tokens)
    first = time.perf_counter() - start
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        compiled(tokens)
        runs.append(time.perf_counter() - start)
stats = {}
if backend == "mlir":
    import dyno
    stats = dyno.stats()
print(json.dumps({"first": first, "run": statistics.median(runs),
                  "kernels": stats.get("kernels"), "graphs": stats.get("compiled_graphs"),
                  "fallbacks": stats.get("fallback_graphs"), "hits": stats.get("cache_hits"),
                  "dyno_per_graph": sum(spent) / len(spent) if spent else None}))
'''


def measure(layers: int, backend: str) -> list:
    """[the cold process's result] and, for Dyno, [cold, warm]."""
    results = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TORCHINDUCTOR_FX_GRAPH_CACHE="0",
                   TRITON_CACHE_DIR=os.path.join(cache, "triton"),
                   DYNO_CACHE="1", DYNO_CACHE_DIR=os.path.join(cache, "dyno"))
        for _ in range(2 if backend == "mlir" else 1):
            done = subprocess.run([sys.executable, "-c", CHILD, str(layers), backend],
                                  env=env, capture_output=True, text=True, check=True)
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", default="2,12")
    parser.add_argument("--backends", default="inductor,mlir")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    depths = [int(n) for n in args.layers.split(",")]
    lines = ["| backend | layers | start | first call (s) | later calls (ms) | "
             "kernels compiled | Dyno s/graph |", "|---|---|---|---|---|---|---|"]
    ratios = []
    for backend in args.backends.split(","):
        firsts = {}
        for layers in depths:
            results = measure(layers, backend)
            firsts[layers] = results[0]["first"]
            for start, result in zip(("cold", "warm"), results):
                kernels = result["kernels"] if result["kernels"] is not None else ""
                per_graph = result["dyno_per_graph"]
                lines.append(f"| {backend} | {layers} | {start} | {result['first']:.2f} | "
                             f"{result['run'] * 1e3:.1f} | {kernels} | "
                             + (f"{per_graph:.3f}" if per_graph is not None else "") + " |")
                print(lines[-1], flush=True)
        ratios.append(f"{backend}: {max(depths)} layers / {min(depths)} layers = "
                      f"{firsts[max(depths)] / firsts[min(depths)]:.2f}x")
    text = "\n".join(lines + [""] + ratios) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
