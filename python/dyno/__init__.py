"""Dyno: an MLIR compiler for PyTorch.

Installing the package registers the ``mlir`` backend with TorchDynamo, so
``torch.compile(model, backend="mlir")`` works without importing ``dyno``. This module is
the public API; it stays light (no MLIR or torch-mlir import) so that the backend lookup
is cheap.
"""
from .counters import reset_stats, stats
from .driver.debug import register_logs as _register_logs

_register_logs()  # TORCH_LOGS="dyno" / "+dyno": each graph's compile, its stages and times

__all__ = ["stats", "reset_stats", "export_triton", "export_triton_training",
           "save_cache_artifacts", "load_cache_artifacts", "__version__"]


def export_triton(model, example_inputs, directory, save_weights=True, autocast=None,
                  options=None):
    """Compiles `model` for the Triton target into `directory`, runnable with only torch
    and triton (see dyno.export); `autocast=torch.float16|torch.bfloat16` compiles what
    the model computes under `torch.autocast("cuda", dtype=autocast)`; `options` are
    torch.compile's for backend="mlir"."""
    from .export import export_triton as export

    return export(model, example_inputs, directory, save_weights=save_weights,
                  autocast=autocast, options=options)


def export_triton_training(model, loss_fn, example_inputs, directory, save_weights=True):
    """Compiles a training step of `model` (forward, `loss_fn(output, *inputs)`, backward)
    for the Triton target into `directory`, runnable with only torch and triton (see
    dyno.export)."""
    from .export import export_triton_training as export

    return export(model, loss_fn, example_inputs, directory, save_weights=save_weights)


def save_cache_artifacts():
    """The compile-cache entries this process compiled or loaded (CPU and Triton graphs),
    as bytes for load_cache_artifacts on another machine with the same Dyno build, torch
    and torch-mlir (and CPU model for CPU code, triton for Triton code); None when there
    are none. Like torch.compiler.save_cache_artifacts."""
    from .driver.compile_cache import save_artifacts

    return save_artifacts()


def load_cache_artifacts(data: bytes) -> int:
    """Installs what save_cache_artifacts returned into this machine's compile cache
    (DYNO_CACHE_DIR); returns the number of entries added. Later compiles of the same
    graphs load them instead of compiling, so the bytes must come from a source you trust
    (they hold code, as a wheel does). Raises ValueError, installing nothing, for bytes
    that are not such an archive or whose entries are not whole (their digests catch
    damage, not tampering)."""
    from .driver.compile_cache import load_artifacts

    return load_artifacts(data)


__version__ = "0.1.0"
