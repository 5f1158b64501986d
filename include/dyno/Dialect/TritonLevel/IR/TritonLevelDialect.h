//===- TritonLevelDialect.h - Dyno's Triton-level dialect -------*- C++ -*-===//
#ifndef DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELDIALECT_H
#define DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dyno/Dialect/TritonLevel/IR/TritonLevelOpsDialect.h.inc"

#endif // DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELDIALECT_H
