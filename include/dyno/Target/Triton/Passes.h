//===- Passes.h - The Triton target's passes --------------------*- C++ -*-===//
#ifndef DYNO_TARGET_TRITON_PASSES_H
#define DYNO_TARGET_TRITON_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dyno {

#define GEN_PASS_DECL
#include "dyno/Target/Triton/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyno/Target/Triton/Passes.h.inc"

} // namespace mlir::dyno

#endif // DYNO_TARGET_TRITON_PASSES_H
