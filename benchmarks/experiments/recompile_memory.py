"""Memory over many recompiles (issue 23): one function compiled for N distinct input
shapes (dynamic shapes off, so each shape is a new graph) in one process, CPU target.
Prints the process's resident memory (RSS) every `--every` compiles, with Dyno's compile
cache off and then on (a fresh cache directory under a small size limit), so that growth
per compile and the cache's size on disk can be read side by side.

    python benchmarks/experiments/recompile_memory.py [--compiles 1000] [--every 100]
                                                      [--cache-mb 64]

A leak shows as RSS that keeps rising by a steady amount per compile; the compiled
graphs themselves are kept by Dynamo's cache (one entry per shape: its guards, the
wrapper and the kernels), which is expected growth. `--reset` calls
torch._dynamo.reset() every `--every` compiles, after which the memory the dropped
graphs held should be returned.
"""
import argparse
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import gc, json, os, resource, sys, time
import torch
import dyno
compiles, every, reset = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
torch._dynamo.config.cache_size_limit = compiles + 8
torch._dynamo.config.recompile_limit = compiles + 8
torch._dynamo.config.accumulated_recompile_limit = 10 * compiles + 64


def rss_mb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def fn(x, w):
    return torch.softmax((x @ w).relu() * 0.5 + x.sum(-1, keepdim=True), dim=-1).exp()


compiled = torch.compile(fn, backend="mlir", dynamic=False)
w = torch.randn(32, 32)
start, rows = time.perf_counter(), []
with torch.no_grad():
    for i in range(1, compiles + 1):
        x = torch.randn(i, 32)
        torch.testing.assert_close(compiled(x, w), fn(x, w), rtol=1e-4, atol=1e-5)
        if i % every == 0:
            if reset:
                torch._dynamo.reset()
            gc.collect()
            stats = dyno.stats()
            rows.append({"compiles": i, "rss_mb": round(rss_mb(), 1),
                         "seconds": round(time.perf_counter() - start, 1),
                         "compiled_graphs": stats["compiled_graphs"],
                         "fallback_graphs": stats["fallback_graphs"]})
            print(json.dumps(rows[-1]), flush=True)
'''


def directory_mb(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total / 2**20


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--compiles", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--cache-mb", type=float, default=64)
    parser.add_argument("--reset", action="store_true")
    args = parser.parse_args()
    print(f"{args.compiles} compiles of one function for distinct shapes (dynamic=False), "
          f"CPU target, torch.set_num_threads default; RSS after every {args.every}"
          + (", torch._dynamo.reset() each time" if args.reset else ""))
    for cache in ("off", "on"):
        with tempfile.TemporaryDirectory() as directory:
            env = dict(os.environ, DYNO_CACHE="0" if cache == "off" else "1",
                       DYNO_CACHE_DIR=directory, DYNO_CACHE_SIZE_MB=str(args.cache_mb))
            env.pop("DYNO_DEBUG_DIR", None)
            print(f"\n## compile cache {cache}"
                  + (f" (limit {args.cache_mb} MB)" if cache == "on" else ""))
            print("| compiles | RSS MB | seconds | compiled graphs | fallbacks |"
                  + (" cache on disk MB |" if cache == "on" else ""))
            print("|---|---|---|---|---|" + ("---|" if cache == "on" else ""), flush=True)
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(args.compiles), str(args.every),
                 "1" if args.reset else "0"], stdout=subprocess.PIPE, text=True, env=env)
            import json
            for line in child.stdout:
                row = json.loads(line)
                cells = [row["compiles"], row["rss_mb"], row["seconds"],
                         row["compiled_graphs"], row["fallback_graphs"]]
                if cache == "on":
                    cells.append(round(directory_mb(directory), 1))
                print("| " + " | ".join(str(cell) for cell in cells) + " |", flush=True)
            if child.wait() != 0:
                sys.exit(f"the compiling process failed ({child.returncode})")


if __name__ == "__main__":
    main()
