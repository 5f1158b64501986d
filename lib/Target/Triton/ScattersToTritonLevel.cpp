//===- ScattersToTritonLevel.cpp - Scatters in Triton block programs -*- C++ -*-===//
//
// Part of the `dyno-convert-scans-scatters-sorts-to-triton-level` pass (see
// ScanScatterSortEmitter.h): a dyno.scatter becomes one lane per update element,
// stored, combined atomically, or read, combined and written back.
//
//===----------------------------------------------------------------------===//
#include "ScanScatterSortEmitter.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::dyno;

namespace mlir::dyno {

//===----------------------------------------------------------------------===//
// Scatters: one lane per update element; repeated indices combine atomically
//===----------------------------------------------------------------------===//

LogicalResult ScanScatterSortEmitter::emitScatter(ScatterOp scatter) {
  rank = 1;
  auto updatesType = cast<RankedTensorType>(scatter.getUpdates().getType());
  auto indicesType = cast<RankedTensorType>(scatter.getIndices().getType());
  auto originalType = cast<RankedTensorType>(scatter.getOriginal().getType());
  ArrayRef<int64_t> dimensionMap = scatter.getDimensionMap();
  int64_t windowRank = updatesType.getRank() - 1;
  int64_t offset = originalType.getRank() - windowRank;
  for (int64_t d = 0; d < offset; ++d)
    if (!llvm::is_contained(dimensionMap, d))
      return scatter.emitOpError("dimension ")
                 << d << " of original is addressed neither by indices nor by updates",
             failure();

  // How each update combines with the element it lands on: overwritten, or
  // `original op f(update)` with an op Triton has an atomic for, or any function of both
  // where indices are unique.
  Block &body = scatter.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  Value original = body.getArgument(1);
  Type element = originalType.getElementType();
  bool overwrite = yielded == body.getArgument(0);
  StringRef atomic;
  Value contribution; // f(update), in the region
  if (Operation *last = yielded.getDefiningOp();
      last && last->getNumOperands() == 2 &&
      llvm::is_contained(last->getOperands(), original)) {
    Value other = last->getOperand(last->getOperand(0) == original ? 1 : 0);
    bool readsOriginal = other == original;
    for (Operation &inner : body.without_terminator())
      if (&inner != last && llvm::is_contained(inner.getOperands(), original))
        readsOriginal = true;
    if (!readsOriginal) {
      contribution = other;
      if (isa<arith::AddFOp, arith::AddIOp>(last) && !element.isBF16())
        atomic = "add"; // (no bf16 atomic add on every GPU)
      else if (isa<arith::MaxSIOp>(last))
        atomic = "max";
      else if (isa<arith::MinSIOp>(last))
        atomic = "min";
      // Triton's float max/min atomics order the bits (as signed integers for a clear
      // sign bit, unsigned otherwise): -0.0 < +0.0 like maximumf/minimumf; NaN is kept
      // below (see floatExtremum).
      else if (isa<arith::MaximumFOp>(last) && (element.isF32() || element.isF64()))
        atomic = "max";
      else if (isa<arith::MinimumFOp>(last) && (element.isF32() || element.isF64()))
        atomic = "min";
    }
  }
  bool floatExtremum = !atomic.empty() && atomic != "add" && isa<FloatType>(element);
  if (!overwrite && atomic.empty() && !scatter.getUniqueIndices())
    return scatter.emitOpError("combines repeated indices with an op Triton has no atomic "
                               "for (it has add, max/min of integers, and max/min of "
                               "float32/float64)"),
           failure();

  FailureOr<Memory> updates = memoryOf(scatter.getUpdates());
  FailureOr<Memory> indices = memoryOf(scatter.getIndices());
  FailureOr<Value> result = resultPointer(scatter.getResult(0));
  if (failed(updates) || failed(indices) || failed(result))
    return failure();
  int64_t lanes = updatesType.getNumElements();
  setConfigs(/*rows=*/false, lanes, 1);
  if (lanes == 0)
    return success();

  Value pid = tl::ProgramIdOp::create(*b, loc, 0);
  Value xblock = tl::BlockSizeOp::create(*b, loc, "XBLOCK");
  Value x = tl::RangeOp::create(*b, loc, blockType(b->getIndexType()), "XBLOCK", 0);
  x = binary<arith::AddIOp>(binary<arith::MulIOp>(pid, xblock), x);
  Value mask = lessThan(x, lanes);
  Value update = updates->scalar ? updates->scalar : load(updates->pointer, x, mask);
  // Lane x is update row x / window at window position x % window (row-major).
  ArrayRef<int64_t> window = updatesType.getShape().drop_front();
  Value row = binary<arith::DivUIOp>(x, index(product(window)));
  SmallVector<Value> position(originalType.getRank());
  Value rest = binary<arith::RemUIOp>(x, index(product(window)));
  for (int64_t w = 0; w < windowRank; ++w) {
    int64_t inner = product(window.drop_front(w + 1));
    position[offset + w] = binary<arith::DivUIOp>(rest, index(inner));
    rest = binary<arith::RemUIOp>(rest, index(inner));
  }
  int64_t depth = indicesType.getDimSize(1);
  for (auto [column, d] : llvm::enumerate(dimensionMap)) {
    Value raw;
    if (indices->scalar) {
      raw = indices->scalar;
    } else {
      Value at = binary<arith::AddIOp>(binary<arith::MulIOp>(row, index(depth)),
                                       index(column));
      raw = load(indices->pointer, at, mask);
    }
    Value coordinate = arith::IndexCastOp::create(
        *b, loc, isa<RankedTensorType>(raw.getType()) ? Type(blockType(b->getIndexType()))
                                                      : Type(b->getIndexType()),
        raw);
    position[d] = position[d] ? binary<arith::AddIOp>(position[d], coordinate) : coordinate;
  }
  Value target = index(0);
  for (int64_t d = 0; d < originalType.getRank(); ++d) {
    int64_t stride = product(originalType.getShape().drop_front(d + 1));
    target = binary<arith::AddIOp>(target, binary<arith::MulIOp>(position[d], index(stride)));
  }
  target = splat(target);
  update = splat(update);
  if (overwrite) {
    tl::StoreOp::create(*b, loc, *result, target, update, mask);
    return success();
  }
  // The region's ops on blocks: the update, and the current element where it is read.
  IRMapping mapping;
  mapping.map(body.getArgument(0), update);
  if (atomic.empty())
    mapping.map(original, load(*result, target, mask));
  for (Operation &inner : body.without_terminator()) {
    if (!atomic.empty() && inner.getResult(0) == yielded)
      break; // the atomic combines
    if (inner.getNumRegions() || inner.getNumResults() != 1 ||
        !isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return inner.emitOpError("in a scatter has no Triton lowering"), failure();
    SmallVector<Value> operands;
    for (Value operand : inner.getOperands()) {
      Value mapped = mapping.lookupOrNull(operand);
      if (!mapped) {
        auto outside = operand.getDefiningOp<arith::ConstantOp>();
        if (!outside)
          return inner.emitOpError("in a scatter reads a value from outside the scatter"),
                 failure();
        mapped = b->clone(*outside)->getResult(0);
      }
      operands.push_back(mapped);
    }
    mapping.map(inner.getResult(0), cloneOnBlocks(&inner, operands));
  }
  if (!atomic.empty()) {
    Value value = mapping.lookupOrNull(contribution);
    if (!value) {
      auto outside = contribution.getDefiningOp<arith::ConstantOp>();
      if (!outside)
        return scatter.emitOpError("adds a value from outside the scatter"), failure();
      value = b->clone(*outside)->getResult(0);
    }
    value = splat(value);
    if (floatExtremum) {
      // NaN wins, as in maximumf/minimumf. The bit orders put a NaN with the sign bit
      // clear above every float for max (set: below, for min), so an update that is NaN
      // lands as that NaN and stays through any later atomic. An element that is
      // already NaN (of any sign, from the original) is left alone: a lane that reads
      // NaN there skips its atomic.
      auto type = cast<FloatType>(element);
      APFloat nan = APFloat::getQNaN(type.getFloatSemantics(), /*Negative=*/atomic == "min");
      Value canonical = splat(arith::ConstantOp::create(*b, loc, type,
                                                        b->getFloatAttr(type, nan)));
      Value isNaN = arith::CmpFOp::create(*b, loc, arith::CmpFPredicate::UNO, value, value);
      value = arith::SelectOp::create(*b, loc, isNaN, canonical, value);
      Value current = load(*result, target, mask);
      Value numeric = arith::CmpFOp::create(*b, loc, arith::CmpFPredicate::ORD, current,
                                            current);
      mask = binary<arith::AndIOp>(mask, numeric);
    }
    tl::AtomicOp::create(*b, loc, atomic, *result, target, value, mask);
    return success();
  }
  // Unique indices: read, combine, write back.
  tl::StoreOp::create(*b, loc, *result, target, splat(mapping.lookup(yielded)), mask);
  return success();
}

} // namespace mlir::dyno
