"""Dyno-compiled programs on 2 GPUs (NCCL): tensor-parallel inference and data-parallel
training of zoo models.

    python benchmarks/gpu_distributed.py export --out build/gpu-dist [--dtype bfloat16]  # here
    python3 benchmarks/gpu_distributed.py run --artifacts build/gpu-dist [--dtype ...]  # 2 GPUs

Tensor parallelism (Llama): Megatron-style sharding of each decoder layer over 2 ranks (`shard`): q/k/v and the MLP's
gate/up projections split by output features (each rank keeps half of the heads and of
the MLP), o_proj and down_proj by input features, each followed by an all-reduce of the
partial sums (`torch.distributed._functional_collectives.all_reduce`). Each rank's program
is exported here on a CPU-only machine with a fake process group of 2 ranks
(`dyno.export_triton`, without weights): the all-reduces are `dyno.library_call`s inside
the compiled graph, on the process group named "0", which on the GPU machine is NCCL's
default group. There, each rank binds its shard of the same seeded model and runs; the
results are compared with the unsharded model in eager on one GPU, and with the same
sharded model in eager; times are eager (one GPU), eager tensor-parallel and Dyno
tensor-parallel, CUDA events, medians, in one run.

Data parallelism (GPT-2 and Llama, float32): each model's training step (forward, loss,
backward) is exported once (`dyno.export_triton_training`); on the GPUs each rank runs it
on its own batches, all-reduces the gradients over NCCL and averages them as DDP does,
then steps SGD. It is compared after every step with eager DDP on the same batches
(losses, parameters), and a step is timed for eager DDP, Inductor (DDP around
torch.compile) and Dyno. Here the all-reduces are DDP's, outside the compiled graphs.
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

WORLD = 2


class AllReduced(torch.nn.Module):
    """A row-parallel projection: this rank's partial product, summed over the ranks."""

    def __init__(self, linear, group_name):
        super().__init__()
        self.linear = linear
        self.group_name = group_name

    def forward(self, x):
        import torch.distributed._functional_collectives as funcol
        return funcol.all_reduce(self.linear(x), "sum", self.group_name)


def _split(linear, rank, dim):
    """This rank's part of `linear`: output features (dim 0) or input features (dim 1)."""
    weight = linear.weight.detach().chunk(WORLD, dim)[rank].clone()
    part = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=linear.bias is not None,
                           dtype=weight.dtype)
    part.weight = torch.nn.Parameter(weight)
    if linear.bias is not None:
        bias = linear.bias.detach()
        part.bias = torch.nn.Parameter(bias.chunk(WORLD)[rank].clone() if dim == 0
                                       else bias / WORLD)  # summed by the all-reduce
    return part


def shard(model, rank, group_name="0"):
    """Shards a Llama/Qwen2 zoo model in place for `rank` of 2 (see the module doc)."""
    for layer in model.model.model.layers:
        attention, mlp = layer.self_attn, layer.mlp
        for name in ("q_proj", "k_proj", "v_proj"):
            setattr(attention, name, _split(getattr(attention, name), rank, 0))
        attention.o_proj = AllReduced(_split(attention.o_proj, rank, 1), group_name)
        for name in ("gate_proj", "up_proj"):
            setattr(mlp, name, _split(getattr(mlp, name), rank, 0))
        mlp.down_proj = AllReduced(_split(mlp.down_proj, rank, 1), group_name)
    return model


def export(args):
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    import dyno

    for rank in range(WORLD):
        dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=WORLD)
        model, inputs = zoo.build(args.model, size=args.size, dtype=getattr(torch, args.dtype))
        shard(model, rank, dist.group.WORLD.group_name)
        directory = os.path.join(args.out, f"tp-{args.dtype}", f"rank{rank}")
        dyno.export_triton(model, inputs, directory, save_weights=False)
        with open(os.path.join(directory, "wrapper.py")) as wrapper:
            calls = wrapper.read().count("_c10d_functional.all_reduce")
        print(f"rank {rank}: exported to {directory}, {calls} all-reduces in the graph")
        dist.destroy_process_group()
    if args.dtype != "float32":
        return
    for name in args.ddp_models.split(","):
        model, inputs = zoo.build(name, size=args.ddp_size)
        model.train()
        directory = os.path.join(args.out, "ddp", name)
        dyno.export_triton_training(model, zoo.training_loss, inputs, directory,
                                    save_weights=False)
        print(f"{name}: training step exported to {directory}")


def _median_ms(fn, repeat=20):
    times = []
    for _ in range(3):
        fn()
    for _ in range(repeat):
        start, end = torch.cuda.Event(True), torch.cuda.Event(True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _rank(rank, args):
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=WORLD, device_id=device)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_run import load_runtime

    dtype = getattr(torch, args.dtype)
    full, inputs = zoo.build(args.model, size=args.size, dtype=dtype)
    sharded, _ = zoo.build(args.model, size=args.size, dtype=dtype)
    shard(sharded, rank, dist.group.WORLD.group_name)
    full, sharded = full.to(device), sharded.to(device)
    inputs = tuple(x.to(device) for x in inputs)
    directory = os.path.join(args.artifacts, f"tp-{args.dtype}", f"rank{rank}")
    runtime = load_runtime(directory)
    program = runtime.load(directory, device=device, cuda_graphs=False).bind(sharded)
    with torch.no_grad():
        want = full(*inputs).double()
        eager_tp = sharded(*inputs)
        got = program(*inputs)
        got = got[0] if isinstance(got, (list, tuple)) else got
        torch.cuda.synchronize()

        def error(value):
            return ((value.double() - want).norm() / want.norm()).item()

        times = {"eager, 1 GPU": _median_ms(lambda: full(*inputs)),
                 "eager, 2 GPUs (TP)": _median_ms(lambda: sharded(*inputs)),
                 "dyno, 2 GPUs (TP)": _median_ms(lambda: program(*inputs))}
    row = (rank, error(eager_tp), error(got), times)
    gathered = [None] * WORLD
    dist.all_gather_object(gathered, row)
    if rank == 0:
        print(f"Tensor parallel: {args.model} ({args.size}, {args.dtype}), {WORLD} x "
              f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
        for rank_, tp_error, dyno_error, rank_times in gathered:
            print(f"rank {rank_}: rel. L2 vs unsharded eager: eager TP {tp_error:.2e}, "
                  f"dyno TP {dyno_error:.2e}; " +
                  ", ".join(f"{k} {v:.3f} ms" for k, v in rank_times.items()), flush=True)
    if args.dtype == "float32":
        for name in args.ddp_models.split(","):
            _data_parallel(rank, args, name, device, load_runtime)
    dist.destroy_process_group()


def _relative(got, want):
    got, want = got.detach().double(), want.detach().double()
    return ((got - want).norm() / want.norm().clamp(min=1e-30)).item()


def _data_parallel(rank, args, name, device, load_runtime):
    """Eager DDP, Inductor under DDP, and Dyno's exported step with DDP's all-reduce of the
    gradients, on this rank's batches; compared with eager after every step."""
    import copy

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    model, inputs = zoo.build(name, size=args.ddp_size)
    model = model.to(device).train()
    models = {label: copy.deepcopy(model) for label in ("eager", "inductor", "dyno")}
    directory = os.path.join(args.artifacts, "ddp", name)
    program = load_runtime(directory).load(directory, device=device).bind(models["dyno"])
    runs = {"eager": DistributedDataParallel(models["eager"], device_ids=[rank]),
            "inductor": DistributedDataParallel(torch.compile(models["inductor"]),
                                                device_ids=[rank])}
    optimizers = {label: torch.optim.SGD(m.parameters(), lr=0.01) for label, m in models.items()}
    generator = torch.Generator().manual_seed(1000 + rank)  # each rank its own batches

    def batch():
        return tuple(torch.randint(0, zoo.VOCAB, x.shape, generator=generator).to(device)
                     for x in inputs)

    def step(label, data):
        optimizers[label].zero_grad()
        if label == "dyno":
            loss = program(*data)
            for parameter in models["dyno"].parameters():
                if parameter.grad is not None:
                    dist.all_reduce(parameter.grad)
                    parameter.grad /= WORLD
        else:
            loss = zoo.training_loss(runs[label](*data), data[0])
            loss.backward()
        optimizers[label].step()
        return loss.detach()

    worst = {"loss": 0.0, "parameters": 0.0}
    for _ in range(3):
        data = batch()
        losses = {label: step(label, data) for label in ("eager", "inductor", "dyno")}
        worst["loss"] = max(worst["loss"], _relative(losses["dyno"], losses["eager"]))
        worst["parameters"] = max(worst["parameters"], max(
            _relative(b, a) for a, b in zip(models["eager"].parameters(),
                                            models["dyno"].parameters())))
    data = batch()
    times = {label: _median_ms(lambda label=label: step(label, data), repeat=10)
             for label in ("eager", "inductor", "dyno")}
    rows = [None] * WORLD
    dist.all_gather_object(rows, (rank, worst, times))
    if rank == 0:
        print(f"Data parallel: {name} ({args.ddp_size}, float32), SGD, 3 steps compared, "
              f"then one step timed (median of 10)", flush=True)
        for rank_, errors, step_times in rows:
            print(f"rank {rank_}: rel. L2 vs eager DDP: loss {errors['loss']:.1e}, "
                  f"parameters {errors['parameters']:.1e}; " + ", ".join(
                      f"{k} {v:.2f} ms ({step_times['eager'] / v:.2f}x)"
                      for k, v in step_times.items()), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("export", "run"))
    parser.add_argument("--out", default="build/gpu-dist")
    parser.add_argument("--artifacts", default="build/gpu-dist")
    parser.add_argument("--ddp-models", default="gpt2,llama")
    parser.add_argument("--ddp-size", default="cpu")
    parser.add_argument("--model", default="llama")
    parser.add_argument("--size", default="bench")
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()
    if args.mode == "export":
        export(args)
    else:
        torch.multiprocessing.spawn(_rank, args=(args,), nprocs=WORLD, join=True)


if __name__ == "__main__":
    main()
