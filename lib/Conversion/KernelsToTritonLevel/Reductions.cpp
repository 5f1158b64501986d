//===- Reductions.cpp - Reductions in Triton block programs -----*- C++ -*-===//
//
// Part of the `dyno-convert-kernels-to-triton-level` pass (see KernelEmitter.h): a
// reduction generic becomes a whole-row block (persistent) or a loop over row blocks,
// then a `tl.reduce` across the lanes.
//
//===----------------------------------------------------------------------===//
#include "KernelEmitter.h"
#include "ReductionKinds.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::dyno;

namespace mlir::dyno::triton_level {

Value KernelEmitter::combine(OpBuilder &b, Operation *combiner, Value lhs, Value rhs) {
  return cloneElementwise(b, combiner, {toBlock(b, lhs), toBlock(b, rhs)});
}

std::unique_ptr<Region> KernelEmitter::makeRowRegion(OpBuilder builder, Value rowOffset) {
  auto region = std::make_unique<Region>(builder);
  OpBuilder &b = region->builder;
  region->row = true;
  region->xmask = outer->xmask;
  region->slotIndex = outer->slotIndex;
  Value rindex = tl::RangeOp::create(b, loc, blockType(b.getIndexType()), "RBLOCK", 1);
  if (rowOffset)
    rindex = indexOp<arith::AddIOp>(b, rindex, rowOffset);
  region->rmask = lessThan(b, rindex, rNumel);
  SmallVector<Value> rIndices = decompose(b, rindex, rExtents);
  for (auto [i, value] : llvm::enumerate(rIndices))
    region->slotIndex[space.numXSlots() + i] = value;
  return region;
}

LogicalResult KernelEmitter::emitReduction(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1)
    return op.emitOpError("reduces into several results (e.g. an argmax), which the Triton "
                          "target does not support"), failure();
  OpOperand *init = op.getDpsInitOperand(0);
  BlockArgument accumulator = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  Type element = accumulator.getType();
  std::optional<ReductionKind> kind =
      combiner && combiner->getNumOperands() == 2 && accumulator.hasOneUse() &&
              llvm::is_contained(combiner->getOperands(), accumulator)
          ? reductionKindOf(combiner, element)
          : std::nullopt;
  if (!kind)
    return op.emitOpError("is not a reduction the Triton target recognizes (one "
                          "accumulator combined by add, mul, max, min, and, or or xor)"),
           failure();
  Value expression = combiner->getOperand(0) == accumulator ? combiner->getOperand(1)
                                                            : combiner->getOperand(0);
  OpBuilder &ob = outer->builder;
  Value identity = arith::ConstantOp::create(ob, loc, kind->identity);

  // Lanes of the row block, masked to the identity past the row's end.
  auto maskedRow = [&](Region &row) -> FailureOr<Value> {
    IRMapping mapping;
    if (failed(emitBody(op, row, combiner, mapping)))
      return failure();
    FailureOr<Value> value = bodyValue(op, mapping, expression);
    if (failed(value))
      return failure();
    OpBuilder &b = row.builder;
    return arith::SelectOp::create(b, loc, maskFor(row, 3u), toBlock(b, *value),
                                   toBlock(b, identity))
        .getResult();
  };

  Value reduced;
  if (persistent) {
    FailureOr<Value> lanes = maskedRow(*persistentRow);
    if (failed(lanes))
      return failure();
    reduced = tl::ReduceOp::create(ob, loc, *lanes, kind->name, 1);
  } else {
    Value step = tl::BlockSizeOp::create(ob, loc, "RBLOCK");
    Value start = tl::FullOp::create(ob, loc, blockType(element), identity,
                                     ob.getStrArrayAttr({"XBLOCK", "RBLOCK"}));
    auto loop = scf::ForOp::create(ob, loc, index(ob, 0), rNumel, step, ValueRange{start});
    ob.setInsertionPoint(loop);
    OpBuilder body = OpBuilder::atBlockEnd(loop.getBody());
    std::unique_ptr<Region> row = makeRowRegion(body, loop.getInductionVar());
    FailureOr<Value> lanes = maskedRow(*row);
    if (failed(lanes))
      return failure();
    Value next = combine(row->builder, combiner, loop.getRegionIterArg(0), *lanes);
    scf::YieldOp::create(row->builder, loc, next);
    ob.setInsertionPointAfter(loop);
    reduced = tl::ReduceOp::create(ob, loc, loop.getResult(0), kind->name, 1);
  }
  FailureOr<TensorSource> initSource = traceTensor(init->get());
  if (failed(initSource))
    return failure();
  FailureOr<Value> initial = initSource->kind == TensorSource::Memory
                                 ? operandValue(op, *init, *outer)
                                 : valueOf(init->get(), *outer);
  if (failed(initial))
    return failure();
  // A fill with the identity (a sum's 0, a max's -inf) adds nothing.
  Attribute initConstant;
  bool isIdentity = initSource->kind == TensorSource::ScalarFill &&
                    matchPattern(*initial, m_Constant(&initConstant)) &&
                    initConstant == kind->identity;
  outer->blocks[op->getResult(0)] =
      isIdentity ? reduced : combine(ob, combiner, reduced, *initial);
  return success();
}

} // namespace mlir::dyno::triton_level
