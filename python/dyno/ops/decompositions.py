"""The decomposition table: what AOTAutograd and torch.export apply, per target, before
torch-mlir imports a graph (rule 1 of the ops package, see its __init__).

To add a decomposition, write a function over ATen ops in the family module it belongs to
and register it where it is defined:

    @decomposes(aten.hypot.default)
    def hypot(a, b): ...

- `decomposes(*ops, targets=TARGETS)` is the one way to register; a function made by a
  factory is registered by calling it: `decomposes(op)(factory(op))`.
- `decomposes_as_pytorch(*ops)` registers PyTorch's own decomposition of each op (its
  reference implementation), where torch-mlir cannot lower the op but lowers what that
  decomposes into (checked by the OpInfo sweep).
- `keeps_whole(*ops, targets=...)` keeps ops one operation on those targets (library
  calls) although torch-mlir's table decomposes them.
- `decomposes_when_defined("namespace::op", ...)` registers the decomposition of another
  library's custom op (transformers' grouped GEMM), which exists only once that library
  has been imported: `table` looks it up each time it is built.
- A decomposition that returns NotImplemented leaves the op as it is (the dtypes and
  arguments it does not handle); one that calls its own op inside
  `lowered_by_torch_mlir(op)` gets torch-mlir's lowering of it (`declined(op)` tells it
  so), not itself.

`table(target)` is torch-mlir's table (`get_decomposition_table`), less the ops kept
whole, with Dyno's registrations on top. No op may be registered twice for one target:
the order in which the families are imported never matters.

The families (imported by the ops package): nan_decompositions (NaN semantics),
arithmetic_decompositions (arithmetic, creation, views), moment_decompositions
(statistics: var/std, norms, batch norm), indexing_decompositions (scatters, puts,
histograms, nonzero), selection_decompositions (sort-based selection, binary search),
pooling_decompositions, convolution_decompositions (1-D convolutions as 2-D ones, library
calls), linear_algebra_decompositions, complex_decompositions,
collective_decompositions (torch.distributed's coalesced collectives),
attention_decompositions (per target), low_precision_decompositions (bf16/f16 rounded
as eager rounds), special_functions and bessel_functions (torch.special).
"""
import contextlib
import functools

import torch

aten = torch.ops.aten

TARGETS = ("cpu", "triton")
_REGISTERED = {target: {} for target in TARGETS}
_KEPT_WHOLE = {target: set() for target in TARGETS}
# Other libraries' custom ops by qualified name ("namespace::op", the default overload).
_REGISTERED_BY_NAME = {target: {} for target in TARGETS}


def decomposes(*ops, targets=TARGETS):
    """Registers the decorated function as the decomposition of each of `ops` on
    `targets`, and returns it unchanged."""
    unknown = set(targets) - set(TARGETS)
    if unknown:
        raise ValueError(f"unknown targets {sorted(unknown)}; Dyno's are {TARGETS}")

    def register(function):
        for target in targets:  # all checked first: a refused registration adds nothing
            for op in ops:
                registered = _REGISTERED[target].get(op)
                if registered is not None:
                    raise ValueError(
                        f"{op} is decomposed twice on the {target} target: by "
                        f"{registered.__module__}.{registered.__qualname__} and "
                        f"{function.__module__}.{function.__qualname__}")
        for target in targets:
            for op in ops:
                _REGISTERED[target][op] = function
        return function
    return register


def decomposes_as_pytorch(*ops, targets=TARGETS):
    """Registers PyTorch's own decomposition of each of `ops`."""
    from torch._decomp import decomposition_table

    for op in ops:
        decomposes(op, targets=targets)(decomposition_table[op])


def decomposes_when_defined(*names, targets=TARGETS):
    """As `decomposes`, for custom ops named "namespace::op" that another library defines
    when it is imported (absent ones are skipped when the table is built)."""
    def register(function):
        for target in targets:
            for name in names:
                if name in _REGISTERED_BY_NAME[target]:
                    raise ValueError(f"{name} is decomposed twice on the {target} target")
                _REGISTERED_BY_NAME[target][name] = function
        return function
    return register


def _defined_op(name: str):
    """The default overload of custom op `name` ("namespace::op"), None if undefined."""
    namespace, op = name.split("::")
    try:
        return getattr(getattr(getattr(torch.ops, namespace), op), "default")
    except (AttributeError, RuntimeError):
        return None


def keeps_whole(*ops, targets):
    """`ops` stay one operation on `targets`, whatever torch-mlir's table does with them
    (a registered decomposition may still take some of their cases)."""
    for target in targets:
        _KEPT_WHOLE[target].update(ops)


@functools.lru_cache(maxsize=None)
def _torch_mlir_table() -> dict:
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    return dict(get_decomposition_table())


def underlying(op):
    """torch-mlir's decomposition of `op` (None if its table has none): what a
    decomposition that handles only some cases falls back to."""
    return _torch_mlir_table().get(op)


def table(target: str) -> dict:
    """The decompositions AOTAutograd and torch.export apply for `target` ("cpu" or
    "triton")."""
    decompositions = dict(_torch_mlir_table())
    for op in _KEPT_WHOLE[target]:
        decompositions.pop(op, None)
    decompositions.update(_REGISTERED[target])
    for name, function in _REGISTERED_BY_NAME[target].items():
        op = _defined_op(name)
        if op is not None:
            decompositions[op] = function
    return decompositions


# Ops whose decomposition is running and calls the op itself (see lowered_by_torch_mlir).
_DECLINED = set()


@contextlib.contextmanager
def lowered_by_torch_mlir(op):
    """Inside, a call of `op` from its own decomposition is torch-mlir's op (the
    decomposition declines it, see `declined`) instead of recursing."""
    _DECLINED.add(op)
    try:
        yield
    finally:
        _DECLINED.discard(op)


def declined(op) -> bool:
    return op in _DECLINED


def is_float(x) -> bool:
    return isinstance(x, torch.Tensor) and x.dtype.is_floating_point


def as_tensor(value, like):
    """`value` as a tensor of `like`'s dtype and device (a Python scalar becomes a 0-d
    tensor)."""
    if isinstance(value, torch.Tensor):
        return value
    return aten.scalar_tensor(value, dtype=like.dtype, device=like.device)
