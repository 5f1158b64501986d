"""Dyno's two targets, side by side, each a package of the same shape implementing one
interface (target.py: lower, Artifact.store, restore, load, and the policy each target
decides for itself):

  cpu/      TARGET: the kernels in the LLVM dialect, JIT-compiled (jit.py, which runs
            them on PyTorch's OpenMP thread pool) or loaded from a compile-cache library
  triton/   TARGET: the kernels printed as @triton.jit Python; runtime/ launches them
            (self-contained: exported programs ship it); library_routing.py sends the
            sorts and scatters PyTorch's GPU kernels run faster to them

`get(name)` is the registry, `for_device(device)` the one place a target is chosen from
the inputs' device. The backend, per-op fallback, the compile cache (a hit only restores
and loads) and export (Triton: lowered, not loaded) all go through them. Both lower
through lowering/graph_lowering.lower_graph (torch-mlir, then Dyno's passes in one
dyno-opt process; the C++ side of each target is lib/Target/<Target>).

Shared by both: wrapper.py generates a graph's host wrapper (Python calling kernels and
library routines in order) from the lowered host function; host_runtime.py is what that
wrapper calls at run time (library calls, collectives, frozen weights);
memory_planning.py plans the wrappers' workspace.
"""
import importlib
import sys
from typing import Tuple

# name -> the package whose TARGET implements it (imported when first asked for: the
# Triton target imports triton).
_PACKAGES = {"cpu": ".cpu", "triton": ".triton"}


def names() -> Tuple[str, ...]:
    return tuple(_PACKAGES)


def get(name: str):
    """The target called `name` (a target.Target)."""
    if name not in _PACKAGES:
        raise ValueError(f"dyno: no target {name!r}; targets: {list(_PACKAGES)}")
    return importlib.import_module(_PACKAGES[name], __name__).TARGET


def loaded():
    """The targets this process has imported (a target not yet asked for has compiled
    nothing here: the Triton target is not imported for it, nor triton)."""
    return [importlib.import_module(package, __name__).TARGET
            for package in _PACKAGES.values()
            if f"{__name__}{package}" in sys.modules]


def for_device(device):
    """The target that compiles for `device` by default: Triton on CUDA devices, the CPU
    target on CPUs (Triton kernels on CPU tensors run under Triton's interpreter, when
    asked for by name)."""
    return get("triton" if device.type == "cuda" else "cpu")
