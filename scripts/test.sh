#!/usr/bin/env bash
# Runs Dyno's tests: the lit/FileCheck regression suite (dyno-opt and Python lit tests),
# then the end-to-end pytest suite (compiled vs eager). Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${DYNO_BUILD_DIR:-build}
export PATH="$PWD/.venv/bin:$PATH"

cmake --build "$BUILD_DIR" --target dyno-opt dyno-translate DynoPythonModules
lit -sv "$BUILD_DIR/test"
# Every Triton kernel the e2e suite interprets is first compiled by Triton's GPU compiler
# for an H100 (sm_90; no GPU needed): the interpreter accepts kernels the compiler rejects.
export DYNO_TRITON_COMPILE_CHECK=${DYNO_TRITON_COMPILE_CHECK-cuda:90}
# One worker per core: the tests are mostly single-threaded compiles (import, dyno-opt,
# LLVM, the Triton interpreter), so two cores halve the time. --durations names the
# slowest tests in the log. Tests marked long (Triton's interpreter running scans element
# by element for minutes; e2e/pytest.ini) are left out: `bash scripts/test.sh -m long` runs
# them alone (a later -m replaces this one).
python -m pytest -q -n auto --dist worksteal --durations=15 e2e -m "not long" "$@"
