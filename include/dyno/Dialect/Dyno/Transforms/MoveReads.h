//===- MoveReads.h - Reads composed through moves and reshapes --*- C++ -*-===//
//
// A generic that reads an out-of-order move (a rotation's copy, Swin's window reversal)
// through an expand_shape reads the move's input instead, with the move's map composed
// after the expansion's linearization. Used by dyno-fuse-elementwise (the Triton
// target's rotations as reads) and, inside formed kernels, by
// dyno-expand-loops-through-reshapes, where a bf16 copy's explicit casts have become an
// exact round trip only after the library calls took their matrix products' roundings.
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
