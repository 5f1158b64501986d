"""Triton's GPU compiler checks the kernels the interpreter runs. The interpreter accepts
kernels that the GPU compiler rejects (e.g. `tl.erf` of a bf16 block), and Triton
compiles for a GPU target without a GPU (PTX and cubin through its bundled ptxas). With
DYNO_TRITON_COMPILE_CHECK=cuda:90 (or a list, "cuda:80,cuda:90"), every interpreted
launch first compiles the kernel for those targets with the launch's argument types and
the heuristic block sizes; a rejection raises TritonCompileCheckError naming the kernel."""
import os

import triton


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
            # (launch.py's LAUNCH_OPTIONS; a kernel that asserts compiles in debug mode)
            options = {"num_warps": config.get("num_warps", 4), "sanitize_overflow": False}
            if getattr(function, "debug", False):
                options["debug"] = True
            triton.compile(ASTSource(function, signature, blocks), target=target,
                           options=options)
        except Exception as error:  # Triton's CompilationError, or a backend's failure
            raise TritonCompileCheckError(
                f"Triton's GPU compiler ({backend}:{arch}) rejects kernel "
                f"{function.__name__} (signature {signature}, blocks {config}): "
                f"{error}") from None
        _checked_compiles.add(key)
