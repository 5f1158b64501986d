//===- PaddedReads.cpp - An element of a constant pad, read in bounds -*- C++ -*-===//
//
// See PaddedReads.h.
//
//===----------------------------------------------------------------------===//
#include "PaddedReads.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

bool dyno::hasStaticConstantPadding(tensor::PadOp pad) {
  if (!pad.getConstantPaddingValue() || !pad.getSourceType().hasStaticShape() ||
      !pad.getResultType().hasStaticShape() ||
      llvm::is_contained(pad.getSourceType().getShape(), 0))
    return false;
  std::optional<SmallVector<int64_t>> low = getConstantIntValues(pad.getMixedLowPad());
  return low && llvm::all_of(*low, [](int64_t l) { return l >= 0; });
}

Value dyno::paddedElement(
    OpBuilder &builder, Location loc, tensor::PadOp pad, ValueRange indices,
    function_ref<Value(OpBuilder &, Location, ValueRange)> readSource) {
  SmallVector<int64_t> low = *getConstantIntValues(pad.getMixedLowPad());
  ArrayRef<int64_t> sourceShape = pad.getSourceType().getShape();
  ArrayRef<int64_t> paddedShape = pad.getResultType().getShape();
  SmallVector<Value> inSource;
  Value inside;
  for (auto [d, index] : llvm::enumerate(indices)) {
    if (low[d] == 0 && sourceShape[d] == paddedShape[d]) {
      inSource.push_back(index);
      continue;
    }
    // index - low as an unsigned number is below the size exactly inside.
    Value shifted = arith::SubIOp::create(builder, loc, index,
                                          arith::ConstantIndexOp::create(builder, loc, low[d]));
    Value size = arith::ConstantIndexOp::create(builder, loc, sourceShape[d]);
    Value within =
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult, shifted, size);
    inSource.push_back(shifted);
    inside = inside ? arith::AndIOp::create(builder, loc, inside, within) : within;
  }
  if (!inside) // nothing padded: the read
    return readSource(builder, loc, inSource);
  Value padValue = pad.getConstantPaddingValue();
  auto read = scf::IfOp::create(
      builder, loc, inside,
      [&](OpBuilder &then, Location at) {
        scf::YieldOp::create(then, at, readSource(then, at, inSource));
      },
      [&](OpBuilder &otherwise, Location at) {
        scf::YieldOp::create(otherwise, at, padValue);
      });
  return read.getResult(0);
}

linalg::GenericOp dyno::generateElements(
    OpBuilder &builder, Location loc, RankedTensorType type,
    function_ref<Value(OpBuilder &, Location, ValueRange)> element) {
  int64_t rank = type.getRank();
  Value init = tensor::EmptyOp::create(builder, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps = {builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
      builder, loc, type, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location nested, ValueRange) {
        SmallVector<Value> indices;
        for (int64_t d = 0; d < rank; ++d)
          indices.push_back(linalg::IndexOp::create(b, nested, d));
        linalg::YieldOp::create(b, nested, element(b, nested, indices));
      });
}
