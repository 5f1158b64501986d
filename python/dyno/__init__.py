"""Dyno: an MLIR compiler for PyTorch.

Installing the package registers the ``mlir`` backend with TorchDynamo, so
``torch.compile(model, backend="mlir")`` works without importing ``dyno``. This module is
the public API; it stays light (no MLIR or torch-mlir import) so that the backend lookup
is cheap.
"""
from .counters import reset_stats, stats

__all__ = ["stats", "reset_stats", "__version__"]
__version__ = "0.1.0"
