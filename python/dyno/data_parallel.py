"""Data parallelism whose collectives are part of the training step's graph.

`DataParallel(model, group_name, world_size, rank, shard=...)` wraps a model so that a
training step traced through it (by `torch.compile`, or by `dyno.export_triton_training`
for a program that runs where Dyno is not installed) contains the communication of data
parallelism as functional collectives, which Dyno compiles as library calls inside the
graph and schedules around the independent work:

- `shard=True`, the algorithm of FSDP (ZeRO-3): each rank keeps 1/world of every
  parameter (flattened, zero-padded to a multiple of the world size, this rank's
  contiguous part). The forward all-gathers each parameter where it is used
  (`all_gather_into_tensor`); the backward reduce-scatters its gradient
  (`reduce_scatter_tensor`, averaged over the ranks as FSDP2 does), so each rank's
  optimizer updates only its shard.
- `shard=False`, the algorithm of DDP: every rank keeps the whole parameters; the backward
  all-reduces each gradient and averages it.

Losses and parameters match FSDP2 (`fully_shard`) and DDP on the same batches within
floating-point reordering (the sum of ranks' gradients is the same reduction). Tied
parameters (GPT-2's embedding and output projection) stay one parameter: one shard,
gathered once per step, whose gradient sums both uses. Frozen parameters stay frozen.
Buffers are not synchronized (DDP broadcasts them from rank 0 by default): each rank
keeps its own, e.g. batch norm's running statistics of its own batches.

Only torch is needed (no Dyno import), so the GPU machine builds the same wrapper to bind
an exported program's parameters: load this file by path there.

Why this exists beside torch's own DDP and FSDP2 (issue 51, item 7): a user of
`torch.compile(backend="mlir")` needs none of it. DDP around a Dyno-compiled module and
FSDP2 (`fully_shard` per block and at the root, its hooks eager) around compiled blocks
train to eager's losses (e2e/distributed_runs.py `data_parallel_training`,
`fully_sharded_training`, in the test suite). What torch does not give is one exported
program that holds the communication: DDP's reducer and FSDP2's hooks run outside the
graph that AOTAutograd traces (Dynamo stops at DDP's forward, FSDP2's hooks stay eager),
so `dyno.export_triton_training` of a DDP- or FSDP2-wrapped model would export a step
with no collectives, and a server running it would train each rank on its own. Here the
collectives are autograd functions inside the model's own forward, which the joint graph
keeps. (Not tried: compiled autograd tracing FSDP2's hooks into graphs, which would
give torch.compile users in-graph collectives from torch itself, though not one
exportable step.)
"""
import torch


def _c10d():
    return torch.ops._c10d_functional


class _GatherShards(torch.autograd.Function):
    """Forward: the whole flat parameter from every rank's shard. Backward: this rank's
    shard of the gradient, averaged over the ranks."""

    @staticmethod
    def forward(ctx, shard, world_size, group_name):
        ctx.world_size, ctx.group_name = world_size, group_name
        return _c10d().wait_tensor(
            _c10d().all_gather_into_tensor(shard, world_size, group_name))

    @staticmethod
    def backward(ctx, gradient):
        reduced = _c10d().wait_tensor(_c10d().reduce_scatter_tensor(
            gradient.contiguous(), "sum", ctx.world_size, ctx.group_name))
        return reduced / ctx.world_size, None, None


class _AverageGradient(torch.autograd.Function):
    """Forward: the parameter itself. Backward: its gradient averaged over the ranks."""

    @staticmethod
    def forward(ctx, parameter, world_size, group_name):
        ctx.world_size, ctx.group_name = world_size, group_name
        return parameter.view_as(parameter)

    @staticmethod
    def backward(ctx, gradient):
        reduced = _c10d().wait_tensor(_c10d().all_reduce(
            gradient.contiguous(), "sum", ctx.group_name))
        return reduced / ctx.world_size, None, None


class DataParallel(torch.nn.Module):
    """`model` trained data-parallel over `world_size` ranks of the process group named
    `group_name` (`torch.distributed.group.WORLD.group_name` for the default group).
    This module's parameters (`local`, one per parameter object of `model`, which keeps
    none) are what the optimizer steps: the shards when `shard`, else the whole ones.
    `model`'s parameters must be the same on every rank (same seed)."""

    def __init__(self, model: torch.nn.Module, group_name: str, world_size: int, rank: int,
                 shard: bool = True):
        super().__init__()
        self.group_name, self.world_size, self.rank, self.shard = (
            group_name, world_size, rank, shard)
        self.model = model
        # Every name of each parameter object (tied parameters have several), in order.
        names = {}
        for module_name, module in model.named_modules(remove_duplicate=False):
            for name, parameter in module.named_parameters(recurse=False):
                qualified = f"{module_name}.{name}" if module_name else name
                names.setdefault(id(parameter), (parameter, []))[1].append(qualified)
        self._names = [qualified for _, qualified in names.values()]
        self._shapes = [parameter.shape for parameter, _ in names.values()]
        local = []
        for parameter, qualified in names.values():
            if shard:
                flat = parameter.detach().reshape(-1)
                padded_numel = -(-flat.numel() // world_size) * world_size
                padded = torch.nn.functional.pad(flat, (0, padded_numel - flat.numel()))
                parameter = torch.nn.Parameter(padded.chunk(world_size)[rank].clone(),
                                               requires_grad=parameter.requires_grad)
            local.append(parameter)
            for name in qualified:  # the model itself keeps no parameter
                owner, _, attribute = name.rpartition(".")
                # (A submodule registered under two names is seen twice.)
                model.get_submodule(owner)._parameters.pop(attribute, None)
        # What this rank keeps and its optimizer steps: the shards, or the whole parameters.
        self.local = torch.nn.ParameterList(local)

    def forward(self, *inputs, **keyword_inputs):
        parameters = {}
        for local, qualified, shape in zip(self.local, self._names, self._shapes):
            if self.shard:
                whole = _GatherShards.apply(local, self.world_size, self.group_name)
                value = whole[:shape.numel()].view(shape)
            else:
                value = _AverageGradient.apply(local, self.world_size, self.group_name)
            parameters.update((name, value) for name in qualified)
        return torch.func.functional_call(self.model, parameters, inputs, keyword_inputs,
                                          strict=False)

    @torch.no_grad()
    def full_parameters(self) -> dict:
        """Every parameter of the model, whole, by its (first) qualified name; gathers the
        shards eagerly (a collective: every rank must call it)."""
        import torch.distributed as dist

        from torch.distributed.distributed_c10d import _resolve_process_group

        group = _resolve_process_group(self.group_name)
        whole = {}
        for local, qualified, shape in zip(self.local, self._names, self._shapes):
            if not self.shard:
                whole[qualified[0]] = local.detach()
                continue
            gathered = local.new_empty(local.numel() * self.world_size)
            dist.all_gather_into_tensor(gathered, local.detach().contiguous(), group=group)
            whole[qualified[0]] = gathered[:shape.numel()].view(shape)
        return whole
