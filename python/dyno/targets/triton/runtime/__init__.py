"""Runs Dyno's generated Triton kernels. Needs only torch and triton.

This package is self-contained on purpose: `dyno.export_triton` copies it next to the
exported kernels and wrapper (as `triton_runtime/`), so that a model compiled on a
CPU-only build machine runs on a GPU server where neither Dyno's compiler, MLIR nor
torch-mlir is installed.

A kernels file (printed by `dyno-translate --mlir-to-triton`) holds `@triton.jit`
functions and a `KERNELS` table: per kernel its index-space sizes (`xnumel`, `rnumel`)
and block-size configurations, the compiler's heuristic choice first. A launcher
computes the grid from `xnumel` and the chosen `XBLOCK` and launches the kernel.

    kernel_files.py   the launch table; a graph's kernels imported, their launchers shared
                      with other graphs' kernels equal up to their names (TritonKernels)
    launch.py         one kernel's launcher (Launcher)
    float32_products.py  float32 matrix products on the tensor cores (three TF32 products)
    autotune.py       the fastest block sizes, timed once and kept on disk
    compile_pool.py   kernels compiled ahead of their first launches, on threads
    compile_check.py  Triton's GPU compiler checks the kernels the interpreter runs
    interpreter.py    Triton's interpreter (CPU tensors), corrected where it departs
    program.py        an exported program: load(directory), Program (CUDA graphs, weights)
    disk_cache.py     the files kept across processes (kernels sources, tuning results)
"""
from .autotune import autotune_requested
from .compile_check import TritonCompileCheckError, compile_check_targets
from .disk_cache import cache_dir, write_kernels
from .kernel_files import (LAUNCH_TABLE_FIELDS, LAUNCH_TABLE_VERSION, LaunchTableError,
                           TritonKernels, check_launch_table, import_kernels)
from .launch import Launcher
from .program import Program, load

__all__ = ["LAUNCH_TABLE_FIELDS", "LAUNCH_TABLE_VERSION", "LaunchTableError", "Launcher",
           "Program", "TritonCompileCheckError", "TritonKernels", "autotune_requested",
           "cache_dir", "check_launch_table", "compile_check_targets", "import_kernels",
           "load", "write_kernels"]
