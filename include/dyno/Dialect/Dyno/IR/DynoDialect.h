//===- DynoDialect.h - Dyno dialect -----------------------------*- C++ -*-===//
#ifndef DYNO_DIALECT_DYNO_IR_DYNODIALECT_H
#define DYNO_DIALECT_DYNO_IR_DYNODIALECT_H

#include "mlir/IR/Dialect.h"

#include "dyno/Dialect/Dyno/IR/DynoOpsDialect.h.inc"

#endif // DYNO_DIALECT_DYNO_IR_DYNODIALECT_H
