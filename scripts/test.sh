#!/usr/bin/env bash
# Runs Dyno's tests: the lit/FileCheck regression suite (dyno-opt and Python lit tests),
# then the end-to-end pytest suite (compiled vs eager). Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${DYNO_BUILD_DIR:-build}
export PATH="$PWD/.venv/bin:$PATH"

cmake --build "$BUILD_DIR" --target dyno-opt dyno-translate DynoPythonModules
lit -sv "$BUILD_DIR/test"
# One worker per core: the tests are mostly single-threaded compiles (import, dyno-opt,
# LLVM, the Triton interpreter), so two cores halve the time. --durations names the
# slowest tests in the log.
python -m pytest -q -n auto --dist worksteal --durations=15 e2e "$@"
