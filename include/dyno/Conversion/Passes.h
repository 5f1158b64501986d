//===- Passes.h - Dyno conversion passes ------------------------*- C++ -*-===//
#ifndef DYNO_CONVERSION_PASSES_H
#define DYNO_CONVERSION_PASSES_H

#include "dyno/Dialect/Dyno/IR/DynoDialect.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dyno {

#define GEN_PASS_DECL
#include "dyno/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyno/Conversion/Passes.h.inc"

} // namespace mlir::dyno

#endif // DYNO_CONVERSION_PASSES_H
