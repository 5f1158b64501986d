//===- ReductionKinds.cpp - Reductions the Triton target computes -*- C++ -*-===//
#include "ReductionKinds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::dyno;

std::optional<ReductionKind> mlir::dyno::reductionKindOf(Operation *combiner, Type element) {
  Builder b(combiner->getContext());
  auto floatConstant = [&](double value) -> TypedAttr { return b.getFloatAttr(element, value); };
  auto intConstant = [&](APInt value) -> TypedAttr { return b.getIntegerAttr(element, value); };
  unsigned width = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  double inf = std::numeric_limits<double>::infinity();
  return llvm::TypeSwitch<Operation *, std::optional<ReductionKind>>(combiner)
      .Case<arith::AddFOp>([&](auto) { return ReductionKind{"sum", floatConstant(0.0)}; })
      .Case<arith::MulFOp>([&](auto) { return ReductionKind{"prod", floatConstant(1.0)}; })
      .Case<arith::MaximumFOp>([&](auto) { return ReductionKind{"max", floatConstant(-inf)}; })
      .Case<arith::MinimumFOp>([&](auto) { return ReductionKind{"min", floatConstant(inf)}; })
      .Case<arith::MaxNumFOp>([&](auto) { return ReductionKind{"maxnum", floatConstant(-inf)}; })
      .Case<arith::MinNumFOp>([&](auto) { return ReductionKind{"minnum", floatConstant(inf)}; })
      .Case<arith::AddIOp>([&](auto) { return ReductionKind{"sum", intConstant(APInt(width, 0))}; })
      .Case<arith::MulIOp>([&](auto) { return ReductionKind{"prod", intConstant(APInt(width, 1))}; })
      .Case<arith::MaxSIOp>([&](auto) {
        return ReductionKind{"maxsi", intConstant(APInt::getSignedMinValue(width))};
      })
      .Case<arith::MinSIOp>([&](auto) {
        return ReductionKind{"minsi", intConstant(APInt::getSignedMaxValue(width))};
      })
      .Case<arith::MaxUIOp>([&](auto) { return ReductionKind{"maxui", intConstant(APInt(width, 0))}; })
      .Case<arith::MinUIOp>([&](auto) {
        return ReductionKind{"minui", intConstant(APInt::getAllOnes(width))};
      })
      .Case<arith::AndIOp>([&](auto) { return ReductionKind{"and", intConstant(APInt::getAllOnes(width))}; })
      .Case<arith::OrIOp>([&](auto) { return ReductionKind{"or", intConstant(APInt(width, 0))}; })
      .Case<arith::XOrIOp>([&](auto) { return ReductionKind{"xor", intConstant(APInt(width, 0))}; })
      .Default([](Operation *) { return std::nullopt; });
}


namespace {

/// Whether `value`, used in `op`'s body, is computed without reading an accumulator.
bool readsNoAccumulator(linalg::GenericOp op, Value value) {
  SmallVector<Value> work{value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value next = work.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(next)) {
      if (argument.getOwner() == op.getBody() &&
          argument.getArgNumber() >= op.getNumDpsInputs())
        return false;
      continue;
    }
    Operation *producer = next.getDefiningOp();
    if (!op.getBody()->findAncestorOpInBlock(*producer) || !seen.insert(producer).second)
      continue;
    llvm::append_range(work, producer->getOperands());
  }
  return true;
}

/// `e OP V` with OP normalized to the element on the left: whether it is a max
/// (greater) comparison, and whether it is strict. Unordered float predicates and
/// equalities are not extremum comparisons.
std::optional<std::pair<bool, bool>> extremumPredicate(Operation *compare, bool elementIsLhs) {
  bool greater, strict;
  if (auto cmpf = dyn_cast<arith::CmpFOp>(compare)) {
    switch (cmpf.getPredicate()) {
    case arith::CmpFPredicate::OGT: greater = true, strict = true; break;
    case arith::CmpFPredicate::OGE: greater = true, strict = false; break;
    case arith::CmpFPredicate::OLT: greater = false, strict = true; break;
    case arith::CmpFPredicate::OLE: greater = false, strict = false; break;
    default: return std::nullopt;
    }
  } else if (auto cmpi = dyn_cast<arith::CmpIOp>(compare)) {
    switch (cmpi.getPredicate()) {
    case arith::CmpIPredicate::sgt: case arith::CmpIPredicate::ugt:
      greater = true, strict = true; break;
    case arith::CmpIPredicate::sge: case arith::CmpIPredicate::uge:
      greater = true, strict = false; break;
    case arith::CmpIPredicate::slt: case arith::CmpIPredicate::ult:
      greater = false, strict = true; break;
    case arith::CmpIPredicate::sle: case arith::CmpIPredicate::ule:
      greater = false, strict = false; break;
    default: return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  return std::make_pair(elementIsLhs ? greater : !greater, strict);
}

bool isUnsignedCompare(Operation *compare) {
  auto cmpi = dyn_cast<arith::CmpIOp>(compare);
  return cmpi && llvm::is_contained({arith::CmpIPredicate::ugt, arith::CmpIPredicate::uge,
                                     arith::CmpIPredicate::ult, arith::CmpIPredicate::ule},
                                    cmpi.getPredicate());
}

std::optional<PickReduction> matchFindFirst(linalg::GenericOp op, std::string &whyNot) {
  // select (acc == unset), (select cond, payload, acc), acc
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  if (op.getNumDpsInits() != 1)
    return whyNot = "a find-first reduction has one accumulator", std::nullopt;
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto outer = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
  if (!outer || outer.getFalseValue() != acc)
    return whyNot = "the accumulator is not updated by a select", std::nullopt;
  auto isUnset = outer.getCondition().getDefiningOp<arith::CmpIOp>();
  auto inner = outer.getTrueValue().getDefiningOp<arith::SelectOp>();
  if (!isUnset || isUnset.getPredicate() != arith::CmpIPredicate::eq || !inner ||
      inner.getFalseValue() != acc)
    return whyNot = "the select is not a find-first update", std::nullopt;
  Value unset = isUnset.getLhs() == acc ? isUnset.getRhs() : isUnset.getLhs();
  if (!llvm::is_contained({isUnset.getLhs(), isUnset.getRhs()}, Value(acc)) ||
      !matchPattern(unset, m_Constant()))
    return whyNot = "the find-first marker is not a constant", std::nullopt;
  if (!readsNoAccumulator(op, inner.getCondition()) ||
      !readsNoAccumulator(op, inner.getTrueValue()))
    return whyNot = "the find-first condition or payload reads the accumulator", std::nullopt;
  PickReduction pick;
  pick.rule = PickReduction::Rule::FindFirst;
  pick.condition = inner.getCondition();
  pick.unset = unset;
  pick.payloads = {inner.getTrueValue()};
  pick.accumulatorOps = {outer, inner, isUnset};
  for (Operation *user : acc.getUsers())
    if (!pick.accumulatorOps.contains(user))
      return whyNot = "the accumulator has other uses", std::nullopt;
  return pick;
}

std::optional<PickReduction> matchPick(linalg::GenericOp op, std::string &whyNot) {
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  unsigned numInits = op.getNumDpsInits();
  auto accumulator = [&](unsigned i) {
    return op.getMatchingBlockArgument(op.getDpsInitOperand(i));
  };
  auto initOf = [&](Value value) -> std::optional<unsigned> {
    auto argument = dyn_cast<BlockArgument>(value);
    if (!argument || argument.getOwner() != op.getBody() ||
        argument.getArgNumber() < op.getNumDpsInputs())
      return std::nullopt;
    return argument.getArgNumber() - op.getNumDpsInputs();
  };
  // The comparison: one operand an accumulator, the other free of accumulators.
  Operation *compare = nullptr;
  for (unsigned i = 0; i < numInits && !compare; ++i)
    for (Operation *user : accumulator(i).getUsers())
      if (isa<arith::CmpFOp, arith::CmpIOp>(user) &&
          extremumPredicate(user, user->getOperand(1) == accumulator(i))) {
        compare = user;
        break;
      }
  if (!compare) {
    std::optional<PickReduction> findFirst = matchFindFirst(op, whyNot);
    if (!findFirst)
      whyNot = "no accumulator is compared with an element by an ordered <, <=, > or >=, "
               "and " + whyNot;
    return findFirst;
  }
  PickReduction pick;
  pick.rule = PickReduction::Rule::Extremum;
  pick.compare = compare;
  std::optional<unsigned> lhsInit = initOf(compare->getOperand(0));
  std::optional<unsigned> rhsInit = initOf(compare->getOperand(1));
  if (lhsInit.has_value() == rhsInit.has_value())
    return whyNot = "the comparison does not compare an element with one accumulator",
           std::nullopt;
  pick.elementIsLhs = rhsInit.has_value();
  pick.comparedInit = pick.elementIsLhs ? *rhsInit : *lhsInit;
  pick.element = compare->getOperand(pick.elementIsLhs ? 0 : 1);
  if (!readsNoAccumulator(op, pick.element))
    return whyNot = "the compared element reads an accumulator", std::nullopt;
  std::optional<std::pair<bool, bool>> predicate =
      extremumPredicate(compare, pick.elementIsLhs);
  if (!predicate)
    return whyNot = "the comparison is not an ordered <, <=, > or >=", std::nullopt;
  std::tie(pick.isMax, pick.strict) = *predicate;
  pick.isUnsigned = isUnsignedCompare(compare);
  pick.accumulatorOps.insert(compare);
  pick.payloads.assign(numInits, Value());
  for (unsigned i = 0; i < numInits; ++i) {
    Value yielded = yield.getOperand(i);
    BlockArgument acc = accumulator(i);
    auto select = yielded.getDefiningOp<arith::SelectOp>();
    if (select && select.getCondition() == compare->getResult(0) &&
        select.getFalseValue() == acc && readsNoAccumulator(op, select.getTrueValue())) {
      pick.payloads[i] = select.getTrueValue();
      pick.accumulatorOps.insert(select);
      continue;
    }
    Operation *combiner = yielded.getDefiningOp();
    if (i != pick.comparedInit || !combiner || combiner->getNumOperands() != 2 ||
        !llvm::is_contained(combiner->getOperands(), Value(acc)) ||
        !llvm::is_contained(combiner->getOperands(), pick.element))
      return whyNot = "accumulator " + std::to_string(i) +
                      " is neither selected by the comparison nor its combined extremum",
             std::nullopt;
    bool max = isa<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(combiner);
    bool min = isa<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(combiner);
    bool unsignedCombiner = isa<arith::MaxUIOp, arith::MinUIOp>(combiner);
    if ((!max && !min) || max != pick.isMax ||
        (isa<arith::CmpIOp>(compare) && unsignedCombiner != isUnsignedCompare(compare)))
      return whyNot = "the running value's combiner does not match the comparison",
             std::nullopt;
    pick.valueCombiner = combiner;
    pick.cutAtFirstNaN = isa<arith::MaximumFOp, arith::MinimumFOp>(combiner);
    pick.accumulatorOps.insert(combiner);
  }
  for (unsigned i = 0; i < numInits; ++i)
    for (Operation *user : accumulator(i).getUsers())
      if (!pick.accumulatorOps.contains(user))
        return whyNot = "an accumulator has other uses", std::nullopt;
  return pick;
}

} // namespace

std::optional<PickReduction> mlir::dyno::matchPickReduction(linalg::GenericOp op,
                                                            std::string &whyNot) {
  std::optional<PickReduction> pick = matchPick(op, whyNot);
  if (!pick)
    return std::nullopt;
  // The ops that read accumulators feed only each other and the yield.
  for (Operation &inner : op.getBody()->without_terminator())
    for (Value operand : inner.getOperands())
      if (pick->accumulatorOps.contains(operand.getDefiningOp()) &&
          !pick->accumulatorOps.contains(&inner))
        return whyNot = "an accumulator's update is used by other ops", std::nullopt;
  return pick;
}
