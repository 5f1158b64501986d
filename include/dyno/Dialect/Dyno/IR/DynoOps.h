//===- DynoOps.h - Dyno operations ------------------------------*- C++ -*-===//
#ifndef DYNO_DIALECT_DYNO_IR_DYNOOPS_H
#define DYNO_DIALECT_DYNO_IR_DYNOOPS_H

#include "dyno/Dialect/Dyno/IR/DynoDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dyno/Dialect/Dyno/IR/DynoOps.h.inc"

namespace mlir::dyno {
/// The nested module holding the kernels that `dyno.launch` ops call
/// (`@kernels::@kernel_0`), made by dyno-form-kernels.
constexpr llvm::StringLiteral kKernelsModuleName = "kernels";
} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_IR_DYNOOPS_H
