//===- Dyno.cpp - C API for Dyno's registrations ----------------*- C++ -*-===//
#include "dyno-c/Dyno.h"

#include "dyno/InitAll.h"
#include "mlir/CAPI/IR.h"

void dynoRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::dyno::registerAllDialects(*unwrap(registry));
}

void dynoRegisterPasses(void) {
  static bool registered = [] {
    mlir::dyno::registerDynoPasses();
    mlir::dyno::registerDynoCpuTargetPasses();
    mlir::dyno::registerDynoTritonTargetPasses();
    mlir::dyno::registerDynoPipelines();
    return true;
  }();
  (void)registered;
}
