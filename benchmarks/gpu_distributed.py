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

Data parallelism (GPT-2 and Llama, float32), with its communication inside Dyno's graph:
each model's training step (forward, loss, backward) is exported through
`dyno.data_parallel.DataParallel` (python/dyno/data_parallel.py), once replicated (the
backward all-reduces and averages each gradient, as DDP) and once sharded (each rank keeps
half of every parameter; the forward all-gathers it, the backward reduce-scatters its
gradient, as FSDP2). On the GPUs each rank binds the same wrapper (that file needs only
torch) and runs the step on its own batches, then steps SGD on what it keeps. It is
compared after every step with PyTorch's eager DDP and FSDP2 (`fully_shard` per layer and
at the root) on the same batches (losses, whole parameters), and a step is timed for
eager, Inductor (DDP around torch.compile; torch.compile of the FSDP2 model) and Dyno
(with and without its CUDA graph), in one run.

Collectives (`--collectives`, float32 and bfloat16): one program with every functional
collective (all_reduce, all_gather, reduce_scatter, broadcast, all_to_all_single) and the
coalesced forms (all_reduce_coalesced, all_gather_into_tensor_coalesced,
reduce_scatter_tensor_coalesced, each a library call per tensor), with computation
around them, exported per rank and run on NCCL against the same program in eager.
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
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


class Collectives(torch.nn.Module):
    """Every functional collective and the coalesced ones on group `group_name`, with
    computation before and after each (e2e/distributed_runs.py's two collective
    scenarios in one program)."""

    def __init__(self, group_name):
        super().__init__()
        self.group_name = group_name

    def forward(self, x, w):
        import torch.distributed._functional_collectives as funcol

        group = self.group_name
        h = torch.relu(x @ w)
        outputs = [funcol.all_reduce(h, "sum", group).exp().sum(-1),
                   funcol.all_gather_tensor(h * 2, 0, group) * 3,
                   funcol.reduce_scatter_tensor(h + 1, "sum", 0, group).tanh(),
                   funcol.broadcast(h - 1, 1, group) + 1,
                   funcol.all_to_all_single(h.sin(), None, None, group).cos()]
        outputs += [s.exp() for s in funcol.all_reduce_coalesced(
            [h, h.sin(), x[:, :3]], "sum", group)]
        outputs += [g * 3 for g in funcol.all_gather_into_tensor_coalesced([h * 2, x.cos()],
                                                                      group)]
        outputs += [s.tanh() for s in funcol.reduce_scatter_tensor_coalesced(
            [h + 1, (x * 3)[:, :4]], "sum", [0, 1], group)]
        return tuple(outputs)


COLLECTIVES_SIZE = (2048, 1024)  # x; w is (1024, 1024)


def _collective_inputs(rank, dtype):
    generator = torch.Generator().manual_seed(rank)
    x = torch.randn(COLLECTIVES_SIZE, generator=generator).to(dtype)
    w = (torch.randn(COLLECTIVES_SIZE[1], COLLECTIVES_SIZE[1], generator=generator)
         / COLLECTIVES_SIZE[1] ** 0.5).to(dtype)
    return x, w


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

    if args.collectives:
        for dtype in ("float32", "bfloat16"):
            for rank in range(WORLD):
                dist.init_process_group("fake", store=FakeStore(), rank=rank,
                                        world_size=WORLD)
                directory = os.path.join(args.out, f"collectives-{dtype}", f"rank{rank}")
                dyno.reset_stats()
                dyno.export_triton(Collectives(dist.group.WORLD.group_name),
                                   _collective_inputs(rank, getattr(torch, dtype)),
                                   directory, save_weights=False)
                print(f"rank {rank} ({dtype}): exported to {directory}; library calls: "
                      f"{dyno.stats()['library_calls']}", flush=True)
                dist.destroy_process_group()
        return
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
    data_parallel = _data_parallel_module()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=WORLD)
    for name in args.ddp_models.split(","):
        for mode, sharded in (("ddp", False), ("fsdp", True)):
            model, inputs = zoo.build(name, size=args.ddp_size)
            step = data_parallel.DataParallel(model.train(), dist.group.WORLD.group_name,
                                              WORLD, 0, shard=sharded)
            directory = os.path.join(args.out, mode, name)
            dyno.reset_stats()
            dyno.export_triton_training(step, zoo.training_loss, inputs, directory,
                                        save_weights=False)
            calls = dyno.stats()["library_calls"]
            with open(os.path.join(directory, "wrapper.py")) as wrapper:
                source = wrapper.read()
            counts = {op: source.count(f"_c10d_functional.{op}") for op in
                      ("all_gather_into_tensor", "reduce_scatter_tensor", "all_reduce")}
            print(f"{name} ({mode}): training step exported to {directory}; collectives in "
                  f"the graph: {counts}; library calls: {calls}", flush=True)
    dist.destroy_process_group()


def _data_parallel_module():
    """python/dyno/data_parallel.py, loaded by path: it needs only torch, and the GPU
    machine has no Dyno installed."""
    from gpu_run import load_file

    return load_file(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                  "python", "dyno", "data_parallel.py"), "dyno_data_parallel")


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

    if args.collectives:
        for dtype in ("float32", "bfloat16"):
            _collectives(rank, args, device, load_runtime, getattr(torch, dtype))
        dist.destroy_process_group()
        return
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
            for shard_parameters in (False, True):
                _data_parallel(rank, args, name, device, load_runtime, shard_parameters)
    dist.destroy_process_group()


def _collectives(rank, args, device, load_runtime, dtype):
    """Dyno's exported collectives program against the same program in eager, on NCCL."""
    import torch.distributed as dist

    name = str(dtype).removeprefix("torch.")
    module = Collectives(dist.group.WORLD.group_name)
    inputs = tuple(x.to(device) for x in _collective_inputs(rank, dtype))
    directory = os.path.join(args.artifacts, f"collectives-{name}", f"rank{rank}")
    program = load_runtime(directory).load(directory, device=device,
                                           cuda_graphs=False).bind(module)
    with torch.no_grad():
        want, got = module(*inputs), program(*inputs)
        torch.cuda.synchronize()
        errors = [((g.double() - w.double()).abs().max()
                   / w.double().abs().max().clamp(min=1)).item() for g, w in zip(got, want)]
        times = {"eager": _median_ms(lambda: module(*inputs)),
                 "dyno": _median_ms(lambda: program(*inputs))}
    rows = [None] * WORLD
    dist.all_gather_object(rows, (rank, len(got), len(want), max(errors), times))
    if rank == 0:
        print(f"Collectives ({name}, x {tuple(inputs[0].shape)}), NCCL, {WORLD} x "
              f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
        for rank_, outputs, expected, error, rank_times in rows:
            print(f"rank {rank_}: {outputs} of {expected} outputs, max |dyno - eager| / "
                  f"max |eager| {error:.1e}; " + ", ".join(
                      f"{k} {v:.3f} ms" for k, v in rank_times.items()), flush=True)


def _relative(got, want):
    got, want = got.detach().double(), want.detach().double()
    return ((got - want).norm() / want.norm().clamp(min=1e-30)).item()


def _blocks(model):
    """The repeated layers of a zoo model (the first ModuleList): FSDP2's units."""
    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module):
            return list(module)
    raise ValueError("no ModuleList of layers in the model")


def _data_parallel(rank, args, name, device, load_runtime, shard):
    """Eager and Inductor under PyTorch's data parallelism (FSDP2's `fully_shard` per
    layer and at the root when `shard`, else DDP) against Dyno's exported step of
    `DataParallel(model, shard=shard)`, whose all-gathers and reduce-scatters (or
    all-reduces) run inside the compiled graph; each rank its own batches, SGD; compared
    after every step (losses, whole parameters), then one step timed."""
    import copy

    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard
    from torch.nn.parallel import DistributedDataParallel

    model, inputs = zoo.build(name, size=args.ddp_size)
    model = model.to(device).train()
    names = [parameter_name for parameter_name, _ in model.named_parameters()]
    models = {label: copy.deepcopy(model) for label in ("eager", "inductor")}
    runs = {}
    for label in ("eager", "inductor"):
        if shard:
            for block in _blocks(models[label]):
                fully_shard(block)
            fully_shard(models[label])
            runs[label] = models[label]
        else:
            runs[label] = DistributedDataParallel(models[label], device_ids=[rank])
    runs["inductor"] = torch.compile(runs["inductor"]) if shard else \
        DistributedDataParallel(torch.compile(models["inductor"]), device_ids=[rank])
    data_parallel = _data_parallel_module()
    wrapper = data_parallel.DataParallel(copy.deepcopy(model), dist.group.WORLD.group_name,
                                         WORLD, rank, shard=shard)
    directory = os.path.join(args.artifacts, "fsdp" if shard else "ddp", name)
    runtime = load_runtime(directory)
    programs = {"dyno": runtime.load(directory, device=device).bind(wrapper),
                "dyno, no CUDA graph": runtime.load(directory, device=device,
                                                    cuda_graphs=False).bind(wrapper)}
    parameters = {"eager": models["eager"], "inductor": models["inductor"]}
    optimizers = {label: torch.optim.SGD(m.parameters(), lr=0.01)
                  for label, m in parameters.items()}
    optimizers["dyno"] = torch.optim.SGD(wrapper.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(1000 + rank)  # each rank its own batches

    def batch():
        return tuple(torch.randint(0, zoo.VOCAB, x.shape, generator=generator).to(device)
                     for x in inputs)

    def step(label, data):
        optimizer = optimizers["dyno" if label.startswith("dyno") else label]
        optimizer.zero_grad()
        if label.startswith("dyno"):
            loss = programs[label](*data)
        else:
            loss = zoo.training_loss(runs[label](*data), data[0])
            loss.backward()
        optimizer.step()
        return loss.detach()

    def whole(label):
        if label == "dyno":
            return wrapper.full_parameters()
        found = dict(parameters[label].named_parameters())
        return {key: found[key].full_tensor() if shard else found[key] for key in names}

    worst = {"loss": 0.0, "parameters": 0.0}
    labels = ["eager", "inductor", "dyno", "dyno, no CUDA graph"]
    failed, checked = {}, "dyno"  # without its CUDA graph if capturing one fails
    for _ in range(3):
        data = batch()
        losses = {}
        for label in ("eager", "inductor", checked):
            try:
                if label not in failed:
                    losses[label] = step(label, data)
            except Exception as error:  # reported in the table, the others still run
                if label in ("eager", "dyno, no CUDA graph"):
                    raise
                failed[label] = f"{type(error).__name__}: {str(error)[:300]}"
                labels.remove(label)
                if label == "dyno":
                    checked = "dyno, no CUDA graph"
                    losses[checked] = step(checked, data)
        worst["loss"] = max(worst["loss"], _relative(losses[checked], losses["eager"]))
        eager, compiled = whole("eager"), whole("dyno")
        worst["parameters"] = max(worst["parameters"], max(
            _relative(compiled[key], eager[key]) for key in names))
    data = batch()
    times = {label: _median_ms(lambda label=label: step(label, data), repeat=10)
             for label in labels}
    rows = [None] * WORLD
    dist.all_gather_object(rows, (rank, worst, times, failed))
    if rank == 0:
        local = sum(p.numel() for p in wrapper.parameters())
        print(f"{'FSDP2' if shard else 'DDP'}: {name} ({args.ddp_size}, float32), SGD, 3 "
              f"steps compared, then one step timed (median of 10); Dyno keeps {local} of "
              f"{sum(p.numel() for p in model.parameters())} parameters per rank",
              flush=True)
        for rank_, errors, step_times, failures in rows:
            for label, reason in failures.items():
                print(f"rank {rank_}: {label} failed: {reason}", flush=True)
            print(f"rank {rank_}: rel. L2 vs eager: loss {errors['loss']:.1e}, "
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
    parser.add_argument("--collectives", action="store_true",
                        help="the collectives program alone, float32 and bfloat16")
    args = parser.parse_args()
    if args.mode == "export":
        export(args)
    else:
        torch.multiprocessing.spawn(_rank, args=(args,), nprocs=WORLD, join=True)


if __name__ == "__main__":
    main()
