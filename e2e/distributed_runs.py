"""What each process of test_distributed.py runs (2 or 4 processes, gloo on CPU tensors).

Every scenario runs the same program eagerly and through torch.compile(backend="mlir") in
the same process, on the same data, and records what differs and what Dyno compiled:
the test process then asserts on each rank's report. Run as

    python e2e/distributed_runs.py TARGET REPORT_DIR [SCENARIO,...]

it starts the processes itself (a file store: no ports; 4 when a scenario named needs
them, else 2), and each writes REPORT_DIR/rank<r>.json.
"""
import json
import os
import sys

import torch
import torch.distributed as dist

WORLD = 2


def _max_difference(a, b) -> float:
    """max |a - b| / max(max |a|, 1)."""
    a, b = a.detach().double(), b.detach().double()
    return ((a - b).abs().max() / a.abs().max().clamp(min=1)).item()


def _compile(fn, target):
    return torch.compile(fn, backend="mlir", options={"target": target})


def _train_side_by_side(forwards, modules, steps=3):
    """`steps` SGD steps of each of `forwards` (eager, then compiled; `modules` hold their
    parameters) on the same random batches; returns [[eager loss, compiled loss], ...]."""
    optimizers = [torch.optim.SGD(module.parameters(), lr=0.1) for module in modules]
    losses = []
    for _ in range(steps):
        x, y = torch.randn(4, 16), torch.randn(4, 8)
        step = []
        for forward, optimizer in zip(forwards, optimizers):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(forward(x), y)
            loss.backward()
            optimizer.step()
            step.append(loss.item())
        losses.append(step)
    return losses


def functional_collectives(target, rank):
    """Each collective of torch.distributed._functional_collectives, with computation
    before and after it, in one compiled function."""
    import torch.distributed._functional_collectives as funcol

    group = dist.group.WORLD

    def program(x, w):
        h = torch.relu(x @ w)
        summed = funcol.all_reduce(h, "sum", group)
        gathered = funcol.all_gather_tensor(h * 2, 0, group)
        scattered = funcol.reduce_scatter_tensor(h + 1, "sum", 0, group)
        broadcast = funcol.broadcast(h - 1, 1, group)
        exchanged = funcol.all_to_all_single(h.sin(), None, None, group)
        return (summed.exp().sum(-1), gathered * 3, scattered.tanh(), broadcast + 1,
                exchanged.cos())

    torch.manual_seed(rank)
    x, w = torch.randn(8, 16), torch.randn(16, 16) / 4
    expected = program(x, w)
    got = _compile(program, target)(x, w)
    return {"difference": max(_max_difference(e, g) for e, g in zip(expected, got))}


def coalesced_collectives(target, rank):
    """The coalesced collectives (a list of tensors each), with computation before and
    after them, in one compiled function."""
    import torch.distributed._functional_collectives as funcol

    group = dist.group.WORLD

    def program(x, w):
        h = torch.relu(x @ w)
        summed = funcol.all_reduce_coalesced([h, h.sin(), x[:, :3]], "sum", group)
        gathered = funcol.all_gather_single_coalesced([h * 2, x.cos()], group)
        scattered = funcol.reduce_scatter_single_coalesced([h + 1, (x * 3)[:, :4]],
                                                           "sum", [0, 1], group)
        return (*[s.exp() for s in summed], *[g * 3 for g in gathered],
                *[s.tanh() for s in scattered])

    torch.manual_seed(rank)
    x, w = torch.randn(8, 16), torch.randn(16, 16) / 4
    expected = program(x, w)
    got = _compile(program, target)(x, w)
    return {"difference": max(_max_difference(e, g) for e, g in zip(expected, got)),
            "results": len(got) == len(expected) == 7}


def tensor_parallel_training(target, rank):
    """An MLP sharded column- then row-wise over both processes (DTensor), trained for
    three SGD steps: the forward's and backward's all-reduces are in the graphs."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)

    mesh = init_device_mesh("cpu", (WORLD,))

    def build():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                    torch.nn.Linear(32, 8))
        return parallelize_module(model, mesh, {"0": ColwiseParallel(),
                                                "2": RowwiseParallel()})

    runs = [build(), build()]
    compiled = _compile(runs[1], target)
    torch.manual_seed(1)  # the same batches on both ranks, as tensor parallelism needs
    losses = _train_side_by_side((runs[0], compiled), runs)
    difference = max(_max_difference(a.full_tensor(), b.full_tensor())
                     for a, b in zip(runs[0].parameters(), runs[1].parameters()))
    return {"losses": losses, "difference": difference}


def data_parallel_training(target, rank):
    """DDP around a compiled module: the forward and backward graphs are Dyno's, the
    gradient buckets' all-reduces run in DDP's autograd hooks. (torch.compile of the DDP
    module itself captures no graph with torch 2.13, whatever the backend: Dynamo breaks
    the graph at DistributedDataParallel._inside_ddp_forward, which it skips.)"""
    from torch.nn.parallel import DistributedDataParallel

    def module():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(16, 512), torch.nn.ReLU(),
                                   torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                   torch.nn.Linear(512, 8))

    # 1 MB buckets over 1.1 MB of parameters: two all-reduces per step.
    runs = [DistributedDataParallel(module(), bucket_cap_mb=1),
            DistributedDataParallel(_compile(module(), target), bucket_cap_mb=1)]
    torch.manual_seed(10 + rank)  # each rank its own batches
    losses = _train_side_by_side(runs, runs)
    difference = max(_max_difference(a, b)
                     for a, b in zip(runs[0].parameters(), runs[1].parameters()))
    return {"losses": losses, "difference": difference}


def _in_graph_data_parallel(target, rank, shard):
    """dyno.data_parallel.DataParallel compiled (its collectives in the forward and
    backward graphs) against PyTorch's own eager data parallelism on the same batches:
    FSDP2 (`fully_shard`, per layer and at the root) when `shard`, else DDP."""
    from torch.distributed.fsdp import fully_shard
    from torch.nn.parallel import DistributedDataParallel

    from dyno.data_parallel import DataParallel

    def module():
        torch.manual_seed(0)
        layers = torch.nn.Sequential(torch.nn.Linear(16, 48), torch.nn.GELU(),
                                     torch.nn.Linear(48, 37), torch.nn.Tanh(),
                                     torch.nn.Linear(37, 8))  # 37: shards padded
        return layers

    if shard:
        eager = module()
        for index in (0, 2, 4):
            fully_shard(eager[index])
        fully_shard(eager)
    else:
        eager = DistributedDataParallel(module())
    in_graph = DataParallel(module(), dist.group.WORLD.group_name, WORLD, rank, shard=shard)
    torch.manual_seed(10 + rank)  # each rank its own batches
    losses = _train_side_by_side((eager, _compile(in_graph, target)), (eager, in_graph))
    whole = in_graph.full_parameters()
    names = [name for name, _ in module().named_parameters()]
    difference = 0.0
    for name, parameter in zip(names, eager.parameters()):
        if shard:
            parameter = parameter.full_tensor()
        difference = max(difference, _max_difference(parameter, whole[name]))
    return {"losses": losses, "difference": difference,
            "local_numel": sum(p.numel() for p in in_graph.parameters()),
            "model_numel": sum(p.numel() for p in module().parameters())}


def sharded_data_parallel_training(target, rank):
    return _in_graph_data_parallel(target, rank, shard=True)


def replicated_data_parallel_training(target, rank):
    return _in_graph_data_parallel(target, rank, shard=False)


class ResidualBlock(torch.nn.Module):
    """A pre-norm MLP block defined here, as a user's model is: Dynamo compiles a user's
    forward between FSDP2's hooks (which it never traces: torch 2.13 wraps each in
    torch._dynamo.disable), while a model built of torch.nn's own containers alone gives
    it no frame to compile (torch.nn is not traced from the top)."""

    def __init__(self, width, hidden):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, hidden)
        self.down = torch.nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class ResidualModel(torch.nn.Module):
    def __init__(self, width=16, hidden=48, depth=2, classes=8):
        super().__init__()
        self.blocks = torch.nn.ModuleList(ResidualBlock(width, hidden) for _ in range(depth))
        self.head = torch.nn.Linear(width, classes)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def _full(parameter):
    return parameter.full_tensor() if hasattr(parameter, "full_tensor") else parameter


def _sharded_residual_model(target, dp_mesh, tp_mesh=None):
    """ResidualModel, each block tensor-parallel over `tp_mesh` (if any), each block and
    the root fully sharded over `dp_mesh` (FSDP2, eager hooks), and each block compiled
    (as torchtitan does) when `target`."""
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)

    torch.manual_seed(0)
    model = ResidualModel()
    for block in model.blocks:
        if tp_mesh is not None:
            parallelize_module(block, tp_mesh, {"up": ColwiseParallel(),
                                                "down": RowwiseParallel()})
        fully_shard(block, mesh=dp_mesh)
        if target:
            block.compile(backend="mlir", options={"target": target})
    fully_shard(model, mesh=dp_mesh)
    return model


def _train_sharded(target, dp_mesh, tp_mesh, seed):
    runs = [_sharded_residual_model(None, dp_mesh, tp_mesh),
            _sharded_residual_model(target, dp_mesh, tp_mesh)]
    torch.manual_seed(seed)
    losses = _train_side_by_side(runs, runs)
    difference = max(_max_difference(_full(a), _full(b))
                     for a, b in zip(runs[0].parameters(), runs[1].parameters()))
    return {"losses": losses, "difference": difference}


def fully_sharded_training(target, rank):
    """FSDP2 (`fully_shard` per block and at the root, its hooks eager) around compiled
    blocks, trained against the same model in eager on each rank's own batches."""
    from torch.distributed.device_mesh import init_device_mesh

    return _train_sharded(target, init_device_mesh("cpu", (WORLD,)), None, 10 + rank)


def two_dimensional_training(target, rank):
    """4 processes, a 2 x 2 mesh: each block tensor-parallel (column- then row-wise) over
    "tp" and fully sharded (FSDP2) over "dp", the blocks compiled: the TP all-reduces are
    in Dyno's graphs, FSDP's all-gathers and reduce-scatters in its eager hooks. The two
    processes of a "tp" group see the same batches; the "dp" groups their own."""
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    return _train_sharded(target, mesh["dp"], mesh["tp"], 10 + mesh["dp"].get_local_rank())


def divergent_compile(target, rank):
    """The coalesced collectives' program where rank 1's compile fails (injected) and rank
    0's succeeds: rank 0 all-reduces tensor by tensor, compiled; rank 1 ran Dynamo's
    graph, which sends one coalesced message, and gloo aborted a rank ("Received data
    size doesn't match expected size"). Now rank 1 runs the AOT graph eagerly, with
    rank 0's collectives."""
    from dyno.driver import compiler
    from dyno.errors import DynoCompileError

    def failing(*args, **kwargs):
        raise DynoCompileError("injected", "rank 1's compile fails")

    original = compiler._compile
    if rank == 1:
        compiler._compile = failing
    try:
        return coalesced_collectives(target, rank)
    finally:
        compiler._compile = original


SCENARIOS = {"functional_collectives": functional_collectives,
             "coalesced_collectives": coalesced_collectives,
             "divergent_compile": divergent_compile,
             "tensor_parallel_training": tensor_parallel_training,
             "data_parallel_training": data_parallel_training,
             "sharded_data_parallel_training": sharded_data_parallel_training,
             "replicated_data_parallel_training": replicated_data_parallel_training,
             "fully_sharded_training": fully_sharded_training,
             "two_dimensional_training": two_dimensional_training}
# Scenarios that need 4 processes; the others run on 2.
FOUR_PROCESSES = {"two_dimensional_training"}


def process(rank, target, report_dir, store_file, names, world):
    import faulthandler

    import dyno

    # A crash in native code (CI once saw glibc abort a rank with "malloc(): unaligned
    # tcache chunk detected") prints every thread's Python stack to stderr, which the
    # test shows.
    faulthandler.enable(all_threads=True)

    dist.init_process_group("gloo", init_method=f"file://{store_file}", rank=rank,
                            world_size=world)
    report = {}
    try:
        for name in names:
            scenario = SCENARIOS[name]
            print(f"rank {rank}: {name} on {target}", file=sys.stderr, flush=True)
            torch._dynamo.reset()
            dyno.reset_stats()
            result = scenario(target, rank)
            stats = dyno.stats()
            result.update({key: stats.get(key, 0) for key in (
                "library_calls", "fallback_ops", "fallback_graphs", "compiled_graphs",
                "runtime_fallbacks", "partially_compiled_graphs", "split_graphs",
                "fallback_reasons", "split_reasons")})
            report[name] = result
            dist.barrier()
    finally:
        with open(os.path.join(report_dir, f"rank{rank}.json"), "w") as out:
            json.dump(report, out, indent=1, default=str)
        dist.destroy_process_group()


def main():
    target, report_dir = sys.argv[1], sys.argv[2]
    names = sys.argv[3].split(",") if len(sys.argv) > 3 else [
        name for name in SCENARIOS if name not in FOUR_PROCESSES]
    world = 4 if FOUR_PROCESSES & set(names) else WORLD
    if world == 4 and not FOUR_PROCESSES.issuperset(names):
        raise SystemExit(f"run {sorted(FOUR_PROCESSES)} apart from the 2-process scenarios")
    torch.set_num_threads(1)  # two processes on two cores
    torch.multiprocessing.spawn(process, args=(target, report_dir,
                                               os.path.join(report_dir, "store"), names,
                                               world),
                                nprocs=world, join=True)


if __name__ == "__main__":
    main()
