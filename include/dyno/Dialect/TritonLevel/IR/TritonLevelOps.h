//===- TritonLevelOps.h - Dyno's Triton-level ops ---------------*- C++ -*-===//
#ifndef DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELOPS_H
#define DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELOPS_H

#include "dyno/Dialect/TritonLevel/IR/TritonLevelDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_TYPEDEF_CLASSES
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h.inc"

namespace mlir::dyno::tl {
/// Names of the kernel attributes (see the dialect's description).
inline constexpr llvm::StringLiteral kXNumelAttr = "tl.xnumel";
inline constexpr llvm::StringLiteral kRNumelAttr = "tl.rnumel";
/// Dynamic shapes: the arguments (sizes) whose product with `tl.xnumel` is the number of
/// rows, from which the runtime computes the grid.
inline constexpr llvm::StringLiteral kXNumelArgsAttr = "tl.xnumel_args";
inline constexpr llvm::StringLiteral kConfigsAttr = "tl.configs";
inline constexpr llvm::StringLiteral kIndexBitsAttr = "tl.index_bits";

/// Whether `name` is a block size of the kernel enclosing `op` (a key of the first
/// entry of its `tl.configs`, other than `num_warps`).
LogicalResult verifyBlockName(Operation *op, StringRef name);
} // namespace mlir::dyno::tl

#endif // DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELOPS_H
