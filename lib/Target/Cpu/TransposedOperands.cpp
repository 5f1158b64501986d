//===- TransposedOperands.cpp - Operands a loop nest walks across -*- C++ -*-===//
//
// See TransposedOperands.h.
//
//===----------------------------------------------------------------------===//
#include "TransposedOperands.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

int64_t dyno::elementsPerCacheLine(Type elementType) {
  int64_t bytes = std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  return std::max<int64_t>(1, kCacheLineBytes / bytes);
}

std::optional<unsigned> dyno::transposedLoop(linalg::LinalgOp op, OpOperand &operand) {
  auto type = dyn_cast<ShapedType>(operand.get().getType());
  if (!type || !type.hasRank() || type.getRank() < 2 || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  if (auto memref = dyn_cast<MemRefType>(type); memref && !memref.isLastDimUnitStride())
    return std::nullopt;
  unsigned innermost = op.getNumLoops() - 1;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  auto last = dyn_cast<AffineDimExpr>(map.getResult(map.getNumResults() - 1));
  if (!last || last.getPosition() == innermost || !map.isFunctionOfDim(innermost))
    return std::nullopt;
  return last.getPosition();
}
