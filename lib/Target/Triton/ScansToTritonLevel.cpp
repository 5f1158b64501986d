//===- ScansToTritonLevel.cpp - Scans in Triton block programs --*- C++ -*-===//
//
// Part of the `dyno-convert-scans-scatters-sorts-to-triton-level` pass (see
// ScanScatterSortEmitter.h): a dyno.scan becomes a tl.associative_scan of each line.
//
//===----------------------------------------------------------------------===//
#include "ScanScatterSortEmitter.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::dyno;

namespace {

/// The binary arith op a scan or scatter region applies to its two arguments (in either
/// order) and yields, if that is all it does.
Operation *binaryCombiner(Region &region) {
  Block &block = region.front();
  if (!llvm::hasSingleElement(block.without_terminator()))
    return nullptr;
  Operation &op = block.front();
  if (op.getNumOperands() != 2 || op.getNumResults() != 1 ||
      block.getTerminator()->getOperand(0) != op.getResult(0))
    return nullptr;
  Value a = block.getArgument(0), b = block.getArgument(1);
  bool both = (op.getOperand(0) == a && op.getOperand(1) == b) ||
              (op.getOperand(0) == b && op.getOperand(1) == a);
  return both ? &op : nullptr;
}

} // namespace

namespace mlir::dyno {

//===----------------------------------------------------------------------===//
// Scans: one line per block row, tl.associative_scan; longer lines chunk by chunk
//===----------------------------------------------------------------------===//

FailureOr<Value> ScanScatterSortEmitter::scanBlock(ScanOp scan, StringRef kind, Value values) {
  auto scanOp = tl::ScanOp::create(*b, loc, values, kind, 1);
  if (kind != "combine")
    return scanOp.getResult();
  // The region's ops, cloned; dyno.yield becomes tl.yield.
  Block &source = scan.getRegion().front();
  Block *target = new Block();
  scanOp.getCombiner().push_back(target);
  IRMapping mapping;
  for (BlockArgument argument : source.getArguments())
    mapping.map(argument, target->addArgument(argument.getType(), loc));
  OpBuilder::InsertionGuard guard(*b);
  b->setInsertionPointToStart(target);
  for (Operation &op : source.without_terminator()) {
    // Constants of the kernel the region reads (canonicalization hoists them out of
    // it) are cloned in: the combine function is printed on its own.
    for (Value operand : op.getOperands()) {
      if (mapping.contains(operand) || operand.getParentBlock() == &source)
        continue;
      Operation *definition = operand.getDefiningOp();
      if (!definition || !definition->hasTrait<OpTrait::ConstantLike>())
        return scan.emitOpError("combiner reads a value of the kernel that is not a "
                                "constant"),
               failure();
      b->clone(*definition, mapping);
    }
    b->clone(op, mapping);
  }
  tl::YieldOp::create(*b, loc, mapping.lookup(source.getTerminator()->getOperand(0)));
  return scanOp.getResult();
}

FailureOr<Value> ScanScatterSortEmitter::combineBlocks(ScanOp scan, Operation *combiner,
                                                  StringRef kind, Value earlier,
                                                  Value later) {
  if (kind != "combine") {
    // The one binary op, on the (possibly widened) blocks' own element type.
    OperationState state(loc, combiner->getName());
    state.addOperands({earlier, later});
    state.addAttributes(combiner->getAttrs());
    state.addTypes(later.getType());
    return b->create(state)->getResult(0);
  }
  Block &source = scan.getRegion().front();
  IRMapping mapping;
  mapping.map(source.getArgument(0), earlier);
  mapping.map(source.getArgument(1), later);
  for (Operation &op : source.without_terminator()) {
    SmallVector<Value> operands;
    for (Value operand : op.getOperands()) {
      if (!mapping.contains(operand)) {
        Operation *definition = operand.getDefiningOp();
        if (!definition || !definition->hasTrait<OpTrait::ConstantLike>())
          return scan.emitOpError("combiner reads a value of the kernel that is not a "
                                  "constant"),
                 failure();
        mapping.map(operand, b->clone(*definition)->getResult(0));
      }
      operands.push_back(mapping.lookup(operand));
    }
    if (op.getNumResults() != 1)
      return op.emitOpError("in a scan's combiner has no single result"), failure();
    mapping.map(op.getResult(0), cloneOnBlocks(&op, operands));
  }
  return mapping.lookup(source.getTerminator()->getOperand(0));
}

LogicalResult ScanScatterSortEmitter::emitScan(ScanOp scan) {
  if (!scan.getInclusive())
    return scan.emitOpError("is exclusive; the Triton lowering scans inclusively only"),
           failure();
  Operation *combiner = binaryCombiner(scan.getRegion());
  StringRef kind = isa_and_nonnull<arith::AddFOp, arith::AddIOp>(combiner)   ? "sum"
                   : isa_and_nonnull<arith::MulFOp, arith::MulIOp>(combiner) ? "prod"
                   : isa_and_nonnull<arith::MaxSIOp>(combiner)               ? "maxsi"
                   : isa_and_nonnull<arith::MinSIOp>(combiner)               ? "minsi"
                                                                             : "combine";
  // A combiner of its own (cummax's, logcumsumexp's) becomes the scan's combine
  // function: scalar arith and math ops only.
  if (kind == "combine")
    for (Operation &op : scan.getRegion().front().without_terminator())
      if (op.getNumRegions() || !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
        return op.emitOpError("in a scan's combiner is not supported by the Triton target"),
               failure();
  auto inputType = cast<RankedTensorType>(scan.getInputs()[0].getType());
  int64_t dim = scan.getDimension(), staticLength = inputType.getDimSize(dim);
  // The input's sizes: constants, or size arguments where symbolic (then the input must
  // be an argument: reshapes of symbolic sizes are not traced).
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    Value size = sizeOf(scan.getInputs()[0], d);
    if (!size)
      return scan.emitOpError("scans a tensor of symbolic sizes that is not a kernel "
                              "argument; the Triton lowering reads arguments only"),
             failure();
    sizes.push_back(size);
  }
  Value length = sizes[dim];
  FailureOr<Memory> input = memoryOf(scan.getInputs()[0]);
  FailureOr<Value> output = resultPointer(scan.getResult(0));
  if (failed(input) || failed(output))
    return failure();
  FailureOr<Value> accumulator = failure();
  if (!scan.getResult(1).use_empty()) {
    accumulator = resultPointer(scan.getResult(1));
    if (failed(accumulator))
      return failure();
  }
  // Lines longer than one program holds are scanned chunk by chunk (one RBLOCK each, a
  // block row of one line per program), each chunk combined with the carry: the last
  // value of the line's chunks before it.
  bool chunked = ShapedType::isDynamic(staticLength) || staticLength > kMaxScanLength;
  // The grid: the static part of the line count, times the size arguments it multiplies.
  int64_t staticLines = 1;
  SmallVector<int64_t> linesArguments;
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    if (d == dim)
      continue;
    if (std::optional<int64_t> known = getConstantIntValue(sizes[d]))
      staticLines *= *known;
    else
      linesArguments.push_back(cast<BlockArgument>(sizes[d]).getArgNumber());
  }
  setConfigs(/*rows=*/true, staticLines,
             ShapedType::isDynamic(staticLength) ? -1 : staticLength,
             /*persistent=*/!chunked, linesArguments);
  // Eager's CPU cumsum/cumprod accumulate float in double; so does this scan, and so does
  // the carry between chunks.
  Type element = inputType.getElementType();
  auto floatType = dyn_cast<FloatType>(element);
  bool widen = floatType && floatType.getWidth() < 64 && kind != "combine";
  Type scanElement = widen ? Type(b->getF64Type()) : element;

  scf::ForOp loop;
  Value chunkStart;
  if (chunked) {
    Value zero = arith::ConstantOp::create(*b, loc, b->getZeroAttr(scanElement));
    Value start = tl::FullOp::create(*b, loc, blockType(scanElement), zero,
                                     b->getStrArrayAttr({"XBLOCK", "1"}));
    loop = scf::ForOp::create(*b, loc, index(0), length,
                              tl::BlockSizeOp::create(*b, loc, "RBLOCK"), ValueRange{start});
    b->setInsertionPointToStart(loop.getBody());
    chunkStart = loop.getInductionVar();
  }
  Value x, r, position;
  auto [offsets, mask] = lineOffsets(sizes, dim, x, r, position, chunkStart);
  // A scan of a fill (OPT's positions: the cumsum of an all-ones mask) scans a full
  // block of it (a splat prints as the scalar, and tl.associative_scan needs a block).
  Value values =
      input->scalar
          ? tl::FullOp::create(*b, loc, blockType(input->scalar.getType()), input->scalar,
                               b->getStrArrayAttr({"XBLOCK", "RBLOCK"}))
                .getResult()
          : load(input->pointer, offsets, mask);
  if (widen)
    values = arith::ExtFOp::create(*b, loc, blockType(scanElement), values);
  FailureOr<Value> scanned = scanBlock(scan, kind, values);
  if (failed(scanned))
    return failure();
  Value line = *scanned, nextCarry;
  if (chunked) {
    // The first chunk has no carry (a combiner of its own has no identity to start from).
    Value carry = loop.getRegionIterArgs()[0];
    FailureOr<Value> carried = combineBlocks(scan, combiner, kind, carry, line);
    if (failed(carried))
      return failure();
    Value first =
        arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::eq, chunkStart, index(0));
    line = arith::SelectOp::create(*b, loc, first, line, *carried);
    // The next carry: the chunk's last value in its line, picked out exactly: for
    // integers a sum of it and zeros; for floats a NaN-propagating maximum of it and
    // -inf (a sum with 0.0 would turn -0.0 into +0.0, and Triton's tl.full makes a -0.0
    // fill +0.0).
    Value chunkEnd = arith::MinSIOp::create(
        *b, loc,
        arith::AddIOp::create(*b, loc, chunkStart,
                              tl::BlockSizeOp::create(*b, loc, "RBLOCK")),
        length);
    Value last = arith::CmpIOp::create(
        *b, loc, arith::CmpIPredicate::eq, r,
        splat(arith::SubIOp::create(*b, loc, chunkEnd, index(1))));
    bool floating = isa<FloatType>(scanElement);
    TypedAttr nothing =
        floating ? TypedAttr(b->getFloatAttr(scanElement,
                                             -std::numeric_limits<double>::infinity()))
                 : TypedAttr(b->getZeroAttr(scanElement));
    Value picked = arith::SelectOp::create(
        *b, loc, last, line, splat(arith::ConstantOp::create(*b, loc, nothing)));
    nextCarry = tl::ReduceOp::create(*b, loc, picked, floating ? "max" : "sum", 1);
  }
  Value result = widen ? arith::TruncFOp::create(*b, loc, blockType(element), line) : line;
  tl::StoreOp::create(*b, loc, *output, offsets, result, mask);
  // The accumulator (the last value of each line), where the graph reads it.
  if (succeeded(accumulator)) {
    Value last = arith::CmpIOp::create(
        *b, loc, arith::CmpIPredicate::eq, r,
        splat(arith::SubIOp::create(*b, loc, length, index(1)).getResult()));
    tl::StoreOp::create(*b, loc, *accumulator, x, result, binary<arith::AndIOp>(mask, last));
  }
  if (chunked) {
    scf::YieldOp::create(*b, loc, nextCarry);
    b->setInsertionPointAfter(loop);
  }
  return success();
}

} // namespace mlir::dyno
