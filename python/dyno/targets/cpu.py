"""CPU kernels: JIT-compiled by MLIR's ExecutionEngine, run on an LLVM-ABI OpenMP runtime.

Kernels use the bare-pointer calling convention (one pointer per argument and result,
all statically shaped and contiguous), so a launch is one ctypes call with the tensors'
data pointers.
"""
import ctypes
import ctypes.util
import glob
import os
import site
import sys
import threading
from typing import Dict

from ..errors import DynoCompileError

_omp_lock = threading.Lock()
_omp = None
_omp_threads = None


def _configure_openmp_runtime() -> None:
    """Dyno's kernels share the cores with PyTorch's own OpenMP pool (libgomp), which
    runs the library calls between them. Intel's runtime keeps its threads spinning for
    200 ms after each parallel region by default, starving PyTorch's threads on a small
    machine; with 0 every launch pays a wake-up. Measured on 2 cores (Dyno only, medians;
    transformer block / layernorm+GELU+softmax): 200 ms: 9.3 ms / 284 us; 0: 8.3 ms /
    454 us; 1 ms: 8.7 ms / 202 us. The runtime reads KMP_BLOCKTIME (milliseconds) when it
    initializes; a user's own setting wins."""
    os.environ.setdefault("KMP_BLOCKTIME", "1")


def openmp_library() -> str:
    """Path of an OpenMP runtime with the __kmpc_* ABI (libomp or Intel's libiomp5)."""
    explicit = os.environ.get("DYNO_OPENMP_LIBRARY")
    if explicit:
        return explicit
    prefixes = [sys.prefix, sys.base_prefix] + site.getsitepackages()
    for prefix in prefixes:
        for pattern in ("lib/libiomp5.so", "lib/libomp.so*", "libiomp5.so"):
            matches = sorted(glob.glob(os.path.join(prefix, pattern)))
            if matches:
                return matches[0]
    for name in ("omp", "iomp5"):
        found = ctypes.util.find_library(name)
        if found:
            return found
    for path in glob.glob("/usr/lib/x86_64-linux-gnu/libomp.so*"):
        return path
    raise DynoCompileError(
        "runtime", "no LLVM-ABI OpenMP runtime found (pip install intel-openmp, "
        "or apt-get install libomp5, or set DYNO_OPENMP_LIBRARY)")


def runner_utils_library() -> str:
    """MLIR's C runner utilities (memrefCopy for strided copies)."""
    for prefix in site.getsitepackages() + [sys.prefix]:
        path = os.path.join(prefix, "mlir", "lib", "libmlir_c_runner_utils.so")
        if os.path.exists(path):
            return path
    raise DynoCompileError("runtime", "libmlir_c_runner_utils.so not found (MLIR kit missing)")


def sync_threads(torch_threads: int) -> None:
    """Makes OpenMP kernels use as many threads as torch.get_num_threads()."""
    global _omp, _omp_threads
    if torch_threads == _omp_threads:
        return
    with _omp_lock:
        if _omp is None:
            _configure_openmp_runtime()
            _omp = ctypes.CDLL(openmp_library(), mode=ctypes.RTLD_GLOBAL)
        _omp.omp_set_num_threads(ctypes.c_int(torch_threads))
        _omp_threads = torch_threads


class CpuKernels:
    """The JIT-compiled `module @kernels` of one graph."""

    def __init__(self, llvm_dialect_text: str, signatures: Dict[str, int]):
        from .. import ir
        from ..execution_engine import ExecutionEngine

        _configure_openmp_runtime()
        self._context = ir.Context()
        with self._context:
            module = ir.Module.parse(llvm_dialect_text)
        try:
            self._engine = ExecutionEngine(
                module, opt_level=3,
                shared_libs=[openmp_library(), runner_utils_library()])
        except Exception as error:
            raise DynoCompileError("jit", str(error)) from None
        self.functions = {name: self._launcher(name, n) for name, n in signatures.items()}

    def _launcher(self, name: str, num_pointers: int):
        # ExecutionEngine exposes each function through its packed wrapper,
        # `void _mlir_<name>(void **args)`, args[i] pointing at the i-th argument.
        address = self._engine.raw_lookup(name)
        if not address:
            raise DynoCompileError("jit", f"kernel {name} is missing after JIT compilation")
        packed = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
        Pointers = ctypes.c_void_p * num_pointers
        stride = ctypes.sizeof(ctypes.c_void_p)
        engine = self._engine  # the launcher keeps the JIT-compiled code alive

        def launch(*pointers):
            assert engine is not None
            values = Pointers(*pointers)
            base = ctypes.addressof(values)
            packed(Pointers(*range(base, base + stride * num_pointers, stride)))

        return launch

    def __getitem__(self, name: str):
        return self.functions[name]
