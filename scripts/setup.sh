#!/usr/bin/env bash
# Sets Dyno up on a fresh machine (Debian 12, Python 3.11): a virtual environment in .venv
# with the pinned dependencies (torch, torch-mlir, the prebuilt LLVM/MLIR kit, ...), then
# builds dyno-opt and Dyno's MLIR Python package and installs the `dyno` package, which
# registers torch.compile's `mlir` backend. No LLVM is built from source.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
BUILD_DIR=${DYNO_BUILD_DIR:-build}

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r externals/requirements.txt

export PATH="$PWD/.venv/bin:$PATH"
cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
  $(.venv/bin/python externals/llvm-kit/find_kit.py)
cmake --build "$BUILD_DIR" --target dyno-opt dyno-translate DynoPythonModules

DYNO_BUILD_DIR="$BUILD_DIR" .venv/bin/python -m pip install -q --no-build-isolation --no-deps -e .
.venv/bin/python -c "import dyno, torch; print('dyno', dyno.__version__, 'with torch', torch.__version__, 'is ready')"
