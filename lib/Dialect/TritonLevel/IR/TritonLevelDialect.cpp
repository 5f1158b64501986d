//===- TritonLevelDialect.cpp - Dyno's Triton-level dialect -----*- C++ -*-===//
#include "dyno/Dialect/TritonLevel/IR/TritonLevelDialect.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dyno::tl;

#include "dyno/Dialect/TritonLevel/IR/TritonLevelOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOpsTypes.cpp.inc"

void TLDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.cpp.inc"
      >();
}
