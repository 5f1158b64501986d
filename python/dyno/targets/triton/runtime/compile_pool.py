"""Triton compiles a kernel at its first launch, so a graph's kernels compile one after
another as its wrapper first reaches them. A kernel whose arguments are all pointers of
dtypes the launch table names has its signature before any launch: TritonKernels with
compile_threads > 1 hands those to a pool of that many threads to compile ahead (Triton's
`warmup`, which keys its cache as the launch will for pointers 16-byte aligned, as the
caching allocator's are; one at an unaligned offset compiles again at its launch), and
a launcher's first launch waits for its own compile. Interpreted launches under
DYNO_TRITON_COMPILE_CHECK have their GPU compile checks done ahead the same way;
Triton's interpreter patches triton.language while it runs a kernel, so no compile may
run beside it: an interpreted launch waits for every pending compile. A kernel with an
integer argument (a size: its value specializes the compile) compiles at its first
launch."""
import os
import threading

import torch

_lock = threading.Lock()
_compile_pools = {}  # threads -> ThreadPoolExecutor
pending_compiles = set()  # submitted ahead and not done


def _forget_compile_pools():
    _compile_pools.clear()  # (a forked child has none of its parent's threads)
    pending_compiles.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_compile_pools)


def wait_for(futures) -> None:
    for future in futures:
        try:
            future.result()
        except Exception:
            pass  # (the launch compiles again, and reports what fails)


def submit_compile(pool, work, *args):
    future = pool.submit(work, *args)
    pending_compiles.add(future)
    future.add_done_callback(pending_compiles.discard)
    return future


def compile_pool(threads: int):
    from concurrent.futures import ThreadPoolExecutor

    with _lock:
        pool = _compile_pools.get(threads)
        if pool is None:
            pool = _compile_pools[threads] = ThreadPoolExecutor(
                threads, thread_name_prefix="dyno-triton-compile")
        return pool


def mock_arguments(args):
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


def load_compiled(kernel) -> None:
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
