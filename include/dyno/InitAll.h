//===- InitAll.h - Everything Dyno registers --------------------*- C++ -*-===//
//
// The one registration point used by dyno-opt and by the Python package alike, so that
// every pipeline the compiler runs can be replayed from the command line.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_INITALL_H
#define DYNO_INITALL_H

#include "dyno/Dialect/Dyno/IR/DynoDialect.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelDialect.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"
#include "dyno/Pipelines/Pipelines.h"
#include "dyno/Target/Cpu/Passes.h"
#include "dyno/Target/Triton/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace mlir::dyno {

inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<DynoDialect, tl::TLDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

inline void registerAllPasses() {
  mlir::registerAllPasses();
  registerDynoPasses();
  registerDynoCpuTargetPasses();
  registerDynoTritonTargetPasses();
  registerDynoPipelines();
}

} // namespace mlir::dyno

#endif // DYNO_INITALL_H
