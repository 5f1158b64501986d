"""Dyno's environment variables, in one table.

What a compile does is set by its options (`torch.compile(..., options={...})`,
driver/compiler.CompileOptions). An environment variable is only ever one of:

* the documented default of an option (DYNO_AUTOTUNE, DYNO_CACHE): an option the user
  passes wins over it;
* a setting of the process: where the compile cache lives and how large it may grow, how
  many threads compile, which OpenMP runtime or `dyno-opt` to use;
* a tool for debugging and tests (stage dumps, profiler names, injected faults, Triton's
  GPU compiler checking kernels that run under its interpreter).

Compile-side code reads them through `get`/`enabled`, which know no name outside this
table. The runtime files shipped with exported programs (targets/host_runtime.py,
targets/triton/runtime/) and the CPU target's codegen worker (which imports no torch)
read theirs from os.environ themselves, being self-contained; they are in the table all
the same, and e2e/test_environment.py checks that every DYNO_* name the package reads is
here. `python -m dyno.environment` prints the table.
"""
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    name: str
    default: str
    kind: str  # "option default", "process setting" or "debugging and tests"
    read_by: str  # the modules that read it (under python/dyno/)
    meaning: str


VARIABLES = {variable.name: variable for variable in (
    Variable("DYNO_AUTOTUNE", "0", "option default", "driver/compiler.py, "
             "targets/triton/runtime/autotune.py (exported programs)",
             "1: the default of the `autotune` option (Triton: time each kernel's block "
             "sizes once, the winner kept on disk)"),
    Variable("DYNO_CACHE", "1", "option default", "driver/compiler.py, "
             "driver/compile_cache.py",
             "0: the default of the `cache` option off, and the compile cache unused by "
             "dyno.save_cache_artifacts/load_cache_artifacts too"),
    Variable("DYNO_CACHE_DIR", "~/.cache/dyno", "process setting",
             "driver/compile_cache.py, targets/triton/runtime/disk_cache.py",
             "where compiled graphs and autotuning results are stored"),
    Variable("DYNO_CACHE_SIZE_MB", "1024", "process setting", "driver/compile_cache.py",
             "the compile cache's size limit; the least recently used entries go first"),
    Variable("DYNO_JIT_THREADS", "", "process setting",
             "targets/host_runtime.py (exported programs too)",
             "threads that compile a graph's kernels at once (CPU: LLVM sessions of the "
             "codegen worker; Triton: compiles ahead of the first launch); empty: the "
             "cores this process may run on, at most 8"),
    Variable("DYNO_OPENMP", "", "process setting", "targets/cpu/jit.py",
             "llvm: CPU kernels use an LLVM-ABI OpenMP runtime instead of the process's "
             "libgomp"),
    Variable("DYNO_OPENMP_LIBRARY", "", "process setting", "targets/cpu/jit.py",
             "the path of the OpenMP runtime the CPU kernels load (under DYNO_OPENMP=llvm, "
             "or where the process has no libgomp)"),
    Variable("DYNO_OPT", "", "process setting", "lowering/mlir_tools.py",
             "the dyno-opt binary to run (default: the package's own)"),
    Variable("DYNO_DEBUG_DIR", "", "debugging and tests", "driver/debug.py",
             "a directory: each graph's stages written to DIR/graph_<n>/ (the FX graph, "
             "the MLIR after each pipeline, kernels, wrapper)"),
    Variable("DYNO_PROFILE_KERNELS", "0", "debugging and tests",
             "targets/host_runtime.py (exported programs too)",
             "1: each kernel launch is named in torch.profiler's tables"),
    Variable("DYNO_TRITON_COMPILE_CHECK", "", "debugging and tests",
             "targets/triton/runtime/compile_check.py",
             "comma-separated GPU targets (cuda:90): every Triton kernel that runs under "
             "the interpreter is first compiled for them by Triton's GPU compiler"),
    Variable("DYNO_CODEGEN_FAULT", "", "debugging and tests", "targets/cpu/codegen_worker.py",
             "crash, error or hang: a fault injected into the CPU codegen worker (tests "
             "of the eager fallback)"),
)}


def get(name: str) -> str:
    """The variable's value, or its default where it is unset or empty; a name not in
    the table is a KeyError."""
    return os.environ.get(name) or VARIABLES[name].default


def enabled(name: str) -> bool:
    """Whether a 0/1 variable is set to anything but empty or 0."""
    return get(name) not in ("", "0")


def table() -> str:
    """The variables as a Markdown table."""
    rows = ["| variable | default | kind | meaning |", "|---|---|---|---|"]
    rows += [f"| `{v.name}` | {v.default or '(unset)'} | {v.kind} | {v.meaning} |"
             for v in VARIABLES.values()]
    return "\n".join(rows)
