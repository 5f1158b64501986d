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

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dyno;

namespace mlir::dyno::tl {

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

FailureOr<Value> KernelEmitter::initialValue(linalg::GenericOp op, OpOperand *init) {
  FailureOr<TensorSource> source = traceTensor(init->get());
  if (failed(source))
    return failure();
  return source->kind == TensorSource::Memory ? operandValue(op, *init, *outer)
                                              : valueOf(init->get(), *outer);
}

FailureOr<SmallVector<Value>> KernelEmitter::emitRowLoop(
    ValueRange start,
    function_ref<FailureOr<SmallVector<Value>>(Region &row, ValueRange carried)> body) {
  OpBuilder &ob = outer->builder;
  Value step = tl::BlockSizeOp::create(ob, loc, "RBLOCK");
  auto loop = scf::ForOp::create(ob, loc, index(ob, 0), rNumel, step, start);
  ob.setInsertionPoint(loop);
  std::unique_ptr<Region> row =
      makeRowRegion(OpBuilder::atBlockEnd(loop.getBody()), loop.getInductionVar());
  FailureOr<SmallVector<Value>> next = body(*row, loop.getRegionIterArgs());
  if (failed(next))
    return failure();
  scf::YieldOp::create(row->builder, loc, *next);
  ob.setInsertionPointAfter(loop);
  return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
}

/// RBLOCK chunks a lane sums before its stretch is combined across lanes: each lane adds
/// at most 16 elements in sequence (at RBLOCK 1024 a stretch is 16384 elements, the
/// blocks dyno-block-long-sums makes are 4096).
constexpr int64_t kStretchChunks = 16;

FailureOr<Value> KernelEmitter::emitStretchedRowSum(
    Operation *combiner, Type element, Value identity,
    function_ref<FailureOr<Value>(Region &row)> lanes) {
  OpBuilder &ob = outer->builder;
  Type wide = ob.getF64Type();
  Value zero = arith::ConstantOp::create(ob, loc, ob.getFloatAttr(wide, 0.0));
  Value totalStart = tl::FullOp::create(ob, loc, blockType(wide), zero,
                                        ob.getStrArrayAttr({"XBLOCK", "1"}));
  Value step = tl::BlockSizeOp::create(ob, loc, "RBLOCK");
  Value stretch = arith::MulIOp::create(ob, loc, step, index(ob, kStretchChunks));
  auto stretches = scf::ForOp::create(ob, loc, index(ob, 0), rNumel, stretch, totalStart);
  OpBuilder sb = OpBuilder::atBlockEnd(stretches.getBody());
  Value begin = stretches.getInductionVar();
  Value end =
      arith::MinSIOp::create(sb, loc, arith::AddIOp::create(sb, loc, begin, stretch), rNumel);
  Value lanesStart = tl::FullOp::create(sb, loc, blockType(element), identity,
                                        sb.getStrArrayAttr({"XBLOCK", "RBLOCK"}));
  auto chunks = scf::ForOp::create(sb, loc, begin, end, step, ValueRange{lanesStart});
  // Values the row body hoists out of the loop go before both loops.
  ob.setInsertionPoint(stretches);
  std::unique_ptr<Region> row =
      makeRowRegion(OpBuilder::atBlockEnd(chunks.getBody()), chunks.getInductionVar());
  FailureOr<Value> chunk = lanes(*row);
  if (failed(chunk))
    return failure();
  scf::YieldOp::create(row->builder, loc,
                       combine(row->builder, combiner, chunks.getRegionIterArgs()[0], *chunk));
  sb.setInsertionPointAfter(chunks);
  Value partial = tl::ReduceOp::create(sb, loc, chunks.getResult(0), "sum", 1);
  if (element != wide)
    partial = arith::ExtFOp::create(sb, loc, blockType(wide), partial);
  scf::YieldOp::create(
      sb, loc, arith::AddFOp::create(sb, loc, stretches.getRegionIterArgs()[0], partial)
                   .getResult());
  ob.setInsertionPointAfter(stretches);
  Value total = stretches.getResult(0);
  if (element != wide)
    total = arith::TruncFOp::create(ob, loc, blockType(element), total);
  return total;
}

LogicalResult KernelEmitter::emitReduction(linalg::GenericOp op) {
  OpOperand *init = op.getDpsInitOperand(0);
  BlockArgument accumulator = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  Type element = accumulator.getType();
  std::optional<ReductionKind> kind =
      op.getNumDpsInits() == 1 && combiner && combiner->getNumOperands() == 2 &&
              accumulator.hasOneUse() &&
              llvm::is_contained(combiner->getOperands(), accumulator)
          ? reductionKindOf(combiner, element)
          : std::nullopt;
  if (!kind) {
    std::string whyNot;
    if (std::optional<PickReduction> pick = matchPickReduction(op, whyNot))
      return emitPickReduction(op, *pick);
    return op.emitOpError("is not a reduction the Triton target recognizes (one "
                          "accumulator combined by add, mul, max, min, and, or or xor; or "
                          "accumulators that pick one element, as an argmax: ")
               << whyNot << ")",
           failure();
  }
  Value expression = combiner->getOperand(0) == accumulator ? combiner->getOperand(1)
                                                            : combiner->getOperand(0);
  OpBuilder &ob = outer->builder;
  Value identity = arith::ConstantOp::create(ob, loc, kind->identity);

  // Lanes of the row block, masked to the identity past the row's end.
  auto maskedRow = [&](Region &row) -> FailureOr<Value> {
    IRMapping mapping;
    if (failed(emitBody(op, row, {combiner}, mapping)))
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
  } else if (isa<FloatType>(element) && kind->name == "sum" &&
             ShapedType::isDynamic(space.rNumel())) {
    FailureOr<Value> sums = emitStretchedRowSum(combiner, element, identity, maskedRow);
    if (failed(sums))
      return failure();
    reduced = *sums;
  } else {
    Value start = tl::FullOp::create(ob, loc, blockType(element), identity,
                                     ob.getStrArrayAttr({"XBLOCK", "RBLOCK"}));
    FailureOr<SmallVector<Value>> carried = emitRowLoop(
        start, [&](Region &row, ValueRange previous) -> FailureOr<SmallVector<Value>> {
          FailureOr<Value> lanes = maskedRow(row);
          if (failed(lanes))
            return failure();
          return SmallVector<Value>{combine(row.builder, combiner, previous[0], *lanes)};
        });
    if (failed(carried))
      return failure();
    reduced = tl::ReduceOp::create(ob, loc, (*carried)[0], kind->name, 1);
  }
  FailureOr<TensorSource> initSource = traceTensor(init->get());
  FailureOr<Value> initial = initialValue(op, init);
  if (failed(initSource) || failed(initial))
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

/// Whether `value` is never NaN: `select (x != x), c, x` (or `select (x == x), x, c`)
/// with `c` a constant that is not NaN, as Dyno's max.dim decomposition feeds its
/// extremum; its pick then needs no pass for the first NaN.
static bool isNeverNaN(Value value) {
  auto select = value.getDefiningOp<arith::SelectOp>();
  auto compare = select ? select.getCondition().getDefiningOp<arith::CmpFOp>() : nullptr;
  if (!compare || compare.getLhs() != compare.getRhs())
    return false;
  Value x = compare.getLhs();
  auto notNaNConstant = [](Value constant) {
    FloatAttr attr;
    return matchPattern(constant, m_Constant(&attr)) && !attr.getValue().isNaN();
  };
  switch (compare.getPredicate()) {
  case arith::CmpFPredicate::UNO:
  case arith::CmpFPredicate::UNE: // x is NaN
    return select.getFalseValue() == x && notNaNConstant(select.getTrueValue());
  case arith::CmpFPredicate::ORD:
  case arith::CmpFPredicate::OEQ: // x is not NaN
    return select.getTrueValue() == x && notNaNConstant(select.getFalseValue());
  default:
    return false;
  }
}

Value KernelEmitter::reductionPosition(linalg::GenericOp op, Region &row) {
  OpBuilder &b = row.builder;
  Value position = index(b, 0);
  for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type != utils::IteratorType::reduction)
      continue;
    unsigned slot = space.slot(op, loop);
    if (slot == IterationSpace::kUnitSlot)
      continue; // extent 1, index 0
    Value extent = space.isRSlot(slot) ? rExtents[slot - space.numXSlots()] : index(b, 1);
    position = indexOp<arith::AddIOp>(b, indexOp<arith::MulIOp>(b, position, extent),
                                      row.slotIndex[slot]);
  }
  position = toBlock(b, position);
  return arith::IndexCastOp::create(b, loc, blockType(b.getI64Type()), position);
}

/// Whether `payload` is the picked element's position (`reductionPosition`): the index
/// of the generic's only reduction loop, as i64.
static bool isPickedPosition(linalg::GenericOp op, Value payload) {
  auto cast = payload.getDefiningOp<arith::IndexCastOp>();
  auto index = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
  if (!index || !cast.getType().isInteger(64))
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  return llvm::count(iterators, utils::IteratorType::reduction) == 1 &&
         iterators[index.getDim()] == utils::IteratorType::reduction;
}

/// Emits a pick reduction (see PickReduction) in three steps:
///  1. Extremum with a NaN-propagating combiner: the position of each row's first NaN,
///     and the combined value over all elements (V's result).
///  2. Per lane, the element it picks among the valid elements it sees (before the
///     row's first NaN; not NaN; for FindFirst, meeting the condition): its value, its
///     position and its payloads. In a loop over the row, a lane sees its positions in
///     increasing order and updates its pick as the generic's body would.
///  3. Across the lanes: the extremum of the picks; the first (strict) or last
///     position holding it; that lane's payloads. An accumulator takes its payload only
///     where the picked element beats its initial value (or, for FindFirst, where the
///     accumulator starts unset), as the sequential body would.
LogicalResult KernelEmitter::emitPickReduction(linalg::GenericOp op,
                                               const PickReduction &pick) {
  using Rule = PickReduction::Rule;
  OpBuilder &ob = outer->builder;
  SmallVector<Operation *> skip(pick.accumulatorOps.begin(), pick.accumulatorOps.end());
  bool extremum = pick.rule == Rule::Extremum;
  bool first = !extremum || pick.strict;
  Type i64 = ob.getI64Type();
  Value noPosition = arith::ConstantOp::create(
      ob, loc, ob.getI64IntegerAttr(first ? std::numeric_limits<int64_t>::max() : -1));
  Value maxPosition =
      arith::ConstantOp::create(ob, loc, ob.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
  auto fullBlock = [&](OpBuilder &b, Value scalar) -> Value {
    return tl::FullOp::create(b, loc, blockType(scalar.getType()), scalar,
                              b.getStrArrayAttr({"XBLOCK", "RBLOCK"}));
  };
  auto andMask = [&](OpBuilder &b, Value lhs, Value rhs) -> Value {
    if (!lhs)
      return rhs;
    return arith::AndIOp::create(b, loc, toBlock(b, lhs), toBlock(b, rhs));
  };
  auto select = [&](OpBuilder &b, Value condition, Value lhs, Value rhs) -> Value {
    return arith::SelectOp::create(b, loc, toBlock(b, condition), toBlock(b, lhs),
                                   toBlock(b, rhs));
  };

  // The element type, and the identity that ranks below (max) or above (min) all.
  Type elementType = extremum ? pick.element.getType() : Type();
  bool isFloat = elementType && isa<FloatType>(elementType);
  bool isUnsigned = extremum && pick.isUnsigned;
  if (isUnsigned) // tl.reduce has no unsigned max/min (as for one-accumulator reductions)
    return op.emitOpError("picks an unsigned extremum, which the Triton target does not "
                          "reduce"),
           failure();
  TypedAttr identityAttr;
  if (extremum) {
    if (isFloat) {
      identityAttr = ob.getFloatAttr(elementType, pick.isMax ? -INFINITY : INFINITY);
    } else if (auto intType = dyn_cast<IntegerType>(elementType)) {
      unsigned width = intType.getWidth();
      APInt bound = isUnsigned ? (pick.isMax ? APInt(width, 0) : APInt::getAllOnes(width))
                               : (pick.isMax ? APInt::getSignedMinValue(width)
                                             : APInt::getSignedMaxValue(width));
      identityAttr = ob.getIntegerAttr(elementType, bound);
    } else {
      return op.emitOpError("picks an element of type ")
                 << elementType << ", which the Triton target does not compare",
             failure();
    }
  }
  Value identity = extremum ? arith::ConstantOp::create(ob, loc, identityAttr).getResult()
                            : Value();
  // Payloads are gathered across lanes with a reduction that returns the one lane's
  // value: max against -inf for floats (exact, NaN and -0.0 included), or against 0.
  SmallVector<unsigned> payloadInits;
  for (auto [i, payload] : llvm::enumerate(pick.payloads)) {
    if (!payload)
      continue;
    if (!isa<FloatType, IntegerType>(payload.getType()))
      return op.emitOpError("picks a payload of type ")
                 << payload.getType() << ", which the Triton target does not gather",
             failure();
    payloadInits.push_back(i);
  }

  struct RowValues {
    Value element, condition, position, mask;
    SmallVector<Value> payloads;
  };
  auto rowValues = [&](Region &row) -> FailureOr<RowValues> {
    IRMapping mapping;
    if (failed(emitBody(op, row, skip, mapping)))
      return failure();
    RowValues values;
    auto lookup = [&](Value value) -> FailureOr<Value> {
      if (!value)
        return Value();
      return bodyValue(op, mapping, value);
    };
    FailureOr<Value> element = lookup(pick.element), condition = lookup(pick.condition);
    if (failed(element) || failed(condition))
      return failure();
    values.element = *element;
    values.condition = *condition;
    for (unsigned i : payloadInits) {
      FailureOr<Value> payload = lookup(pick.payloads[i]);
      if (failed(payload))
        return failure();
      values.payloads.push_back(*payload);
    }
    values.position = reductionPosition(op, row);
    values.mask = maskFor(row, 3u);
    return values;
  };

  // Step 1: the first NaN's position and V's combined result.
  bool needsFirstNaN = extremum && pick.cutAtFirstNaN && !isNeverNaN(pick.element);
  Value firstNaN, combinedAll;
  std::optional<RowValues> persistentValues;
  if (persistent) {
    FailureOr<RowValues> values = rowValues(*persistentRow);
    if (failed(values))
      return failure();
    persistentValues = *values;
  }
  auto nanPositions = [&](OpBuilder &b, const RowValues &values) -> Value {
    Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                        toBlock(b, values.element), toBlock(b, values.element));
    return select(b, andMask(b, values.mask, isNaN), values.position, maxPosition);
  };
  auto maskedElements = [&](OpBuilder &b, const RowValues &values) -> Value {
    return values.mask ? select(b, values.mask, values.element, identity)
                       : toBlock(b, values.element);
  };
  if (needsFirstNaN) {
    Value positions, combined;
    if (persistent) {
      positions = nanPositions(persistentRow->builder, *persistentValues);
      combined = maskedElements(persistentRow->builder, *persistentValues);
    } else {
      FailureOr<SmallVector<Value>> carried = emitRowLoop(
          ValueRange{fullBlock(ob, maxPosition), fullBlock(ob, identity)},
          [&](Region &row, ValueRange previous) -> FailureOr<SmallVector<Value>> {
            FailureOr<RowValues> values = rowValues(row);
            if (failed(values))
              return failure();
            OpBuilder &b = row.builder;
            return SmallVector<Value>{
                arith::MinSIOp::create(b, loc, previous[0], nanPositions(b, *values)),
                combine(b, pick.valueCombiner, previous[1], maskedElements(b, *values))};
          });
      if (failed(carried))
        return failure();
      positions = (*carried)[0];
      combined = (*carried)[1];
    }
    firstNaN = tl::ReduceOp::create(ob, loc, positions, "minsi", 1);
    std::optional<ReductionKind> kind =
        reductionKindOf(pick.valueCombiner, pick.element.getType());
    combinedAll = tl::ReduceOp::create(ob, loc, combined, kind->name, 1);
  }

  // Step 2: each lane's pick. State: position, payloads, then (Extremum) value.
  auto update = [&](OpBuilder &b, const RowValues &values, ValueRange state) {
    Value valid = values.mask;
    if (extremum) {
      if (isFloat)
        valid = andMask(b, valid,
                        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD,
                                              toBlock(b, values.element),
                                              toBlock(b, values.element)));
      if (firstNaN)
        valid = andMask(b, valid,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                              toBlock(b, values.position),
                                              toBlock(b, firstNaN)));
      Value running = state.back();
      Value wins = pick.elementIsLhs
                       ? cloneElementwise(b, pick.compare, {toBlock(b, values.element), running})
                       : cloneElementwise(b, pick.compare, {running, toBlock(b, values.element)});
      valid = andMask(b, valid, wins);
    } else {
      Value payload = toBlock(b, values.payloads[0]);
      FailureOr<Value> marker = hoist(pick.unset);
      valid = andMask(b, valid, values.condition);
      valid = andMask(b, valid,
                      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, payload,
                                            toBlock(b, *marker)));
      valid = andMask(b, valid,
                      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, state[0],
                                            toBlock(b, noPosition)));
    }
    SmallVector<Value> next;
    next.push_back(select(b, valid, values.position, state[0]));
    for (auto [i, payload] : llvm::enumerate(values.payloads))
      next.push_back(select(b, valid, payload, state[1 + i]));
    if (extremum)
      next.push_back(select(b, valid, values.element, state.back()));
    return next;
  };
  SmallVector<Value> startScalars{noPosition};
  for (unsigned i : payloadInits) {
    Type type = pick.payloads[i].getType();
    startScalars.push_back(arith::ConstantOp::create(
        ob, loc, isa<FloatType>(type) ? TypedAttr(ob.getFloatAttr(type, -INFINITY))
                                      : TypedAttr(ob.getIntegerAttr(type, 0))));
  }
  if (extremum)
    startScalars.push_back(identity);
  SmallVector<Value> lanes;
  if (persistent) {
    OpBuilder &b = persistentRow->builder;
    SmallVector<Value> start;
    for (Value scalar : startScalars)
      start.push_back(toBlock(b, scalar));
    lanes = update(b, *persistentValues, start);
  } else {
    SmallVector<Value> start;
    for (Value scalar : startScalars)
      start.push_back(fullBlock(ob, scalar));
    FailureOr<SmallVector<Value>> carried = emitRowLoop(
        start, [&](Region &row, ValueRange previous) -> FailureOr<SmallVector<Value>> {
          FailureOr<RowValues> values = rowValues(row);
          if (failed(values))
            return failure();
          return update(row.builder, *values, previous);
        });
    if (failed(carried))
      return failure();
    lanes = *carried;
  }

  // Step 3: across the lanes.
  Value lanePositions = lanes[0];
  Value candidates = arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ne, lanePositions,
                                           toBlock(ob, noPosition));
  Value picked, position;
  if (extremum) {
    // One reduction of (value, position) pairs: a lane without a candidate holds the
    // identity and a position that loses every tie.
    auto pair = tl::PickReduceOp::create(ob, loc, lanes.back(), lanePositions,
                                         pick.isMax ? "max" : "min", first, 1);
    picked = pair.getPickedValue();
    position = pair.getPickedPosition();
    Value equal = isFloat ? arith::CmpFOp::create(ob, loc, arith::CmpFPredicate::OEQ,
                                                  lanes.back(), toBlock(ob, picked))
                                .getResult()
                          : arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::eq,
                                                  lanes.back(), toBlock(ob, picked))
                                .getResult();
    candidates = andMask(ob, candidates, equal);
  } else {
    position = tl::ReduceOp::create(ob, loc, select(ob, candidates, lanePositions, noPosition),
                                    first ? "minsi" : "maxsi", 1);
  }
  Value found = arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ne, position,
                                      toBlock(ob, noPosition));
  Value pickedLane =
      andMask(ob, candidates, arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::eq,
                                                    lanePositions, toBlock(ob, position)));
  for (auto [n, i] : llvm::enumerate(payloadInits)) {
    OpOperand *init = op.getDpsInitOperand(i);
    FailureOr<Value> initial = initialValue(op, init);
    if (failed(initial))
      return failure();
    Value taken = found;
    if (extremum) {
      FailureOr<Value> initialCompared =
          initialValue(op, op.getDpsInitOperand(pick.comparedInit));
      if (failed(initialCompared))
        return failure();
      Value beats = pick.elementIsLhs
                        ? cloneElementwise(ob, pick.compare, {picked, *initialCompared})
                        : cloneElementwise(ob, pick.compare, {*initialCompared, picked});
      taken = andMask(ob, taken, beats);
    } else {
      FailureOr<Value> marker = hoist(pick.unset);
      if (failed(marker))
        return failure();
      taken = andMask(ob, taken,
                      arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::eq,
                                            toBlock(ob, *initial), toBlock(ob, *marker)));
    }
    Value payloads = lanes[1 + n];
    bool floatPayload = isa<FloatType>(getElementTypeOrSelf(payloads.getType()));
    // argmax's payload is the position itself: no reduction gathers it.
    Value gathered =
        isPickedPosition(op, pick.payloads[i])
            ? position
            : tl::ReduceOp::create(ob, loc,
                                   select(ob, pickedLane, payloads, startScalars[1 + n]),
                                   floatPayload ? "max" : "or", 1)
                  .getResult();
    outer->blocks[op->getResult(i)] = select(ob, taken, gathered, *initial);
  }
  if (pick.valueCombiner) {
    FailureOr<Value> initial = initialValue(op, op.getDpsInitOperand(pick.comparedInit));
    if (failed(initial))
      return failure();
    Value all = combinedAll;
    if (!all) // no NaN to propagate: the picked extremum, if any lane had one
      all = select(ob, found, picked, identity);
    outer->blocks[op->getResult(pick.comparedInit)] =
        combine(ob, pick.valueCombiner, all, *initial);
  }
  return success();
}

} // namespace mlir::dyno::tl
