//===- DynoDialect.cpp - Dyno dialect ---------------------------*- C++ -*-===//
#include "dyno/Dialect/Dyno/IR/DynoDialect.h"
#include "dyno/Dialect/Dyno/IR/DynoOps.h"

using namespace mlir;
using namespace mlir::dyno;

#include "dyno/Dialect/Dyno/IR/DynoOpsDialect.cpp.inc"

void DynoDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dyno/Dialect/Dyno/IR/DynoOps.cpp.inc"
      >();
}
