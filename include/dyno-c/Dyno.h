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

/// Calls `callback` once per operation of `module`'s body that defines a symbol: its
/// name, its size (operations, itself and nested ones), whether it is a function
/// declaration, and the symbols it (or what it nests) refers to, each once, by their
/// root reference (SymbolTable::getSymbolUses). What the CPU JIT splits a module's
/// kernels into parts by, instead of its printed text.
typedef void (*DynoSymbolCallback)(MlirStringRef name, intptr_t numOperations,
                                   bool isDeclaration, intptr_t numUses,
                                   const MlirStringRef *uses, void *userData);
MLIR_CAPI_EXPORTED void dynoWalkSymbolUses(MlirModule module, DynoSymbolCallback callback,
                                           void *userData);

#ifdef __cplusplus
}
#endif

#endif // DYNO_C_DYNO_H
