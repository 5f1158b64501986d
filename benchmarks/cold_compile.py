"""Cold compile time against depth, and warm starts (issue 23): GPT-2 small (width 768, 12
heads) with 2 and with 12 layers, batch 1 x 128 tokens, fp32, CPU. Each (depth, backend)
runs in a fresh process with empty caches (Inductor's and Dyno's in a new temporary
directory, Inductor's FX graph cache off), and times the first call (Dynamo's capture,
AOTAutograd, the backend's compile, one run), then the median of 5 later calls. For
Dyno a second process then starts warm from the first's compile cache; "Dyno s/graph"
is the time spent in Dyno's compiler hook per graph (import, pipelines, JIT, or the
cache's lookup and load).

    python benchmarks/cold_compile.py [--layers 2,12] [--backends inductor,mlir] [--runs 3]
                                      [--out FILE]

Medians over --runs runs (depths and backends alternating). The ratio of the deepest
model's first call to the shallowest's is printed per backend, and for Dyno also the
ratio of its own compile and that of the rest of the first call.
Dyno's stats (kernels compiled, distinct kernels) are printed beside its times.
"""
import argparse
import json
import os
import statistics
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
                  "dyno_per_graph": sum(spent) / len(spent) if spent else None,
                  "dyno_total": sum(spent) if spent else None}))
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
    parser.add_argument("--runs", type=lambda n: max(1, int(n)), default=3)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    depths = [int(n) for n in args.layers.split(",")]
    backends = args.backends.split(",")
    # results[(backend, layers)]: a list per run of [cold] or [cold, warm]; the runs of
    # every backend and depth alternate, so that the machine's drift spreads over all.
    results = {(backend, layers): [] for backend in backends for layers in depths}
    for _ in range(args.runs):
        for backend in backends:
            for layers in depths:
                results[backend, layers].append(measure(layers, backend))
    lines = ["| backend | layers | start | first call (s) | later calls (ms) | "
             "kernels compiled | Dyno s/graph |", "|---|---|---|---|---|---|---|"]

    def median(backend, layers, start, field):
        values = [run[start][field] for run in results[backend, layers]]
        return None if None in values else statistics.median(values)

    for backend in backends:
        for layers in depths:
            for start, label in enumerate(("cold", "warm")[:len(results[backend, layers][0])]):
                kernels = results[backend, layers][0][start]["kernels"]
                per_graph = median(backend, layers, start, "dyno_per_graph")
                lines.append(f"| {backend} | {layers} | {label} | "
                             f"{median(backend, layers, start, 'first'):.2f} | "
                             f"{median(backend, layers, start, 'run') * 1e3:.1f} | "
                             f"{kernels if kernels is not None else ''} | "
                             + (f"{per_graph:.3f}" if per_graph is not None else "") + " |")
    deep, shallow = max(depths), min(depths)
    ratios = [f"Medians of {args.runs} runs. Cold first call, {deep} layers / {shallow} layers:"]
    for backend in backends:
        first = {n: median(backend, n, 0, "first") for n in (deep, shallow)}
        ratios.append(f"- {backend}: {first[deep]:.2f} / {first[shallow]:.2f} s = "
                      f"{first[deep] / first[shallow]:.2f}x")
        if backend == "mlir" and None not in (median(backend, n, 0, "dyno_total")
                                              for n in (deep, shallow)):
            # Dyno's own compile (its hook) apart from Dynamo, AOTAutograd and the run.
            own = {n: median(backend, n, 0, "dyno_total") for n in (deep, shallow)}
            rest = {n: statistics.median(run[0]["first"] - run[0]["dyno_total"]
                                         for run in results[backend, n])
                    for n in (deep, shallow)}
            ratios.append(f"  - Dyno's compile: {own[deep]:.2f} / {own[shallow]:.2f} s = "
                          f"{own[deep] / own[shallow]:.2f}x")
            ratios.append(f"  - the rest (Dynamo, AOTAutograd, the first run): "
                          f"{rest[deep]:.2f} / {rest[shallow]:.2f} s = "
                          f"{rest[deep] / rest[shallow]:.2f}x")
    text = "\n".join(lines + [""] + ratios) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
