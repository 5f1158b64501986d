//===- ReductionKinds.h - Reductions the Triton target computes -*- C++ -*-===//
#ifndef DYNO_LIB_CONVERSION_KERNELSTOTRITONLEVEL_REDUCTIONKINDS_H
#define DYNO_LIB_CONVERSION_KERNELSTOTRITONLEVEL_REDUCTIONKINDS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::dyno {

/// The kinds of reduction Triton computes, by the arith op that combines two partial
/// results; with the identity each masked lane contributes.
struct ReductionKind {
  StringRef name;
  TypedAttr identity;
};

/// The reduction `combiner` (an arith op on `element`) computes, if Triton has it.
std::optional<ReductionKind> reductionKindOf(Operation *combiner, Type element);

} // namespace mlir::dyno

#endif // DYNO_LIB_CONVERSION_KERNELSTOTRITONLEVEL_REDUCTIONKINDS_H
