//===- Passes.h - The Triton target's passes --------------------*- C++ -*-===//
#ifndef DYNO_TARGET_TRITON_PASSES_H
#define DYNO_TARGET_TRITON_PASSES_H

#include "dyno/Dialect/Dyno/IR/DynoDialect.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "dyno/Pipelines/Pipelines.h"

namespace mlir::dyno {

#define GEN_PASS_DECL
#include "dyno/Target/Triton/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyno/Target/Triton/Passes.h.inc"

/// Lowers the nested `module @kernels` to Triton-level block programs (`tl` dialect),
/// ready for dyno-write-triton (or `dyno-translate --mlir-to-triton`).
void buildTritonLoweringPipeline(OpPassManager &pm,
                                 const LoweringPipelineOptions &options = {});

} // namespace mlir::dyno

#endif // DYNO_TARGET_TRITON_PASSES_H
