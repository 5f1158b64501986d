/*===- Dyno.h - C API for Dyno's registrations ---------------------*- C -*-===*/
#ifndef DYNO_C_DYNO_H
#define DYNO_C_DYNO_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Adds the Dyno dialect, every upstream dialect, extension and LLVM IR translation.
MLIR_CAPI_EXPORTED void dynoRegisterAllDialects(MlirDialectRegistry registry);

/// Registers Dyno's passes and named pipelines. Upstream passes are registered by
/// upstream's own module (_mlirRegisterEverything); registering them twice is fatal.
MLIR_CAPI_EXPORTED void dynoRegisterPasses(void);

#ifdef __cplusplus
}
#endif

#endif // DYNO_C_DYNO_H
