"""CPU kernels: compiled by MLIR's ExecutionEngine in a worker process
(codegen_worker.py), linked into a shared library, run on PyTorch's OpenMP thread pool.

No LLVM code generation runs in the user's process: a crash or assertion there (LLVM
meeting a CPU's features for the first time) ends the worker, and the graph runs eagerly
with a warning (DynoCompileError). The object code the worker returns is linked by the
system's C compiler driver (`cc -shared`) and loaded with ctypes, as the compile cache
loads its libraries.

Kernels use the bare-pointer calling convention (one pointer per argument and result,
all statically shaped and contiguous), so a launch is one ctypes call with the tensors'
data pointers.

Kernels equal up to their names are compiled once per process: a graph's kernel that an
earlier graph already compiled (the same function, and the same globals and
declarations it refers to: the key dyno-key-kernels computed, KernelIdentity.h) is
taken from that graph's `KernelUnit` instead (see `_sharing_keys`). Every compiled kernel is named after its graph's unit or, when it can
be shared, after its content, so the units' object code links into one library without
clashes (the compile cache stores a graph's kernels, its own and those it took, as one).

A graph's own kernels are split into parts (`_split_for_threads`) that LLVM compiles at
once, one thread each (`DYNO_JIT_THREADS`, by default the cores this process may use):
each part is a unit.
"""
import contextlib
import ctypes
import ctypes.util
import glob
import os
import site
import sys
import threading
import uuid
import weakref
from typing import Dict, List, Optional

from ... import environment
from ...errors import DynoCompileError
from .. import host_runtime
from . import codegen_worker

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
    explicit = environment.get("DYNO_OPENMP_LIBRARY")
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
        gomp = None if environment.get("DYNO_OPENMP") == "llvm" else _process_libgomp()
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


class KernelUnit:
    """Kernels one compile made (those of a graph that no earlier graph of this process
    had compiled): their object code, which the compile cache links into its libraries,
    and the loaded library that runs them: the one linked after the compile, until one
    the compile cache stored with the same code is loaded (`run_from`)."""

    def __init__(self, library, object_code: bytes, runner_utils: bool):
        self.library = library
        self.object_code = object_code
        self.runner_utils = runner_utils  # its code calls MLIR's C runner utilities

    def address(self, symbol: str):
        """(address of `symbol`'s packed wrapper or None, what holds its code). Under
        _sharing_lock, as run_from is."""
        return _symbol_address(self.library, symbol), self.library

    def run_from(self, library) -> None:
        """Runs the kernels from `library` (which holds this unit's code); the library
        linked after the compile is unloaded once no launcher holds it."""
        with _sharing_lock:
            self.library = library


def _symbol_address(library, symbol: str) -> Optional[int]:
    """The address of `symbol`'s packed wrapper (`_mlir_<symbol>`, which the
    ExecutionEngine adds) in `library`. By item, not attribute: an attribute would
    keep a function object that holds the library in a cycle."""
    try:
        return ctypes.cast(library["_mlir_" + symbol], ctypes.c_void_p).value
    except AttributeError:
        return None


def _link(objects: List[bytes], path: str) -> Optional[str]:
    """Links `objects` (position-independent object code) into the shared library
    `path` with the system's C compiler driver; None when done, else why not."""
    import shutil
    import subprocess
    import tempfile

    linker = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if linker is None:
        return "no C compiler driver (cc, gcc or clang) on PATH links the kernels"
    with tempfile.TemporaryDirectory() as scratch:
        paths = []
        for index, code in enumerate(objects):
            paths.append(os.path.join(scratch, f"kernels{index}.o"))
            with open(paths[-1], "wb") as handle:
                handle.write(code)
        if not paths:  # no kernels: an empty library
            paths.append(os.path.join(scratch, "empty.c"))
            with open(paths[-1], "w") as handle:
                handle.write("int dyno_graph_without_kernels;\n")
        command = [linker, "-shared", "-o", path, *paths, "-lm"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if done.returncode != 0 or not os.path.exists(path):
        return f"{' '.join(command[:2])} failed: {done.stderr.strip()[-2000:]}"
    return None


def _load_compiled(objects: List[bytes], runner_utils: bool):
    """`objects` linked into one library and loaded (RTLD_LOCAL); the file is removed
    once loaded, and the library unloaded when the last of its users goes."""
    import _ctypes
    import tempfile

    if runner_utils:
        ctypes.CDLL(runner_utils_library(), mode=ctypes.RTLD_GLOBAL)
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "kernels.so")
        failure = _link(objects, path)
        if failure:
            raise DynoCompileError("jit", failure)
        try:
            library = ctypes.CDLL(path)
        except OSError as error:
            raise DynoCompileError("jit", f"the linked kernels did not load: {error}") \
                from None
    weakref.finalize(library, _ctypes.dlclose, library._handle)
    return library


# Units by the sharing key of each kernel they compiled. Weak: a unit lives while a graph
# launches one of its kernels, and while it does, no other unit compiles those kernels
# (so no two units linked into one library define the same symbol).
_units_by_kernel = weakref.WeakValueDictionary()
_sharing_lock = threading.Lock()
# The attribute by which dyno-key-kernels keys a kernel (KernelIdentity.h).
KERNEL_KEY = "dyno.kernel_key"


def _sharing_keys(module, kernel_names) -> Dict[str, Optional[str]]:
    """For each of `kernel_names` (functions of `module` that the wrapper launches), what
    kernels equal up to their names share: the `dyno.kernel_key` dyno-key-kernels put on
    it, last in the CPU lowering pipeline (KernelIdentity.h: its printing up to its name
    and those of the symbols it uses); None where it put none (it cannot be shared:
    another function calls it, it calls a function defined here, or its constants live
    in the module's resources)."""
    keys = dict.fromkeys(kernel_names)
    for op in module.body.operations:
        if "sym_name" in op.attributes and op.attributes["sym_name"].value in keys \
                and KERNEL_KEY in op.attributes:
            keys[op.attributes["sym_name"].value] = op.attributes[KERNEL_KEY].value
    return keys


# A part of fewer operations than this (about two GPT-2 kernels: 20,000 characters of
# LLVM dialect, at 110 characters an operation) is not worth its own engine and thread
# (in the worker).
MIN_PART_OPERATIONS = 180


def _defined_or_declared(module) -> set:
    return {op.attributes["sym_name"].value for op in module.body.operations
            if "sym_name" in op.attributes}


def _split_for_threads(module, kernel_symbols: set, threads: int):
    """Splits `module` (LLVM dialect; its kernels are `kernel_symbols`) into at most
    `threads` modules to compile at once, balanced by their numbers of operations: what
    refers to each other (a kernel, the functions it calls, the globals it reads) stays
    in one, and each gets a copy of the declarations it calls. Returns [(module, its
    kernels)], `module` first (what moved out of it is gone from it). Symbols and their
    uses come from the IR (`_dynoSymbolUses.symbol_uses`, SymbolTable in C++)."""
    from ... import ir
    from ..._mlir_libs._dynoSymbolUses import symbol_uses

    if threads <= 1:
        return [(module, sorted(kernel_symbols))]
    if any("sym_name" not in op.attributes for op in module.body.operations):
        # Not a symbol (module flags, constructors): nothing here knows what it needs,
        # so nothing is split.
        return [(module, sorted(kernel_symbols))]
    symbols = symbol_uses(module)  # name -> (operations, declaration?, uses)
    ops = {op.attributes["sym_name"].value: op for op in module.body.operations}
    sizes_of = {name: size for name, (size, _, _) in symbols.items()}
    declarations = {name for name, (_, declared, _) in symbols.items() if declared}
    group = {name: name for name in ops if name not in declarations}

    def root(name):
        while group[name] != name:
            group[name] = group[group[name]]
            name = group[name]
        return name

    for name in group:
        for use in symbols[name][2]:
            if use in group:
                group[root(use)] = root(name)
    components: Dict[str, List[str]] = {}
    for name in group:
        components.setdefault(root(name), []).append(name)
    with_kernels = [names for names in components.values() if kernel_symbols & set(names)]
    total = sum(sizes_of.values())
    count = min(threads, len(with_kernels), max(1, total // MIN_PART_OPERATIONS))
    if count <= 1:
        return [(module, sorted(kernel_symbols))]
    parts: List[List[str]] = [[] for _ in range(count)]
    sizes = [0] * count
    # The largest first, each into the smallest part so far; what has no kernel (a global
    # nothing here reads) stays in the first.
    for names in sorted(with_kernels, key=lambda names: -sum(sizes_of[n] for n in names)):
        smallest = sizes.index(min(sizes))
        parts[smallest] += names
        sizes[smallest] += sum(sizes_of[n] for n in names)
    split = [(module, sorted(kernel_symbols & set(parts[0])))]
    for names in parts[1:]:
        part = ir.Module.create()
        needed = set()
        for name in names:
            part.body.append(ops[name].detach_from_parent())
            needed |= set(symbols[name][2]) & declarations
        with ir.InsertionPoint(part.body):
            for name in sorted(needed):
                ops[name].clone()
        split.append((part, sorted(kernel_symbols & set(names))))
    return split


class CpuKernels:
    """The compiled `module @kernels` of one graph, less the kernels an earlier graph
    of this process compiled, which it launches from that graph's unit. `shared`: how
    many kernels it took so."""

    def __init__(self, lowered, signatures: Dict[str, int]):
        """`lowered`: the lowered graph (its host function and, nested, `module @kernels`
        in the LLVM dialect), parsed (an `ir.Module`, whose kernels move to the compiled
        module) or as text; or the kernels alone as a module. Pass the whole graph: a
        nested module printed alone loses the `dense_resource` constants, which live in
        the top-level module's resources."""
        from ... import ir

        self.functions = {}
        self.symbols = {}   # kernel -> its symbol in the compiled code
        self.units: List[KernelUnit] = []  # the units its kernels come from, its own first
        self._own: List[KernelUnit] = []  # the units of the parts it compiled
        self.shared = 0
        if not signatures:
            # A graph of library calls and views alone: nothing to compile (the engine
            # would emit no object, which its object cache cannot write out).
            return
        runtime = openmp_runtime()
        # The MLIR context is not kept: once the module is compiled its library runs
        # alone, and the context was half of what a compiled graph kept in memory
        # (benchmarks/experiments/recompile_memory.py).
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
            with _sharing_lock:
                self._compile(module, signatures, runtime)

    def _compile(self, module, signatures, runtime):
        from ... import ir

        keys = _sharing_keys(module, signatures)
        # Names of this unit's own: unique in any process (a library another process
        # stored for the same graph holds its own units).
        serial = uuid.uuid4().hex[:12]
        taken, twins, renamed = {}, {}, {}
        for op in list(module.body.operations):
            if "sym_name" not in op.attributes:
                continue
            name = op.attributes["sym_name"].value
            key = keys.get(name)
            unit = _units_by_kernel.get(key) if key else None
            if unit is not None:  # compiled by an earlier graph: not again
                taken[name] = unit
                op.operation.erase()
            elif key and key in twins.values():  # equal to one this graph compiles
                twins[name] = key
                op.operation.erase()
            elif name in signatures and key:
                # Named after its content (no other unit alive compiled it; nothing
                # refers to a kernel that can be shared).
                ir.SymbolTable.set_symbol_name(op, f"dyno_{key}")
                self.symbols[name] = f"dyno_{key}"
                twins[name] = key
            elif not (op.operation.name == "llvm.func" and not len(op.regions[0].blocks)):
                # A kernel that cannot be shared, a function it calls, a global: this
                # unit's own (a declaration keeps its name: it is linked, not defined).
                renamed[name] = f"dyno_u{serial}_{name}"
                if name in signatures:
                    self.symbols[name] = renamed[name]
        for name, symbol in renamed.items():
            ir.SymbolTable.replace_all_symbol_uses(name, symbol, module.operation)
        for op in module.body.operations:
            if "sym_name" in op.attributes and op.attributes["sym_name"].value in renamed:
                ir.SymbolTable.set_symbol_name(op, renamed[op.attributes["sym_name"].value])
        unit_of = dict(taken)  # kernel -> the unit that compiled it
        compiled_by_key = {}  # sharing key -> the unit of this graph that compiled it
        if len(self.symbols):
            kernels_in = {symbol: name for name, symbol in self.symbols.items()}
            parts = _split_for_threads(module, set(kernels_in), host_runtime.compile_threads())
            # (Position-independent code: it is linked into a library.)
            objects = codegen_worker.compile_objects(
                [_bytecode(part) for part, _ in parts], [symbols[0] for _, symbols in parts],
                opt_level=3, shared_libs=[runtime.library, runner_utils_library()],
                enable_pic=True)
            runner_utils = ["memrefCopy" in _defined_or_declared(part) for part, _ in parts]
            library = _load_compiled(objects, any(runner_utils))
            for code, calls_runner_utils, (part, symbols) in zip(objects, runner_utils, parts):
                unit = KernelUnit(library, code, calls_runner_utils)
                self._own.append(unit)
                self.units.append(unit)
                for symbol in symbols:
                    unit_of[kernels_in[symbol]] = unit
            for name, key in twins.items():
                if name in unit_of:  # (the first of its twins: the one compiled)
                    compiled_by_key[key] = _units_by_kernel[key] = unit_of[name]
        for name, unit in taken.items():
            self.symbols[name] = f"dyno_{keys[name]}"
            if unit not in self.units:
                self.units.append(unit)
        for name, key in twins.items():
            self.symbols[name] = f"dyno_{key}"
            unit_of[name] = compiled_by_key[key]
        self.shared = len(taken)
        for name, num_pointers in signatures.items():
            address, owner = unit_of[name].address(self.symbols[name])
            if not address:
                raise DynoCompileError("jit", f"kernel {name} is missing from the "
                                       "compiled library")
            self.functions[name] = packed_launcher(address, num_pointers, owner)

    @property
    def parts(self) -> int:
        """How many parts its own kernels were compiled in, at once."""
        return len(self._own)

    def save(self, path: str) -> bool:
        """Writes the compiled kernels, its own and those it took from other units, as
        one shared library at `path` (for the compile cache): their object code, linked
        by the system's C compiler driver. False where there is none, or linking failed."""
        with _sharing_lock:
            codes = [unit.object_code for unit in self.units]
        return _link(codes, path) is None

    @property
    def runner_utils(self) -> bool:
        """Whether its code (its own and the units' it took kernels from, which `save`
        links whole) calls MLIR's C runner utilities."""
        return any(unit.runner_utils for unit in self.units)

    def run_from(self, path: str, runner_utils: bool, symbols: Dict[str, str]):
        """The same graph's kernels from the compile cache's library at `path`, whose
        kernels are `symbols`. Where `save` wrote it (its symbols are these), the
        library also runs this graph's own units for later graphs that share its kernels
        (the library linked after the compile is unloaded once nothing launches from
        it); another process's library is only loaded."""
        loaded = LoadedKernels(path, {name: launch.num_pointers
                                      for name, launch in self.functions.items()},
                               runner_utils, symbols, keep_alive=self.units)
        if symbols == self.symbols:
            for unit in self._own:
                unit.run_from(loaded.library)
        return loaded

    def __getitem__(self, name: str):
        return self.functions[name]


def _bytecode(module) -> bytes:
    """`module` as MLIR bytecode, with the `dense_resource` constants it holds (GPT-2's
    kernels: 3 ms to write, 7 ms to parse)."""
    import io

    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def packed_launcher(address: int, num_pointers: int, keep_alive):
    """A Python callable that runs the packed wrapper at `address` on data pointers;
    `keep_alive` is what holds the code (a loaded library)."""
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

    launch.num_pointers = num_pointers
    return launch


class LoadedKernels:
    """Kernels from a shared library CpuKernels.save wrote (a compile-cache hit): the
    same launchers, without MLIR."""

    def __init__(self, path: str, signatures: Dict[str, int], runner_utils: bool,
                 symbols: Optional[Dict[str, str]] = None, keep_alive=()):
        """`runner_utils`: the kernels call MLIR's C runner utilities (memrefCopy), which
        load libMLIR and libLLVM (40 ms): only then are they loaded. `symbols`: each
        kernel's symbol in the library, where it is not the kernel's name (CpuKernels
        names its kernels apart); `keep_alive`: what else lives as long as these kernels."""
        runtime = openmp_runtime()  # __kmpc_* (RTLD_GLOBAL) before the kernels need them
        if runner_utils:
            ctypes.CDLL(runner_utils_library(), mode=ctypes.RTLD_GLOBAL)
        self.library = ctypes.CDLL(path)
        self._runtime = runtime
        self._keep_alive = keep_alive
        self.functions = {}
        symbols = symbols or {}
        for name, num_pointers in signatures.items():
            address = ctypes.cast(getattr(self.library, "_mlir_" + symbols.get(name, name)),
                                  ctypes.c_void_p).value
            self.functions[name] = packed_launcher(address, num_pointers, self.library)

    def __getitem__(self, name: str):
        return self.functions[name]
