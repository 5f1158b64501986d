//===- MoveReads.h - Reads composed through moves and reshapes --*- C++ -*-===//
//
// Reads composed through moves and reshapes, where upstream's reshape propagation stops
// at a map that is not a projected permutation (a rotation's mod map). A generic reading
// an out-of-order move through an expand_shape reads the move's input
// (dyno-fuse-elementwise, the Triton target's rotations as reads); a generic reading a
// collapse_shape through such a map reads the collapse's source, each index split
// (dyno-expand-loops-through-reshapes, inside formed kernels, where a bf16 copy's
// explicit casts have become an exact round trip once the library calls took their
// matrix products' roundings: `copiesItsInput`).
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_MOVEREADS_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_MOVEREADS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dyno {

/// Whether `op` only copies its one input, in any order: all parallel, its body yields
/// the input, or the input widened and narrowed back to its own type (exact for bf16
/// and f16).
bool copiesItsInput(linalg::GenericOp op);

/// Adds the pattern that makes all-parallel generics read out-of-order moves' inputs
/// through static expand_shapes (ReadMoveThroughExpansion).
void populateReadMovesThroughExpansionPatterns(RewritePatternSet &patterns);

/// Adds the pattern that makes all-parallel generics reading a static collapse_shape
/// through a map that is not a projected permutation (a rotation's) read its source,
/// each collapsed index split by floordiv and mod (ReadThroughCollapse).
void populateReadsThroughCollapsePatterns(RewritePatternSet &patterns);

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_MOVEREADS_H
