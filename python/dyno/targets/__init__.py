"""The targets' runtimes and the wrapper's code generator.

wrapper.py generates a graph's host wrapper (Python source calling kernels and library
routines in order) from the lowered host function, for both targets; host_runtime.py is
what that wrapper calls at run time on either target (library calls, collectives, frozen
weights); cpu.py JIT-compiles and launches the CPU target's kernels (OpenMP runtime,
packed launchers, kernels loaded from the compile cache); triton_runtime.py loads and
launches the Triton target's kernels (also on its own, in exported programs).
"""
