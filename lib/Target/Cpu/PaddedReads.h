//===- PaddedReads.h - An element of a constant pad, read in bounds -*- C++ -*-===//
//
// Shared by dyno-pads-as-generics (a pad as a generic over the padded shape) and
// dyno-window-taps-as-reads (a pooling window's taps computed through their pad): both
// build, at an index of the padded tensor, the source's element where the index falls
// inside it and the padding value elsewhere, in a generic computing each element from
// its indices.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_LIB_TARGET_CPU_PADDEDREADS_H
#define DYNO_LIB_TARGET_CPU_PADDEDREADS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::dyno {

/// Whether `pad`'s value is one value and its shapes and low padding are static, the
/// low padding non-negative and no source dimension empty (an element read inside one
/// could not be): what paddedElement takes.
bool hasStaticConstantPadding(tensor::PadOp pad);

/// The element of `pad`'s result at `indices`: `readSource(builder, location, source
/// indices)` (each index less the low padding) where every index is inside the source,
/// in an `scf.if` (so that a read contiguous along the innermost dimension vectorizes
/// as a masked load), and the padding value elsewhere; the read alone where no
/// dimension is padded. `pad` must satisfy hasStaticConstantPadding.
Value paddedElement(
    OpBuilder &builder, Location loc, tensor::PadOp pad, ValueRange indices,
    function_ref<Value(OpBuilder &, Location, ValueRange)> readSource);

/// A parallel generic of `type` (into a tensor.empty, no inputs) whose element at each
/// index is `element(builder, location, indices)`: a pad's or a pooling tap's elements
/// computed where they are.
linalg::GenericOp generateElements(
    OpBuilder &builder, Location loc, RankedTensorType type,
    function_ref<Value(OpBuilder &, Location, ValueRange)> element);

} // namespace mlir::dyno

#endif // DYNO_LIB_TARGET_CPU_PADDEDREADS_H
