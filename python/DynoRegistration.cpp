//===- DynoRegistration.cpp - Dyno's Python site initializer ----*- C++ -*-===//
//
// Loaded by dyno._mlir_libs as `_site_initialize_0`: adds Dyno's dialects (dyno and the
// Triton-level tl), every upstream dialect and extension and the LLVM IR translations to
// each context, and registers Dyno's passes (kernel formation's and each target's) and
// pipelines so that PassManager.parse("builtin.module(dyno-cpu-pipeline)") works
// (upstream passes are registered by the upstream bindings themselves).
//
//===----------------------------------------------------------------------===//
#include "dyno-c/Dyno.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

NB_MODULE(_site_initialize_0, m) {
  m.doc() = "Dyno dialect, pass and pipeline registration";
  m.def("register_dialects",
        [](MlirDialectRegistry registry) { dynoRegisterAllDialects(registry); });
  dynoRegisterPasses();
}
