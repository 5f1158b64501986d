//===- Passes.h - Dyno transformation passes --------------------*- C++ -*-===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_PASSES_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_PASSES_H

#include "dyno/Dialect/Dyno/IR/DynoDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dyno {

/// A unit attribute on `math.exp`: its argument is at most 0 or NaN (a softmax's
/// `exp(x - max)`; set by dyno-relax-softmax-maximum, used by dyno-approximate-math).
inline constexpr llvm::StringLiteral kNonPositiveArgumentAttr = "dyno.nonpositive_argument";

#define GEN_PASS_DECL
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_PASSES_H
