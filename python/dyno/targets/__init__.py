"""Dyno's two targets, side by side, each a package of the same shape:

  cpu/      lower(gm, dump, options, frozen_inputs) -> cpu.Lowered
            load(wrapper_source, kernels, graph_id) -> call
            jit.py: the kernels JIT-compiled (or loaded from the compile cache) and run
            on PyTorch's OpenMP thread pool
  triton/   lower(gm, dump, options) -> triton.Lowered
            load(kernels_source, wrapper_source, device, autotune, graph_id) -> call
            runtime.py: launches the kernels (self-contained: exported programs ship it)

`lower` takes an ATen graph to what the target runs (kernels and the wrapper's Python
source); `load` makes that a callable on torch tensors, `call(args) -> outputs`. The
backend, per-op fallback, the compile cache (a hit only loads) and export (Triton:
lowered, not loaded) all go through them. Both lower through
driver/graph_lowering.lower_graph (torch-mlir, then Dyno's passes in one dyno-opt
process; the C++ side of each target is lib/Target/<Target>).

Shared by both: wrapper.py generates a graph's host wrapper (Python calling kernels and
library routines in order) from the lowered host function; host_runtime.py is what that
wrapper calls at run time (library calls, collectives, frozen weights);
memory_planning.py plans the wrappers' workspace.
"""
