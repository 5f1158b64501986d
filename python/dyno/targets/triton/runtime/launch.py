"""A kernel's launcher: the grid from its index-space size, the blocks from a
configuration (autotuned where asked), and after the first launch Triton's C launcher
called directly."""
import re

import torch
import triton

from .autotune import tune, tuned_config
from .compile_check import check_gpu_compile
from .compile_pool import load_compiled, mock_arguments, pending_compiles, submit_compile, wait_for


# Every device assertion of a kernel (an index check, TranslateToTriton.cpp) starts its
# message with this: an interpreted kernel's failed check is told from other errors.
CHECK_MESSAGE_PREFIX = "dyno check failed: "

# Launch options of every kernel: a kernel that asserts is written
# `@triton.jit(debug=True)`, which keeps tl.device_assert; Triton's integer overflow
# checks, which debug mode (or TRITON_DEBUG=1) also turns on, stay off (Inductor
# compiles its kernels the same way).
LAUNCH_OPTIONS = {"sanitize_overflow": False}


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
                 compile_check=None, check_failed=None):
        self.function = function
        self.check_failed = check_failed
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
        arguments = mock_arguments(self.args)
        if arguments is None or self.compiling is not None or (
                self.interpret and self.compile_check is None):
            return False
        if self.interpret:
            twin, digest, targets = self.compile_check
            self.compiling = submit_compile(pool, check_gpu_compile, twin, digest,
                                             self.configs[0], arguments, targets)
            return True
        tuned = tuned_config(self.key, self.configs) if self.autotune else None
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
                        load_compiled(self.function.warmup(
                            *arguments, grid=(1,), **blocks, num_warps=config["num_warps"],
                            **LAUNCH_OPTIONS))
                    except Exception as error:  # (e.g. a configuration out of resources)
                        failure = failure or error
            if failure is not None:
                raise failure

        self.compiling = submit_compile(pool, compile_configs)
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
        compiled = self.function[grid](*tensors, **blocks, num_warps=config["num_warps"],
                                       **LAUNCH_OPTIONS)
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

    def _tune(self, tensors):
        """Keeps the fastest configuration on these tensors (or an earlier tuning's)."""
        self.config = tune(lambda config: self._launch(config, tensors), self.configs,
                           self.key, self.name) or self.config
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
            if pending_compiles:
                wait_for(list(pending_compiles))
        elif self.compiling is not None:
            wait_for([self.compiling])  # (first: another thread may launch it too)
            self.compiling = None
        if not self.tuned:
            self._tune(tensors)
        try:
            self._launch(self.config, tensors)
        except Exception as error:
            # A failed index check: on a GPU a device-side assertion, as eager's;
            # interpreted, the host runtime's CheckFailed (the call runs eagerly and
            # raises eager's error). Triton's interpreter wraps it in an InterpreterError.
            if not self.interpret or self.check_failed is None:
                raise
            match = re.search(re.escape(CHECK_MESSAGE_PREFIX) + r"[^'\"\n]*", str(error))
            if match is None:
                raise
            raise self.check_failed(f"{self.name}: {match.group(0)}") from error
