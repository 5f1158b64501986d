"""Cold compile time against depth (issue 23): GPT-2 small (width 768, 12 heads) with 2
and with 12 layers, batch 1 x 128 tokens, fp32, CPU. Each (depth, backend) runs in a
fresh process with empty caches (Inductor's in a new temporary directory, its FX graph
cache off), and times the first call (Dynamo's capture, AOTAutograd, the backend's
compile, one run), then the median of 5 later calls.

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
                  "fallbacks": stats.get("fallback_graphs")}))
'''


def measure(layers: int, backend: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TORCHINDUCTOR_FX_GRAPH_CACHE="0",
                   TRITON_CACHE_DIR=os.path.join(cache, "triton"))
        done = subprocess.run([sys.executable, "-c", CHILD, str(layers), backend], env=env,
                              capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", default="2,12")
    parser.add_argument("--backends", default="inductor,mlir")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    depths = [int(n) for n in args.layers.split(",")]
    lines = ["| backend | layers | first call (s) | later calls (ms) | kernels compiled |",
             "|---|---|---|---|---|"]
    ratios = []
    for backend in args.backends.split(","):
        firsts = {}
        for layers in depths:
            result = measure(layers, backend)
            firsts[layers] = result["first"]
            kernels = result["kernels"] if result["kernels"] is not None else ""
            lines.append(f"| {backend} | {layers} | {result['first']:.2f} | "
                         f"{result['run'] * 1e3:.1f} | {kernels} |")
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
