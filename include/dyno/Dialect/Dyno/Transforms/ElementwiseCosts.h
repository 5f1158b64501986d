//===- ElementwiseCosts.h - What fusion recomputes in its consumers -*- C++ -*-===//
//
// Shared by dyno-fuse-elementwise, which recomputes cheap producers in every consumer
// but computes a transcendental one once, and dyno-merge-sibling-generics, which merges
// the generics fusion leaves in memory anyway.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_ELEMENTWISECOSTS_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_ELEMENTWISECOSTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::dyno {

/// Whether `op`'s body calls a transcendental function (tens of instructions each, not
/// abs, copysign or fma): such a producer with several users is computed once, in its
/// own kernel, rather than in each consumer.
bool hasTranscendental(linalg::GenericOp op);

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_ELEMENTWISECOSTS_H
