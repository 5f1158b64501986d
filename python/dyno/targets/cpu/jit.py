"""CPU kernels: JIT-compiled by MLIR's ExecutionEngine, run on PyTorch's OpenMP thread pool.

Kernels use the bare-pointer calling convention (one pointer per argument and result,
all statically shaped and contiguous), so a launch is one ctypes call with the tensors'
data pointers.
"""
import contextlib
import ctypes
import ctypes.util
import glob
import os
import site
import sys
import threading
from typing import Dict

from ...errors import DynoCompileError

_lock = threading.Lock()
_runtime = None
_thread_state = threading.local()  # OpenMP's thread count is a per-thread setting


def _configure_llvm_openmp_runtime() -> None:
    """Intel's runtime keeps its threads spinning for 200 ms after each parallel region by
    default, starving PyTorch's own pool on a small machine; with 0 every launch pays a
    wake-up. Measured on 2 cores (Dyno only, medians; transformer block /
    layernorm+GELU+softmax): 200 ms: 9.3 ms / 284 us; 0: 8.3 ms / 454 us; 1 ms: 8.7 ms /
    202 us. Read when the runtime initializes; a user's own KMP_BLOCKTIME wins."""
    os.environ.setdefault("KMP_BLOCKTIME", "1")


def openmp_library() -> str:
    """Path of an LLVM-ABI OpenMP runtime (libomp or Intel's libiomp5), the fallback."""
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


def _process_libgomp():
    """The GNU OpenMP runtime already loaded in this process (PyTorch's), if any."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "libgomp" in line}
    except OSError:
        return None
    for path in sorted(paths):
        if os.path.isfile(path):
            library = ctypes.CDLL(path)  # already loaded: the same copy PyTorch uses
            if hasattr(library, "GOMP_parallel"):
                return library
    return None


class OpenMPRuntime:
    """The OpenMP runtime Dyno's kernels run on.

    By default the LLVM entry points the kernels call (`__kmpc_*`) are provided by
    libDynoKmpcOnGomp on top of PyTorch's libgomp, so kernels and PyTorch's own parallel
    regions (matmul, conv) share one thread pool. DYNO_OPENMP=llvm, or a PyTorch built
    without libgomp, selects an LLVM-ABI runtime (Intel's libiomp5) instead.
    """

    def __init__(self):
        self.library = ""      # what ExecutionEngine resolves __kmpc_* from
        self.control = None    # the runtime whose omp_set_num_threads governs kernels
        self.shares_torch_pool = False
        gomp = None if os.environ.get("DYNO_OPENMP") == "llvm" else _process_libgomp()
        if gomp is not None:
            package = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))  # dyno/
            shim_path = os.path.join(package, "_mlir_libs", "libDynoKmpcOnGomp.so")
            shim = ctypes.CDLL(shim_path, mode=ctypes.RTLD_GLOBAL)
            address = lambda name: ctypes.c_void_p(
                ctypes.cast(getattr(gomp, name), ctypes.c_void_p).value)
            if shim.dyno_openmp_bind(address("GOMP_parallel"), address("GOMP_barrier"),
                                     address("omp_get_thread_num"),
                                     address("omp_get_num_threads")) == 0:
                self.library, self.control, self.shares_torch_pool = shim_path, gomp, True
        if not self.shares_torch_pool:
            _configure_llvm_openmp_runtime()
            self.library = openmp_library()
            self.control = ctypes.CDLL(self.library, mode=ctypes.RTLD_GLOBAL)


def openmp_runtime() -> OpenMPRuntime:
    global _runtime
    with _lock:
        if _runtime is None:
            _runtime = OpenMPRuntime()
        return _runtime


def runner_utils_library() -> str:
    """MLIR's C runner utilities (memrefCopy for strided copies)."""
    for prefix in site.getsitepackages() + [sys.prefix]:
        path = os.path.join(prefix, "mlir", "lib", "libmlir_c_runner_utils.so")
        if os.path.exists(path):
            return path
    raise DynoCompileError("runtime", "libmlir_c_runner_utils.so not found (MLIR kit missing)")


def sync_threads(torch_threads: int) -> None:
    """Makes OpenMP kernels launched from this thread use torch.get_num_threads()."""
    if getattr(_thread_state, "threads", None) == torch_threads:
        return
    openmp_runtime().control.omp_set_num_threads(ctypes.c_int(torch_threads))
    _thread_state.threads = torch_threads


class CpuKernels:
    """The JIT-compiled `module @kernels` of one graph."""

    def __init__(self, lowered, signatures: Dict[str, int]):
        """`lowered`: the lowered graph (its host function and, nested, `module @kernels`
        in the LLVM dialect), parsed (an `ir.Module`, whose kernels move to the JIT's
        module) or as text; or the kernels alone as a module. Pass the whole graph: a
        nested module printed alone loses the `dense_resource` constants, which live in
        the top-level module's resources."""
        from ... import ir
        from ...execution_engine import ExecutionEngine

        self.functions = {}
        if not signatures:
            # A graph of library calls and views alone: nothing to compile (the JIT
            # would emit no object, which its object cache cannot write out).
            self._engine = None
            return
        runtime = openmp_runtime()
        # The MLIR context is not kept: once the JIT has translated the module it runs
        # LLVM's code alone, and the context was half of what a compiled graph kept in
        # memory (4.7 -> 2.4 MB per graph; benchmarks/recompile_memory.py).
        with contextlib.ExitStack() as scope:
            if isinstance(lowered, str):
                scope.enter_context(ir.Context())
                module = ir.Module.parse(lowered)
            else:
                module = lowered
            scope.enter_context(module.context)
            scope.enter_context(ir.Location.unknown())
            nested = [op for op in module.body.operations
                      if op.operation.name == "builtin.module"]
            if nested:
                kernels = ir.Module.create()
                for op in list(nested[0].regions[0].blocks[0].operations):
                    kernels.body.append(op.detach_from_parent())
                module = kernels
        try:
            # (Position-independent code: the compile cache links it into a library.)
            self._engine = ExecutionEngine(
                module, opt_level=3,
                shared_libs=[runtime.library, runner_utils_library()], enable_pic=True)
        except Exception as error:
            raise DynoCompileError("jit", str(error)) from None
        self.functions = {name: self._launcher(name, n) for name, n in signatures.items()}

    def _launcher(self, name: str, num_pointers: int):
        # ExecutionEngine exposes each function through its packed wrapper,
        # `void _mlir_<name>(void **args)`, args[i] pointing at the i-th argument.
        address = self._engine.raw_lookup(name)
        if not address:
            raise DynoCompileError("jit", f"kernel {name} is missing after JIT compilation")
        return packed_launcher(address, num_pointers, self._engine)

    def save(self, path: str) -> bool:
        """Writes the compiled kernels as a shared library at `path` (for the compile
        cache): the JIT's object code, linked by the system's C compiler driver. False
        where there is none, or linking failed."""
        import shutil
        import subprocess
        import tempfile

        linker = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        if linker is None:
            return False
        with tempfile.TemporaryDirectory() as scratch:
            if self._engine is None:  # no kernels: an empty library
                source = os.path.join(scratch, "empty.c")
                with open(source, "w") as handle:
                    handle.write("int dyno_graph_without_kernels;\n")
                command = [linker, "-shared", "-o", path, source]
            else:
                obj = os.path.join(scratch, "kernels.o")
                self._engine.dump_to_object_file(obj)
                command = [linker, "-shared", "-o", path, obj, "-lm"]
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        return done.returncode == 0 and os.path.exists(path)

    def __getitem__(self, name: str):
        return self.functions[name]


def packed_launcher(address: int, num_pointers: int, keep_alive):
    """A Python callable that runs the packed wrapper at `address` on data pointers;
    `keep_alive` is what holds the code (an ExecutionEngine, a loaded library)."""
    packed = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
    Pointers = ctypes.c_void_p * num_pointers
    stride = ctypes.sizeof(ctypes.c_void_p)
    # Per calling thread, built once: the argument values, and the array of their
    # addresses that the packed wrapper takes. A launch then only stores the
    # pointers (a few microseconds less per call than building both arrays).
    per_thread = threading.local()

    def buffers():
        values = Pointers()
        base = ctypes.addressof(values)
        addresses = Pointers(*range(base, base + stride * num_pointers, stride))
        per_thread.buffers = (values, addresses)
        return per_thread.buffers

    def launch(*pointers):
        assert keep_alive is not None
        values, addresses = getattr(per_thread, "buffers", None) or buffers()
        values[:] = pointers
        packed(addresses)

    return launch


class LoadedKernels:
    """Kernels from a shared library CpuKernels.save wrote (a compile-cache hit): the
    same launchers, without MLIR."""

    def __init__(self, path: str, signatures: Dict[str, int], runner_utils: bool):
        """`runner_utils`: the kernels call MLIR's C runner utilities (memrefCopy), which
        load libMLIR and libLLVM (40 ms): only then are they loaded."""
        runtime = openmp_runtime()  # __kmpc_* (RTLD_GLOBAL) before the kernels need them
        if runner_utils:
            ctypes.CDLL(runner_utils_library(), mode=ctypes.RTLD_GLOBAL)
        self._library = ctypes.CDLL(path)
        self._runtime = runtime
        self.functions = {}
        for name, num_pointers in signatures.items():
            address = ctypes.cast(getattr(self._library, "_mlir_" + name),
                                  ctypes.c_void_p).value
            self.functions[name] = packed_launcher(address, num_pointers, self._library)

    def __getitem__(self, name: str):
        return self.functions[name]
