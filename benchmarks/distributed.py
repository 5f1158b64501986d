"""Step time of distributed training on 2 processes (gloo, CPU, 1 thread each): eager,
Inductor and Dyno in the same run.

    python benchmarks/distributed.py [--models gpt2,llama] [--steps 12] [--size cpu]

Each process trains a zoo model (e2e/zoo.py) with SGD on its own batches, three
ways over the same parameters' copies: DDP around the module (compiled variants: DDP
around the compiled module; torch.compile of the DDP module captures no graph with torch
2.13), and FSDP2 (`fully_shard` on each decoder layer and the root, its hooks eager:
Dynamo's default). Times: medians over the steps after two warm-up steps (compiles
excluded), per process, the slower process reported; speedup = eager / backend.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
import zoo  # noqa: E402

BACKENDS = ("eager", "inductor", "mlir")


def _layers(model):
    """The repeated blocks FSDP2 shards one by one (transformers' decoder layers, GPT-2's
    blocks)."""
    return [m for m in model.modules()
            if type(m).__name__.endswith(("DecoderLayer", "EncoderLayer", "Block"))]


def _wrap(model, scheme, backend):
    if scheme == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        inner = model if backend == "eager" else torch.compile(model, backend=backend)
        return DistributedDataParallel(inner)
    from torch.distributed.fsdp import fully_shard
    for layer in _layers(model):
        fully_shard(layer)
    fully_shard(model)
    return model if backend == "eager" else torch.compile(model, backend=backend)


def _step_times(name, scheme, backend, size, steps, rank):
    model, inputs = zoo.build(name, size=size, seed=0)
    model.train()
    run = _wrap(model, scheme, backend)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(100 + rank)
    times = []
    for step in range(steps + 2):
        batch = tuple(torch.randint(0, zoo.VOCAB, x.shape, generator=generator)
                      if not x.is_floating_point() else torch.randn(x.shape, generator=generator)
                      for x in inputs)
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = zoo.training_loss(run(*batch), batch[0])
        loss.backward()
        optimizer.step()
        if step >= 2:
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, loss.item()


def _process(rank, args, store, out):
    import dyno  # noqa: F401  (registers backend="mlir")

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    rows = []
    for name in args.models.split(","):
        for scheme in ("ddp", "fsdp2"):
            for backend in BACKENDS:
                torch._dynamo.reset()
                dyno.reset_stats()
                ms, loss = _step_times(name, scheme, backend, args.size, args.steps, rank)
                stats = dyno.stats() if backend == "mlir" else {}
                rows.append((name, scheme, backend, ms, loss, stats.get("compiled_graphs", 0),
                             stats.get("fallback_graphs", 0) + stats.get(
                                 "partially_compiled_graphs", 0)))
                dist.barrier()
    with open(f"{out}.{rank}", "w") as f:
        f.write(repr(rows))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="gpt2,llama")
    parser.add_argument("--size", default="cpu")
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "rows")
        torch.multiprocessing.spawn(_process, args=(args, os.path.join(directory, "store"), out),
                                    nprocs=2, join=True)
        per_rank = [eval(open(f"{out}.{rank}").read()) for rank in range(2)]
    print(f"2 processes (gloo), 1 thread each; zoo size {args.size!r}; median step (ms) of "
          f"{args.steps} steps, the slower process")
    print("| model | scheme | eager ms | inductor ms | dyno ms | inductor speedup | dyno speedup "
          "| dyno graphs (not fully compiled) |")
    print("|---|---|---|---|---|---|---|---|")
    rows = {}
    for row0, row1 in zip(*per_rank):
        name, scheme, backend, ms0, _, graphs, partial = row0
        rows[(name, scheme, backend)] = (max(ms0, row1[3]), graphs, partial)
    speedups = {"inductor": [], "mlir": []}
    for name in args.models.split(","):
        for scheme in ("ddp", "fsdp2"):
            eager = rows[(name, scheme, "eager")][0]
            inductor = rows[(name, scheme, "inductor")][0]
            dyno, graphs, partial = rows[(name, scheme, "mlir")]
            speedups["inductor"].append(eager / inductor)
            speedups["mlir"].append(eager / dyno)
            print(f"| {name} | {scheme} | {eager:.1f} | {inductor:.1f} | {dyno:.1f} | "
                  f"{eager / inductor:.2f}x | {eager / dyno:.2f}x | {graphs} ({partial}) |")
    geomean = {k: statistics.geometric_mean(v) for k, v in speedups.items()}
    print(f"\ngeomean speedup over eager: inductor {geomean['inductor']:.2f}x, "
          f"dyno {geomean['mlir']:.2f}x")


if __name__ == "__main__":
    main()
