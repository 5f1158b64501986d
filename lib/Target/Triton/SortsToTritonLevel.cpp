//===- SortsToTritonLevel.cpp - Sorts in Triton block programs --*- C++ -*-===//
//
// Part of the `dyno-convert-scans-scatters-sorts-to-triton-level` pass (see
// ScanScatterSortEmitter.h): a dyno.sort becomes a tl.sort of packed keys of each line,
// or, for a small prefix (topk), selections of the least key.
//
//===----------------------------------------------------------------------===//
#include "ScanScatterSortEmitter.h"

#include <limits>

using namespace mlir;
using namespace mlir::dyno;

namespace mlir::dyno {

//===----------------------------------------------------------------------===//
// Sorts: stable, by one integer key per element (value bits, then position)
//===----------------------------------------------------------------------===//

LogicalResult ScanScatterSortEmitter::emitSort(SortOp sort) {
  Block &comparator = sort.getRegion().front();
  Operation *cmp = comparator.getTerminator()->getOperand(0).getDefiningOp();
  Value first = comparator.getArgument(0), second = comparator.getArgument(1);
  bool descending;
  auto unsupported = [&]() {
    return sort.emitOpError("has a comparator the Triton lowering does not sort by (it "
                            "sorts by a signed or float comparison of the first output)"),
           failure();
  };
  if (!cmp || cmp->getNumOperands() != 2)
    return unsupported();
  bool swapped = cmp->getOperand(0) == second && cmp->getOperand(1) == first;
  if (!swapped && !(cmp->getOperand(0) == first && cmp->getOperand(1) == second))
    return unsupported();
  if (auto cmpf = dyn_cast<arith::CmpFOp>(cmp)) {
    arith::CmpFPredicate p = cmpf.getPredicate();
    if (p == arith::CmpFPredicate::OLE || p == arith::CmpFPredicate::OLT)
      descending = false;
    else if (p == arith::CmpFPredicate::OGE || p == arith::CmpFPredicate::OGT)
      descending = true;
    else
      return unsupported();
  } else if (auto cmpi = dyn_cast<arith::CmpIOp>(cmp)) {
    arith::CmpIPredicate p = cmpi.getPredicate();
    if (p == arith::CmpIPredicate::sle || p == arith::CmpIPredicate::slt)
      descending = false;
    else if (p == arith::CmpIPredicate::sge || p == arith::CmpIPredicate::sgt)
      descending = true;
    else
      return unsupported();
  } else {
    return unsupported();
  }
  descending ^= swapped;

  auto type = cast<RankedTensorType>(sort.getOutputs()[0].getType());
  Type element = type.getElementType();
  unsigned width = element.getIntOrFloatBitWidth();
  if (width > 32)
    return sort.emitOpError("sorts ")
               << element << "; the Triton lowering packs values of at most 32 bits with "
                             "their positions into 64-bit keys",
           failure();
  int64_t dim = sort.getDimension(), length = type.getDimSize(dim);
  if (length > kMaxSortLength)
    return sort.emitOpError("sorts lines of ")
               << length << " elements; the Triton lowering holds at most " << kMaxSortLength
               << " in one program",
           failure();
  SmallVector<Memory> sources;
  SmallVector<Value> results;
  for (auto [output, result] : llvm::zip(sort.getOutputs(), sort.getResults())) {
    FailureOr<Memory> source = memoryOf(output);
    if (failed(source))
      return failure();
    sources.push_back(*source);
    if (result.use_empty()) {
      results.push_back(Value());
      continue;
    }
    FailureOr<Value> pointer = resultPointer(result);
    if (failed(pointer))
      return failure();
    results.push_back(*pointer);
  }
  if (sources[0].scalar)
    return sort.emitOpError("sorts a fill"), failure();
  setConfigs(/*rows=*/true, type.getNumElements() / std::max<int64_t>(length, 1), length);

  Value x, r, position;
  auto [offsets, mask] = lineOffsets(type.getShape(), dim, x, r, position);
  Value values = load(sources[0].pointer, offsets, mask);
  // Order-preserving integer image of the values: floats' bits with negative values'
  // magnitude bits flipped, -0.0 as +0.0 (they tie) and every NaN as the canonical
  // positive NaN, the largest (eager orders NaN last ascending, first descending).
  Type keyElement = b->getI64Type();
  Value ordered;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    Type bitsType = b->getIntegerType(width);
    Value bits = arith::BitcastOp::create(*b, loc, blockType(bitsType), values);
    int64_t nan = width == 32 ? 0x7fc00000 : element.isBF16() ? 0x7fc0 : 0x7e00;
    Value isNan = arith::CmpFOp::create(*b, loc, arith::CmpFPredicate::UNO, values, values);
    Value zero = arith::ConstantOp::create(*b, loc, b->getFloatAttr(floatType, 0.0));
    Value isZero =
        arith::CmpFOp::create(*b, loc, arith::CmpFPredicate::OEQ, values, splat(zero));
    bits = arith::SelectOp::create(*b, loc, isNan, splat(constant(bitsType, nan)), bits);
    bits = arith::SelectOp::create(*b, loc, isZero, splat(constant(bitsType, 0)), bits);
    Value negative = arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::slt, bits,
                                           splat(constant(bitsType, 0)));
    int64_t magnitude = (int64_t(1) << (width - 1)) - 1;
    Value flipped = binary<arith::XOrIOp>(bits, constant(bitsType, magnitude));
    ordered = arith::SelectOp::create(*b, loc, negative, flipped, bits);
    ordered = arith::ExtSIOp::create(*b, loc, blockType(keyElement), ordered);
  } else if (width == 1) {
    ordered = arith::ExtUIOp::create(*b, loc, blockType(keyElement), values);
  } else {
    ordered = arith::ExtSIOp::create(*b, loc, blockType(keyElement), values);
  }
  if (descending) // ~v reverses the order; positions still break ties ascending
    ordered = binary<arith::XOrIOp>(ordered, constant(keyElement, -1));
  Value positionKey = arith::IndexCastOp::create(*b, loc, blockType(keyElement), position);
  Value key = binary<arith::OrIOp>(binary<arith::ShLIOp>(ordered, constant(keyElement, 32)),
                                   positionKey);
  // Lanes past the line sort last.
  Value last = splat(constant(keyElement, std::numeric_limits<int64_t>::max()));
  key = arith::SelectOp::create(*b, loc, mask, key, last);
  int64_t after = product(type.getShape().drop_front(dim + 1));
  Value lineStart = binary<arith::SubIOp>(offsets, binary<arith::MulIOp>(r, index(after)));
  std::optional<int64_t> prefix = sort.getPrefix();
  if (prefix && *prefix <= kMaxSelectedPrefix) {
    // topk: the k first elements by k selections of the least remaining key (keys are
    // unique, as they hold positions), not a sort of the whole line. Lane 0 of each
    // line moves the selected element.
    Value first = arith::AndIOp::create(
        *b, loc, mask, arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::eq, r, splat(index(0))));
    Value remaining = key;
    for (int64_t j = 0; j < *prefix; ++j) {
      Value least = tl::ReduceOp::create(*b, loc, remaining, "minsi", 1);
      Value from = binary<arith::AndIOp>(least, constant(keyElement, 0xffffffff));
      from = arith::IndexCastOp::create(*b, loc, blockType(b->getIndexType()), from);
      Value source = binary<arith::AddIOp>(lineStart, binary<arith::MulIOp>(from, index(after)));
      Value target = binary<arith::AddIOp>(lineStart, index(j * after));
      for (auto [memory, pointer] : llvm::zip(sources, results)) {
        if (!pointer)
          continue;
        Value moved = memory.iota     ? arith::IndexCastOp::create(*b, loc, blockType(memory.iota), from)
                      : memory.scalar ? splat(memory.scalar)
                                      : load(memory.pointer, source, first);
        tl::StoreOp::create(*b, loc, pointer, target, moved, first);
      }
      remaining = arith::SelectOp::create(
          *b, loc, arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::eq, remaining, least),
          last, remaining);
    }
    return success();
  }
  Value sorted = tl::SortOp::create(*b, loc, key, 1);
  Value from = binary<arith::AndIOp>(sorted, constant(keyElement, 0xffffffff));
  from = arith::IndexCastOp::create(*b, loc, blockType(b->getIndexType()), from);
  // The element at sorted position j of a line comes from position `from` of that line.
  Value source = binary<arith::AddIOp>(lineStart, binary<arith::MulIOp>(from, index(after)));
  for (auto [memory, pointer] : llvm::zip(sources, results)) {
    if (!pointer)
      continue;
    Value moved = memory.iota     ? arith::IndexCastOp::create(*b, loc, blockType(memory.iota), from)
                  : memory.scalar ? memory.scalar
                                  : load(memory.pointer, source, mask);
    tl::StoreOp::create(*b, loc, pointer, offsets, moved, mask);
  }
  return success();
}

} // namespace mlir::dyno
