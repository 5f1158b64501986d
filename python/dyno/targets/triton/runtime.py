"""Runs Dyno's generated Triton kernels. Needs only torch and triton.

This module is self-contained on purpose: `dyno.export_triton` copies it next to the
exported kernels and wrapper, so that a model compiled on a CPU-only build machine runs
on a GPU server where neither Dyno's compiler, MLIR nor torch-mlir is installed.

A kernels file (printed by `dyno-translate --mlir-to-triton`) holds `@triton.jit`
functions and a `KERNELS` table: per kernel its index-space sizes (`xnumel`, `rnumel`)
and block-size configurations, the compiler's heuristic choice first. A launcher
computes the grid from `xnumel` and the chosen `XBLOCK` and launches the kernel.

Autotuning (`autotune=True`, or DYNO_AUTOTUNE=1) times every configuration on the first
call and keeps the fastest; the winner is cached on disk (DYNO_CACHE_DIR, by default
~/.cache/dyno) under a hash of the kernel source, configuration list and device, so a
later process starts with it.

Kernels equal up to their names (the same source, launch-table entry and device) share
one launcher in a process, whichever graph's file they came from: Triton compiles each
distinct kernel once (its own caches key a kernel by its source, name included).
"""
import ast
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import sys
import threading
import warnings
import weakref

import torch
import triton

_lock = threading.Lock()


# The autotuning results this process read or wrote (what dyno.save_cache_artifacts
# bundles with the compile cache's entries).
autotune_results_used = set()


def cache_dir() -> str:
    root = os.environ.get("DYNO_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "dyno")
    os.makedirs(root, exist_ok=True)
    return root


@contextlib.contextmanager
def _interpreter(enabled: bool):
    """Makes `@triton.jit` build interpreted kernels (TRITON_INTERPRET=1) or compiled ones
    while a kernels module is imported, without changing how any other Triton code in the
    process runs."""
    knobs = getattr(triton, "knobs", None)
    if knobs is not None and hasattr(knobs.runtime, "scope"):
        with knobs.runtime.scope():
            knobs.runtime.interpret = enabled
            yield
        return
    if not enabled:
        yield
        return
    previous = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        yield
    finally:
        if previous is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = previous


def _fold_reduce_over_blocks(self, input):
    """Triton's interpreter reduces with a custom combine function one element at a time
    in Python (ReduceOps.generic_reduce): 1.4 s for a 512x4 max in a pooling kernel. This
    folds along the axis in the same order (the accumulator first, positions 0, 1, ...),
    calling the combine function on whole slices: the same values, vectorized."""
    import numpy as np
    import triton.language as tl

    original_axis = self.axis
    input, axis = self.unravel(input, self.axis)
    data = [arg.handle.data for arg in input]
    accumulators = [np.take(d, 0, axis=axis) for d in data]
    for position in range(1, data[0].shape[axis]):
        combined = self.combine_fn.fn(
            *(self.to_tensor(a, arg.dtype) for a, arg in zip(accumulators, input)),
            *(self.to_tensor(np.take(d, position, axis=axis), arg.dtype)
              for d, arg in zip(data, input)))
        combined = combined if isinstance(combined, tuple) else (combined,)
        values = [c.handle.data if isinstance(c, tl.core.tensor) else np.asarray(c, dtype=a.dtype)
                  for c, a in zip(combined, accumulators)]
        # A 1-d block reduced to a scalar (tl.any's): the combined value comes back with
        # one element in a shape of its own.
        values = [v.reshape(a.shape) if v.shape != a.shape and v.size == a.size else v
                  for v, a in zip(values, accumulators)]
        accumulators = [np.broadcast_to(v, a.shape).astype(a.dtype, copy=False)
                        for v, a in zip(values, accumulators)]
    results = []
    for accumulator, arg in zip(accumulators, input):
        if self.keep_dims:
            if original_axis is not None:
                accumulator = np.expand_dims(accumulator, axis)
            else:
                for _ in range(len(data[0].shape)):
                    accumulator = np.expand_dims(accumulator, 0)
        elif original_axis is None:
            accumulator = accumulator.item()
        results.append(self.to_tensor(np.ascontiguousarray(accumulator)
                                      if isinstance(accumulator, np.ndarray) else accumulator,
                                      arg.dtype))
    return results


def _round_casts_into_bf16(self, src, dst_type):
    """Casts into and out of bf16 as the GPU does them. Triton's interpreter stores bf16
    as uint16 bits: it truncates float32 into them (the GPU's `cvt.rn.bf16.f32` rounds to
    nearest even), widens subnormal bf16 to wrong values (3e-39 became 3.7e-40), and any
    other source (float64, integers, booleans) kept the value as the bits (2.0 became
    1.8e-40). Into bf16, torch rounds once to nearest even, keeping subnormals (checked on
    an H200 with triton 3.6: f32, f64, int64, int32 and int8 sources); out of bf16 into
    float32, the bits are shifted into place, exactly."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    source = src.dtype.scalar
    if dst_type.scalar == tl.bfloat16 and source != tl.bfloat16 and \
            src.data.dtype.name in _TORCH_READS_FROM_NUMPY:
        # (ascontiguousarray makes 0-d data 1-d: the shape is put back.)
        data = np.ascontiguousarray(src.data)
        bits = torch.from_numpy(data).to(torch.bfloat16).view(torch.int16).numpy()
        return interpreter.TensorHandle(bits.view(np.uint16).reshape(src.data.shape),
                                        tl.bfloat16)
    if source == tl.bfloat16 and dst_type.scalar == tl.float32:
        bits = np.ascontiguousarray(src.data).astype(np.uint32) << np.uint32(16)
        return interpreter.TensorHandle(bits.view(np.float32).reshape(src.data.shape),
                                        tl.float32)
    return _interpreted_cast(self, src, dst_type)


_TORCH_READS_FROM_NUMPY = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8",
                           "bool")
_interpreted_cast = None


def _correct_the_interpreter():
    """Patches Triton's interpreter (interpreted runs only): vectorized reductions, and
    casts into bf16 rounded as on the GPU."""
    global _interpreted_cast
    from triton.runtime import interpreter

    reduce_ops = getattr(interpreter, "ReduceOps", None)
    if reduce_ops is not None and hasattr(reduce_ops, "generic_reduce") and \
            reduce_ops.generic_reduce is not _fold_reduce_over_blocks:
        reduce_ops.generic_reduce = _fold_reduce_over_blocks
    builder = getattr(interpreter, "InterpreterBuilder", None)
    if builder is not None and hasattr(builder, "cast_impl") and \
            builder.cast_impl is not _round_casts_into_bf16:
        _interpreted_cast = builder.cast_impl
        builder.cast_impl = _round_casts_into_bf16


# The launch table a kernels file ends with, `KERNELS = {name: entry}`, printed by
# lib/Target/Triton/TranslateToTriton.cpp after `LAUNCH_TABLE_VERSION = <n>`. This is its
# one declaration; test/python/launch_table.py checks the printer against it. Per kernel:
#   args         per argument the kernel takes, in dyno.launch's ABI order (a pointer per
#                argument and per result of the kernel it lowers, sizes of dynamic
#                dimensions among them), the torch dtype name of the tensor a pointer
#                points to ("float32"), "int" for an integer, or None where no dtype is
#                known (a signless i8, unsigned types)
#   xnumel       the parallel index space's size (static sizes)
#   rnumel       the reduced index space's size per program (1: no reduction)
#   xnumel_args  optional: the positions of the size arguments whose product is xnumel at
#                run time (dynamic shapes)
#   configs      block-size configurations ({"XBLOCK": .., "RBLOCK": .., "num_warps": ..}),
#                the compiler's heuristic choice first
LAUNCH_TABLE_VERSION = 2
LAUNCH_TABLE_FIELDS = {"args": True, "xnumel": True, "rnumel": True,  # name -> required
                       "xnumel_args": False, "configs": True}


class LaunchTableError(RuntimeError):
    """A kernels file whose launch table this runtime does not read."""


def check_launch_table(module) -> None:
    """Raises LaunchTableError unless `module` (an imported kernels file) has a launch
    table of LAUNCH_TABLE_VERSION with exactly the fields it declares."""
    version = getattr(module, "LAUNCH_TABLE_VERSION", None)
    if version != LAUNCH_TABLE_VERSION:
        raise LaunchTableError(
            f"kernels file {getattr(module, '__file__', module)!r} has launch table version "
            f"{version}; this runtime reads version {LAUNCH_TABLE_VERSION} (kernels and "
            "runtime from different Dyno builds?)")
    for name, entry in getattr(module, "KERNELS", {}).items():
        missing = [f for f, required in LAUNCH_TABLE_FIELDS.items()
                   if required and f not in entry]
        unknown = [f for f in entry if f not in LAUNCH_TABLE_FIELDS]
        if missing or unknown or not hasattr(module, name):
            raise LaunchTableError(
                f"launch table entry {name!r}: missing {missing}, unknown {unknown}"
                + ("" if hasattr(module, name) else ", and no such kernel"))


def import_kernels(path: str, source: bytes, interpret: bool):
    """Imports a kernels file whose content is `source` (Triton reads kernels' source
    through `inspect`, so they must live in a real file)."""
    digest = hashlib.sha256(source).hexdigest()[:16]
    name = f"dyno_triton_kernels_{digest}_{'interpreted' if interpret else 'compiled'}"
    with _lock:
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        if interpret:
            _correct_the_interpreter()
        with _interpreter(interpret):
            spec.loader.exec_module(module)
        sys.modules[name] = module
        return module


def write_kernels(source: str) -> str:
    """Stores a kernels source in the cache directory (by content) and returns its path."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    directory = os.path.join(cache_dir(), "kernels")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"kernels_{digest}.py")
    if not os.path.exists(path):
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as file:
            file.write(source)
        os.replace(temporary, path)
    return path


# Triton's GPU compiler checks the kernels the interpreter runs. The interpreter accepts
# kernels that the GPU compiler rejects (e.g. `tl.erf` of a bf16 block), and Triton
# compiles for a GPU target without a GPU (PTX and cubin through its bundled ptxas). With
# DYNO_TRITON_COMPILE_CHECK=cuda:90 (or a list, "cuda:80,cuda:90"), every interpreted
# launch first compiles the kernel for those targets with the launch's argument types and
# the heuristic block sizes; a rejection raises TritonCompileCheckError naming the kernel.

class TritonCompileCheckError(RuntimeError):
    """Triton's GPU compiler rejected a kernel that the interpreter would have run."""


def compile_check_targets() -> list:
    """The (backend, architecture) pairs DYNO_TRITON_COMPILE_CHECK names, e.g. cuda:90."""
    targets = []
    for item in os.environ.get("DYNO_TRITON_COMPILE_CHECK", "").split(","):
        item = item.strip()
        if not item:
            continue
        backend, _, arch = item.partition(":")
        if not arch.isdigit():
            raise ValueError(f"DYNO_TRITON_COMPILE_CHECK: {item!r} is not backend:arch "
                             "(e.g. cuda:90)")
        targets.append((backend, int(arch)))
    return targets


_checked_compiles = set()  # (kernel source digest, name, signature, blocks, target)


def check_gpu_compile(function, digest: str, config: dict, arguments, targets) -> None:
    """Compiles the compiled-mode twin `function` (a triton.JITFunction) for each target
    with the types of `arguments` and the blocks of `config`; raises
    TritonCompileCheckError with Triton's message if the compiler rejects it."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import mangle_type  # the JIT's own argument types

    names = function.arg_names
    blocks = {k: v for k, v in config.items() if k != "num_warps"}
    signature = dict(zip(names, (mangle_type(a) for a in arguments)))
    for name in blocks:
        signature[name] = "constexpr"
    for backend, arch in targets:
        key = (digest, function.__name__, tuple(signature.values()),
               tuple(sorted(config.items())), backend, arch)
        if key in _checked_compiles:
            continue
        # A warp is 32 lanes on NVIDIA GPUs; AMD's CDNA has 64.
        target = GPUTarget(backend, arch if backend == "cuda" else f"gfx{arch}",
                           32 if backend == "cuda" else 64)
        try:
            triton.compile(ASTSource(function, signature, blocks), target=target,
                           options={"num_warps": config.get("num_warps", 4)})
        except Exception as error:  # Triton's CompilationError, or a backend's failure
            raise TritonCompileCheckError(
                f"Triton's GPU compiler ({backend}:{arch}) rejects kernel "
                f"{function.__name__} (signature {signature}, blocks {config}): "
                f"{error}") from None
        _checked_compiles.add(key)


# Triton compiles a kernel at its first launch, so a graph's kernels compile one after
# another as its wrapper first reaches them. A kernel whose arguments are all pointers of
# dtypes the launch table names has its signature before any launch: TritonKernels with
# compile_threads > 1 hands those to a pool of that many threads to compile ahead (Triton's
# `warmup`, which keys its cache as the launch will for pointers 16-byte aligned, as the
# caching allocator's are; one at an unaligned offset compiles again at its launch), and
# a launcher's first launch waits for its own compile. Interpreted launches under
# DYNO_TRITON_COMPILE_CHECK have their GPU compile checks done ahead the same way;
# Triton's interpreter patches triton.language while it runs a kernel, so no compile may
# run beside it: an interpreted launch waits for every pending compile. A kernel with an
# integer argument (a size: its value specializes the compile) compiles at its first
# launch.

_compile_pools = {}  # threads -> ThreadPoolExecutor
_pending_compiles = set()  # submitted ahead and not done


def _forget_compile_pools():
    _compile_pools.clear()  # (a forked child has none of its parent's threads)
    _pending_compiles.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_compile_pools)


def _wait_for(futures) -> None:
    for future in futures:
        try:
            future.result()
        except Exception:
            pass  # (the launch compiles again, and reports what fails)


def _submit_compile(pool, work, *args):
    future = pool.submit(work, *args)
    _pending_compiles.add(future)
    future.add_done_callback(_pending_compiles.discard)
    return future


def _compile_pool(threads: int):
    from concurrent.futures import ThreadPoolExecutor

    with _lock:
        pool = _compile_pools.get(threads)
        if pool is None:
            pool = _compile_pools[threads] = ThreadPoolExecutor(
                threads, thread_name_prefix="dyno-triton-compile")
        return pool


def _mock_arguments(args):
    """Stand-ins for a launch's arguments (Triton's MockTensor of each pointer's dtype), or
    None when an argument is an integer or of an unknown dtype (or this Triton has no
    MockTensor)."""
    try:
        from triton.runtime.jit import MockTensor
    except ImportError:
        return None
    if not args or any(a in (None, "int") or not hasattr(torch, a) for a in args):
        return None
    return [MockTensor(getattr(torch, a)) for a in args]


def _load_compiled(kernel) -> None:
    """What a compiled kernel's first launch would also do: build its launcher (Triton 3.6
    compiles a C extension per signature) and load its binary. A load that fails is
    left to the launch, which then reports it (Triton sets the launcher first)."""
    load = getattr(kernel, "_init_handles", None)
    if load is None:
        return
    try:
        load()
    except Exception:
        if getattr(kernel, "module", None) is None and hasattr(kernel, "_run"):
            kernel._run = None
        raise


def _current_cuda_stream():
    """The current CUDA stream of the current device, as Triton's launcher takes it."""
    return _raw_stream(_current_device())


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_current_device = getattr(torch._C, "_cuda_getDevice", None)


def _direct_launch(compiled, grid_x: int, trailing=(), current_stream=None):
    """A launch of the compiled kernel `compiled` (a triton CompiledKernel, loaded) on
    `grid_x` programs that calls Triton's C launcher itself: `launch(*arguments)`, the
    `trailing` arguments (constexpr values) appended. Triton's own runner
    (`compiled[grid]`) looks up the device, the stream and three launch hooks through
    Triton's knobs on every launch; this looks up the stream alone. None where this
    Triton's CompiledKernel has no such launcher or a launch hook is set (a profiler
    such as Proton's needs Triton's own path)."""
    current_stream = current_stream or (_current_cuda_stream if _raw_stream else None)
    try:
        from triton import knobs
        # (a hook, or a chain of them: Triton 3.9 keeps an empty HookChain)
        hooked = any(hook is not None and getattr(hook, "calls", True)
                     for hook in (knobs.runtime.launch_enter_hook,
                                  knobs.runtime.launch_exit_hook))
        getattr(compiled, "_init_handles", lambda: None)()  # (loads the binary)
        run = compiled.run
        function, metadata = compiled.function, compiled.packed_metadata
    except Exception:  # another Triton: its runner, through compiled[grid]
        return None
    if hooked or current_stream is None:
        return None

    def launch(*arguments):
        run(grid_x, 1, 1, current_stream(), function, metadata, None, None, None,
            *arguments, *trailing)
    return launch


class Launcher:
    """Launches one kernel: grid from the index-space size, blocks from a configuration."""

    def __init__(self, function, entry: dict, interpret: bool, autotune: bool, key: str,
                 compile_check=None):
        self.function = function
        self.args = entry["args"]
        self.compiling = None  # the compile ahead of the first launch (a Future)
        # (compiled-mode twin of the kernel, source digest, targets): checks every new
        # signature with Triton's GPU compiler before interpreting it.
        self.compile_check = compile_check
        self.name = function.__name__ if hasattr(function, "__name__") else str(function)
        self.xnumel = entry["xnumel"]
        self.xnumel_args = entry.get("xnumel_args", [])  # dynamic shapes: size arguments
        self.configs = entry["configs"]
        self.interpret = interpret
        self.autotune = autotune and not interpret and len(self.configs) > 1
        self.key = key
        if interpret:
            # The interpreter runs programs one after another: the fewest programs win.
            self.config = max(self.configs, key=lambda c: c["XBLOCK"] * c.get("RBLOCK", 1))
        else:
            self.config = self.configs[0]
        self.tuned = not self.autotune
        self.fast = None if interpret else {}  # direct launchers of compiled kernels
        # A kernel whose launch-table entry fixes every argument's dtype and has no
        # integer argument always launches the same grid and specializes only on its
        # pointers' 16-byte alignment: once its chosen configuration has launched with
        # every pointer aligned, `aligned` launches it again with nothing but that check.
        self.static = (not self.xnumel_args and
                       all(a not in (None, "int") for a in self.args))
        self.aligned = None

    def compile_ahead(self, pool, device) -> bool:
        """Submits this kernel's compiles (or, interpreted, its GPU compile checks) to
        `pool`; False if its signature is only known at its launch."""
        arguments = _mock_arguments(self.args)
        if arguments is None or self.compiling is not None or (
                self.interpret and self.compile_check is None):
            return False
        if self.interpret:
            twin, digest, targets = self.compile_check
            self.compiling = _submit_compile(pool, check_gpu_compile, twin, digest,
                                             self.configs[0], arguments, targets)
            return True
        tuned = self._tuned_config() if self.autotune else None
        configs = [tuned] if tuned else self.configs if self.autotune else [self.config]
        # The device is resolved here: a thread's current device is its own (0).
        with torch.cuda.device(device):
            index = torch.cuda.current_device()
            self.function.device_caches[index]  # Triton's caches for it, made here once

        def compile_configs():
            failure = None
            with torch.cuda.device(index):
                for config in configs:
                    blocks = {k: v for k, v in config.items() if k != "num_warps"}
                    try:
                        _load_compiled(self.function.warmup(
                            *arguments, grid=(1,), **blocks, num_warps=config["num_warps"]))
                    except Exception as error:  # (e.g. a configuration out of resources)
                        failure = failure or error
            if failure is not None:
                raise failure

        self.compiling = _submit_compile(pool, compile_configs)
        return True

    def _launch(self, config, tensors):
        # Triton's JIT entry point costs tens of microseconds per launch in Python
        # (argument binding, specialization, cache lookup): after the first launch of a
        # configuration, launch the compiled kernel directly. The JIT specializes on the
        # pointers' 16-byte alignment and element types (the source names no type; an
        # i8 pointer may be int8 or uint8) and on integers
        # equal to 1 or divisible by 16, so those are part of the key, and so is the
        # grid (it varies with dynamic sizes).
        xnumel = self.xnumel
        for index in self.xnumel_args:
            xnumel *= tensors[index]
        grid = (triton.cdiv(xnumel, config["XBLOCK"]),)
        if grid[0] == 0:
            return  # no rows (a dynamic size of 0)
        key = None
        if self.fast is not None:
            key = (config["XBLOCK"], config.get("RBLOCK"), grid[0],
                   tuple((t == 1, t % 16 == 0) if isinstance(t, int)
                         else (t.dtype, t.data_ptr() % 16 == 0) for t in tensors))
            fast = self.fast.get(key)
            if fast is not None:
                # Triton 3.6's launcher takes the constexpr values too, in parameter order.
                constexprs = (config["XBLOCK"],) + (
                    (config["RBLOCK"],) if "RBLOCK" in config else ())
                try:
                    fast(*tensors, *constexprs)
                    return
                except TypeError:  # another Triton's launcher: keep the JIT entry point
                    self.fast = None
                    key = None
        if self.compile_check is not None:
            # The heuristic blocks, which a GPU launches by default (the interpreted
            # configuration too would double the compiles).
            twin, digest, targets = self.compile_check
            check_gpu_compile(twin, digest, self.configs[0], tensors, targets)
        blocks = {k: v for k, v in config.items() if k != "num_warps"}
        compiled = self.function[grid](*tensors, **blocks, num_warps=config["num_warps"])
        if key is not None and self.fast is not None and hasattr(compiled, "__getitem__"):
            try:
                fast = _direct_launch(compiled, grid[0]) or compiled[(grid[0], 1, 1)]
            except Exception:  # another Triton's API: keep the JIT entry point
                return
            self.fast[key] = fast
            if self.static and config is self.config and all(
                    aligned for _, aligned in key[3]):
                constexprs = (config["XBLOCK"],) + (
                    (config["RBLOCK"],) if "RBLOCK" in config else ())
                self.aligned = _direct_launch(compiled, grid[0], constexprs) or (
                    lambda *tensors: fast(*tensors, *constexprs))
    def _autotune_path(self) -> str:
        path = os.path.join(cache_dir(), "autotune", f"{self.key}.json")
        autotune_results_used.add(path)
        return path

    def _tuned_config(self):
        """The configuration an earlier tuning of this kernel chose (from the disk cache),
        or None."""
        path = self._autotune_path()
        try:
            with open(path) as file:
                config = json.load(file)["config"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        # (a result for another launch table is retuned)
        return config if config in self.configs else None

    def _tune(self, tensors):
        path = self._autotune_path()
        config = self._tuned_config()
        if config is not None:
            self.config, self.tuned = config, True
            return
        from triton.testing import do_bench

        timings = []
        for config in self.configs:
            try:
                timings.append((do_bench(lambda: self._launch(config, tensors)), config))
            except Exception:  # a configuration the device cannot run (e.g. registers)
                continue
        if timings:
            best_time, self.config = min(timings, key=lambda pair: pair[0])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temporary = f"{path}.{os.getpid()}.tmp"  # whole, or not at all
            with open(temporary, "w") as file:
                json.dump({"kernel": self.name, "config": self.config, "ms": best_time,
                           "timings": [[t, c] for t, c in timings]}, file)
            os.replace(temporary, path)
        self.tuned = True
        self.aligned = None  # (set while timing, for whichever configuration ran)

    def __call__(self, *tensors):
        aligned = self.aligned
        if aligned is not None:
            pointers = 0
            for tensor in tensors:
                pointers |= tensor.data_ptr()
            if not pointers & 15:
                aligned(*tensors)
                return
        if self.interpret:
            if _pending_compiles:
                _wait_for(list(_pending_compiles))
        elif self.compiling is not None:
            _wait_for([self.compiling])  # (first: another thread may launch it too)
            self.compiling = None
        if not self.tuned:
            self._tune(tensors)
        self._launch(self.config, tensors)


# Launchers by kernel: a kernel's source with its name replaced, its launch-table entry
# and how it runs. Weak: a launcher lives while a graph that launches it does.
_shared_launchers = weakref.WeakValueDictionary()


def _function_sources(source: bytes) -> dict:
    """Each top-level function's source text in a kernels file, by name."""
    text = source.decode()
    return {node.name: ast.get_source_segment(text, node)
            for node in ast.parse(text).body if isinstance(node, ast.FunctionDef)}


def _sharing_key(name: str, functions: dict, entry: dict, how: str):
    """What kernels equal up to their names share (`functions`: the file's functions'
    sources, by name): the kernel's source under a neutral name, the sources of the
    file's functions it calls (the prelude's helpers), its launch-table entry and `how`
    it runs; None for one that calls a function of its file by a name of its own (a
    scan's combiner, `_dyno_combine_<name>_*`)."""
    source = functions.get(name)
    if source is None or f"_{name}_" in source:
        return None
    parts = [re.sub(rf"\b{re.escape(name)}\b", "KERNEL", source),
             json.dumps(entry, sort_keys=True), how]
    parts += [functions[callee] for callee in sorted(functions)
              if callee != name and re.search(rf"\b{re.escape(callee)}\(", source)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class TritonKernels:
    """The kernels of one graph, by name, ready to launch on `device`. `shared`: how many
    of them launch through a launcher an earlier graph of this process made. With
    `compile_threads` > 1, the kernels whose signatures the launch table gives compile
    ahead of their first launch on that many threads (`compiled_ahead` of them)."""

    def __init__(self, kernels_path: str, device: torch.device, autotune: bool = False,
                 compile_threads: int = 1):
        interpret = torch.device(device).type == "cpu"
        with open(kernels_path, "rb") as file:
            source = file.read()
        self.module = import_kernels(kernels_path, source, interpret)
        check_launch_table(self.module)
        device_name = "interpreter" if interpret else torch.cuda.get_device_name(device)
        check_targets = compile_check_targets() if interpret else []
        twins = import_kernels(kernels_path, source, False) if check_targets else None
        digest = hashlib.sha256(source).hexdigest()[:24]
        functions = _function_sources(source)
        how = json.dumps([device_name, str(device), interpret, autotune, check_targets])
        self.launchers = {}
        own_launchers = []
        self.shared = 0
        for name, entry in self.module.KERNELS.items():
            sharing = _sharing_key(name, functions, entry, how)
            with _lock:
                launcher = _shared_launchers.get(sharing) if sharing else None
                if launcher is not None:
                    self.launchers[name] = launcher
                    # (Kernels of this graph that print alike share one too; only
                    # other graphs' are counted. Copies of two element types differ in
                    # their entries' args.)
                    self.shared += all(launcher is not own for own in own_launchers)
                    continue
                key = hashlib.sha256(source + name.encode() + json.dumps(entry).encode()
                                     + device_name.encode()).hexdigest()[:24]
                check = (getattr(twins, name), digest, check_targets) if twins else None
                launcher = Launcher(getattr(self.module, name), entry, interpret, autotune,
                                    key, compile_check=check)
                self.launchers[name] = launcher
                own_launchers.append(launcher)
                if sharing:
                    _shared_launchers[sharing] = launcher
        self.compiled_ahead = 0
        if compile_threads > 1:
            pool = _compile_pool(compile_threads)
            self.compiled_ahead = sum(launcher.compile_ahead(pool, device)
                                      for launcher in own_launchers)

    def __getitem__(self, name: str) -> Launcher:
        return self.launchers[name]


def autotune_requested(option) -> bool:
    return bool(option) or os.environ.get("DYNO_AUTOTUNE", "") not in ("", "0")


def _fresh_copy(tensor: torch.Tensor) -> torch.Tensor:
    """A copy of a CUDA graph's output that later replays leave alone, laid out as the
    output: a view that spans most of its memory but is not dense (a padded product's
    rows, PaddedProducts) is copied as its memory whole, one memcpy, where `clone` would
    copy it element by element into dense strides."""
    storage = tensor.untyped_storage()
    if tensor.is_contiguous() or tensor.dim() < 2 or tensor.stride()[-1] != 1 \
            or storage.nbytes() > 1.25 * tensor.numel() * tensor.element_size():
        return tensor.clone()
    return torch.empty((0,), dtype=tensor.dtype, device=tensor.device).set_(
        storage.clone(), tensor.storage_offset(), tensor.shape, tensor.stride())


def _clear_cublas_workspaces() -> None:
    """Drops PyTorch's cached cuBLAS workspaces (one per cuBLAS handle and stream).

    Every recording on the default capture stream used to take the workspace cached for
    that stream: one made while an earlier graph recorded, in that graph's private memory
    pool. Inductor's CUDA-graph trees clear the cache around each of their warm-ups and
    recordings; when the earlier graph had gone, the clear freed the last block of its
    pool, the memory went back to the device, and the later graph still wrote its
    products' workspace there: `CUDA error: an illegal memory access` in one process that
    ran Dyno's CUDA-graph programs beside Inductor's reduce-overhead compiles (issue 52,
    benchmarks/gpu_soak.py). Cleared before a recording, the workspace it records is
    made in its own pool, which lives as long as the graph; cleared after, no later
    recording takes it. Inductor does the same (cudagraph_trees.clear_cublas_manager)."""
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()


class Program:
    """A model exported for the Triton target (dyno.export_triton): call it with the
    model's inputs; parameters and buffers come from the export's weights file or from
    `bind(model)` / `bind(state_dict)`.

    A training step (dyno.export_triton_training) returns the loss and accumulates each
    parameter's gradient into the bound parameter's `.grad`, as `loss.backward()` does:
    bind the model itself (`bind(model)`), so that its optimizer sees the gradients.

    With CUDA graphs (by default on a CUDA device, unless the program synchronizes with
    the host) the first call records the whole program (kernels, library calls,
    allocations) in a CUDA graph and later calls replay it: the inputs are copied into the
    graph's own buffers and the outputs are returned as fresh copies, so no result is
    overwritten by a later call. Shapes are static, so one graph serves every call. The
    graph reads the bound parameters where they are: update them in place (optimizers
    do); binding again records a new graph."""

    def __init__(self, call, spec: dict, weights: dict, device, cuda_graphs: bool = False):
        self.call = call
        self.spec = spec
        self.device = torch.device(device)
        # Inputs whose reads want another layout (program.json's "layout").
        self.layouts = {entry["name"]: entry["layout"] for entry in spec["inputs"]
                        if "layout" in entry}
        self.bound = {name: self._laid_out(name, tensor.to(self.device))
                      for name, tensor in weights.items()}
        self.cuda_graphs = cuda_graphs and self.device.type == "cuda"
        self.graph = None

    def _laid_out(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        """`tensor`, one of the program's own copies, in the layout its reads want:
        convolution filters channels-last (program.json's "layout"), which a GPU
        convolution in bf16/f16 would otherwise copy to on every call."""
        if self.layouts.get(name) == "channels_last" and tensor.dim() == 4:
            return tensor.contiguous(memory_format=torch.channels_last)
        return tensor

    def bind(self, state) -> "Program":
        """Takes parameters and buffers by name: a module (its parameters and buffers
        themselves, as training needs) or a dict such as a model's state_dict()."""
        if isinstance(state, torch.nn.Module):
            module = state
            state = dict(module.named_buffers(remove_duplicate=False))
            state.update(module.named_parameters(remove_duplicate=False))  # tied: each name
        for entry in self.spec["inputs"]:
            if entry["kind"] not in ("user_input", "token") and entry["name"] in state:
                given = state[entry["name"]]
                bound = given.to(self.device)
                # A tensor bound as it is stays the caller's (updated in place, read in
                # place); only a copy made here is the program's to lay out.
                self.bound[entry["name"]] = bound if bound is given else self._laid_out(
                    entry["name"], bound)
        self.graph = None
        return self

    def _arguments(self, inputs):
        args = []
        for entry in self.spec["inputs"]:
            if entry["kind"] == "user_input":
                args.append(inputs[entry["index"]])
            elif entry["kind"] == "token":
                args.append(None)
            elif entry["name"] in self.bound:
                args.append(self.bound[entry["name"]])
            else:
                raise KeyError(f"dyno: no value for {entry['kind']} {entry['name']!r}; "
                               "export with its weights or call bind(model)")
        return args

    def _capture(self, inputs):
        self.static_inputs = [x.clone() for x in inputs]
        args = self._arguments(self.static_inputs)
        # Warm up on a side stream: compiles and tunes every kernel before recording.
        stream = torch.cuda.Stream(self.device)
        stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(stream):
            for _ in range(2):
                self.call(args)
        torch.cuda.current_stream(self.device).wait_stream(stream)
        self.graph = torch.cuda.CUDAGraph()
        # cuBLAS's workspace, kept per (handle, stream), is recorded into the graph: the
        # one this records must be made during the recording, in this graph's memory
        # pool, and none left behind for a later recording to take (see
        # _clear_cublas_workspaces).
        _clear_cublas_workspaces()
        try:
            with torch.cuda.graph(self.graph):
                self.static_outputs = self.call(args)
        finally:
            _clear_cublas_workspaces()
        # The graph recorded its own workspace (memory_planning): the warm-up's goes.
        workspace = getattr(self.call, "__globals__", {}).get("_workspace")
        if workspace is not None:
            workspace.clear()

    def __call__(self, *inputs):
        # The program's casts are its own (an export under autocast= holds CUDA
        # autocast's): an autocast region around the call must not recast the library
        # calls between its kernels, as AOTAutograd's compiled functions also ensure.
        # Nor does autograd record its library calls (a training step computes its
        # gradients itself; a matmul's `out=` into the workspace refuses parameters that
        # require grad where autograd records).
        with torch.no_grad():
            if torch.is_autocast_enabled("cuda") or torch.is_autocast_enabled("cpu"):
                with torch.autocast("cuda", enabled=False), torch.autocast("cpu", enabled=False):
                    return self._run(inputs)
            return self._run(inputs)  # (entering the regions costs microseconds per call)

    def _run(self, inputs):
        if self.cuda_graphs and self.graph is None:
            try:
                self._capture(inputs)
            except RuntimeError as error:
                # A library routine synchronized with the host after all (PyTorch refuses
                # the copy or the sync before CUDA records it; fp32 grouped GEMMs copy
                # their offsets to the host): the program runs without a graph.
                self.graph, self.cuda_graphs = None, False
                warnings.warn(f"dyno: this program cannot be recorded in a CUDA graph "
                              f"({str(error).splitlines()[0]}); it runs without one",
                              RuntimeWarning, stacklevel=3)
        if not self.cuda_graphs:
            outputs = self.call(self._arguments(inputs))
        else:
            for index, (static, value) in enumerate(zip(self.static_inputs, inputs)):
                if value.shape != static.shape or value.dtype != static.dtype:
                    # copy_ would broadcast a smaller input into the recorded buffer
                    raise ValueError(
                        f"dyno: input {index} is {tuple(value.shape)} {value.dtype}; this "
                        f"program was exported for {tuple(static.shape)} {static.dtype}")
                static.copy_(value)
            self.graph.replay()
            outputs = [None if o is None else _fresh_copy(o) for o in self.static_outputs]
        outputs = outputs[self.spec.get("output_tokens", 0):]
        if "training" in self.spec:
            return self._finish_step(outputs)
        return outputs[0] if self.spec["single_output"] else tuple(outputs)

    def _finish_step(self, outputs):
        """A training step's outputs: updated buffers, the loss, then the gradients."""
        training = self.spec["training"]
        updated = len(training["updated_buffers"])
        for name, value in zip(training["updated_buffers"], outputs[:updated]):
            self.bound[name].copy_(value)
        loss, gradients = outputs[updated], outputs[updated + 1:]
        with torch.no_grad():
            for name, gradient in zip(training["gradients"], gradients):
                if name is None or gradient is None:
                    continue
                parameter = self.bound[name]
                if parameter.grad is None:
                    parameter.grad = gradient
                else:
                    parameter.grad.add_(gradient)
        return loss


def _sibling_module(directory: str, name: str):
    """Imports `name`.py from `directory` (an export), or from Dyno's package."""
    try:
        from .. import host_runtime  # inside the dyno package

        return host_runtime
    except ImportError:
        path = os.path.join(directory, f"{name}.py")
        spec = importlib.util.spec_from_file_location(f"dyno_export_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


# Library routines that never read results on the host (sorts, scatter-adds, attention,
# grouped GEMMs, whose group offsets stay on the device): CUDA graphs capture them.
_GRAPH_SAFE_LIBRARY_CALLS = ("torch.ops.aten.sort.stable", "torch.ops.aten.scatter_add.default",
                             "torch.ops.aten.scaled_dot_product_attention.default",
                             "torch.ops.aten._grouped_mm.default")


def _synchronizing_library_calls(source: str) -> bool:
    """Whether the wrapper calls a library routine that may synchronize with the host."""
    return any(callee not in _GRAPH_SAFE_LIBRARY_CALLS
               for callee in re.findall(r"_library_call\(([\w.]+),", source))


def load(directory: str, device="cuda", autotune: bool = False,
         cuda_graphs=None) -> Program:
    """Loads a program written by dyno.export_triton: needs only torch and triton.
    `cuda_graphs=None` records a CUDA graph on CUDA devices when the program allows one;
    True asks for it (with a warning where it cannot be), False turns it off."""
    with open(os.path.join(directory, "program.json")) as file:
        spec = json.load(file)
    host_runtime = _sibling_module(directory, "host_runtime")
    kernels = TritonKernels(os.path.join(directory, "kernels.py"), device,
                            autotune=autotune_requested(autotune),
                            compile_threads=host_runtime.compile_threads())
    namespace = host_runtime.wrapper_globals(kernels, lambda threads: None, device)
    with open(os.path.join(directory, "wrapper.py")) as file:
        source = file.read()
    exec(compile(source, os.path.join(directory, "wrapper.py"), "exec"), namespace)
    weights_path = os.path.join(directory, "weights.pt")
    weights = torch.load(weights_path, map_location="cpu") if os.path.exists(weights_path) else {}
    if cuda_graphs is not False and _synchronizing_library_calls(source):
        # LAPACK's error checks read their info on the host (a sync, which CUDA graph
        # capture forbids): such a program runs without a graph.
        if cuda_graphs:
            warnings.warn("dyno: this program calls library routines (linear algebra, "
                          "FFTs) that synchronize with the host; it runs without CUDA "
                          "graphs", RuntimeWarning, stacklevel=2)
        cuda_graphs = False
    return Program(namespace["call"], spec, weights, device, cuda_graphs=cuda_graphs is not False)
