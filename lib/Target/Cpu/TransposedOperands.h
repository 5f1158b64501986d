//===- TransposedOperands.h - Operands a loop nest walks across -*- C++ -*-===//
//
// Shared by dyno-tile-kernels (row blocks of at least a cache line for a transposing
// root) and dyno-block-transposes (cache-line blocks on buffers): both look for an
// operand whose contiguous dimension is not indexed by the innermost loop.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_LIB_TARGET_CPU_TRANSPOSEDOPERANDS_H
#define DYNO_LIB_TARGET_CPU_TRANSPOSEDOPERANDS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::dyno {

/// Bytes of a cache line, the unit a transposing loop nest is blocked in.
inline constexpr int64_t kCacheLineBytes = 64;

/// Elements of `elementType` in a cache line (at least 1).
int64_t elementsPerCacheLine(Type elementType);

/// The loop that walks `operand` of `op` along its contiguous (last) dimension, where
/// that loop is not `op`'s innermost one and the innermost loop indexes another
/// dimension of the operand: a transpose reads (or writes) it across its rows. Tensors
/// of rank >= 2 and memrefs whose last dimension has unit stride, of integer or float
/// elements; none otherwise.
std::optional<unsigned> transposedLoop(linalg::LinalgOp op, OpOperand &operand);

} // namespace mlir::dyno

#endif // DYNO_LIB_TARGET_CPU_TRANSPOSEDOPERANDS_H
