//===- Passes.h - The CPU target's passes -----------------------*- C++ -*-===//
#ifndef DYNO_TARGET_CPU_PASSES_H
#define DYNO_TARGET_CPU_PASSES_H

#include "dyno/Dialect/Dyno/Transforms/Passes.h"
#include "dyno/Pipelines/Pipelines.h"

namespace mlir::dyno {

#define GEN_PASS_DECL
#include "dyno/Target/Cpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyno/Target/Cpu/Passes.h.inc"

/// Lowers the nested `module @kernels` to the LLVM dialect with OpenMP parallel loops;
/// kernels take one bare pointer per argument and result.
void buildCpuLoweringPipeline(OpPassManager &pm,
                              const LoweringPipelineOptions &options = {});

} // namespace mlir::dyno

#endif // DYNO_TARGET_CPU_PASSES_H
