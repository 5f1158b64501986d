"""Installs the `dyno` package that CMake assembles in build/python_packages/dyno.

Build first (scripts/setup.sh does both). The entry point registers the `mlir` backend
with TorchDynamo, so `torch.compile(model, backend="mlir")` needs no `import dyno`.
"""
import os

from setuptools import find_packages, setup

BUILD_DIR = os.environ.get("DYNO_BUILD_DIR", "build")
PACKAGE_ROOT = os.path.join(BUILD_DIR, "python_packages", "dyno")

if not os.path.isdir(os.path.join(PACKAGE_ROOT, "dyno")):
    raise SystemExit(f"{PACKAGE_ROOT}/dyno not found: build Dyno first (scripts/setup.sh)")

setup(
    name="dyno",
    version="0.1.0",
    description="An MLIR compiler for PyTorch (torch.compile backend 'mlir')",
    package_dir={"": PACKAGE_ROOT},
    packages=find_packages(where=PACKAGE_ROOT),
    package_data={"dyno": ["_mlir_libs/*.so*", "_mlir_libs/*.pyi", "_bin/*"]},
    python_requires=">=3.10",
    entry_points={"torch_dynamo_backends": ["mlir = dyno.backend:mlir"]},
)
