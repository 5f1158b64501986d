//===- RelaxSoftmaxMaximum.cpp - A softmax's row maximum as a plain max -*- C++ -*-===//
//
// A softmax subtracts its row maximum only to keep exp in range; whether that maximum
// propagates NaN, and the sign of its zero, never reach the softmax's results. This
// pass proves that shape on linalg-on-tensors and marks the maximum `nnan nsz`, which
// LLVM lowers to one vmaxps per vector instead of five instructions. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#define DEBUG_TYPE "dyno-relax-softmax-maximum"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNORELAXSOFTMAXMAXIMUM
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// The one op of `op`'s body before its yield, when the yield returns that op's result
/// and the body holds nothing else.
Operation *soleComputation(linalg::GenericOp op) {
  Block *body = op.getBody();
  if (body->getOperations().size() != 2)
    return nullptr;
  Operation *computation = &body->front();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (computation->getNumResults() != 1 || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != computation->getResult(0))
    return nullptr;
  return computation;
}

/// Whether `op`'s body combines its input with its accumulator by `Combiner` only:
/// `out = combine(in, out)`, either operand order.
template <typename Combiner>
Combiner reductionCombiner(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return nullptr;
  auto combine = dyn_cast_or_null<Combiner>(soleComputation(op));
  if (!combine)
    return nullptr;
  Block *body = op.getBody();
  Value in = body->getArgument(0), out = body->getArgument(1);
  bool operands = (combine.getLhs() == in && combine.getRhs() == out) ||
                  (combine.getLhs() == out && combine.getRhs() == in);
  return operands ? combine : nullptr;
}

/// The loop structure of the reduction that the others must share: the same number of
/// loops, the element map (`x` and the exponentials) and the row map (the maximum, the
/// sum and what is derived from it).
struct RowShape {
  unsigned numLoops;
  AffineMap elementMap;
  AffineMap rowMap;

  static RowShape of(linalg::GenericOp maximum) {
    return {maximum.getNumLoops(), maximum.getIndexingMapsArray()[0],
            maximum.getIndexingMapsArray()[1]};
  }
};

/// The input operand of `op` that reads `value` through `map`, if exactly one does.
OpOperand *inputReading(linalg::GenericOp op, Value value, AffineMap map) {
  OpOperand *found = nullptr;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    if (operand->get() != value)
      continue;
    if (found || op.getMatchingIndexingMap(operand) != map)
      return nullptr;
    found = operand;
  }
  return found;
}

bool isAllParallel(linalg::GenericOp op, const RowShape &shape) {
  return op.getNumLoops() == shape.numLoops && op.getNumLoops() == op.getNumParallelLoops() &&
         op.getNumDpsInits() == 1;
}

/// `e = exp(x - m)`, elementwise over the rows, with `x` and `m` read as the maximum's
/// reduction read them and `e` written like `x`.
bool isShiftedExponential(linalg::GenericOp op, Value x, Value maximum,
                          const RowShape &shape) {
  if (!isAllParallel(op, shape) || op.getNumDpsInputs() != 2 ||
      op.getIndexingMapsArray().back() != shape.elementMap)
    return false;
  OpOperand *xOperand = inputReading(op, x, shape.elementMap);
  OpOperand *maximumOperand = inputReading(op, maximum, shape.rowMap);
  if (!xOperand || !maximumOperand)
    return false;
  Block *body = op.getBody();
  if (body->getOperations().size() != 3)
    return false;
  auto difference = dyn_cast<arith::SubFOp>(&body->front());
  auto exponential = dyn_cast<math::ExpOp>(difference ? difference->getNextNode() : nullptr);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  return difference && exponential &&
         difference.getLhs() == op.getMatchingBlockArgument(xOperand) &&
         difference.getRhs() == op.getMatchingBlockArgument(maximumOperand) &&
         exponential.getOperand() == difference.getResult() &&
         yield.getNumOperands() == 1 && yield.getOperand(0) == exponential.getResult();
}

/// `s = sum(e)` over the rows, reduced as the maximum was.
bool isRowSum(linalg::GenericOp op, Value exponentials, linalg::GenericOp maximum) {
  return reductionCombiner<arith::AddFOp>(op) &&
         op.getDpsInputOperand(0)->get() == exponentials &&
         op.getIndexingMapsArray() == maximum.getIndexingMapsArray() &&
         op.getIteratorTypesArray() == maximum.getIteratorTypesArray();
}

/// Whether `value` is NaN wherever the row sum `sum` is: the sum itself, or its
/// reciprocals `1 / s` (dyno-multiply-by-reciprocals).
bool isNaNWhereSumIs(Value value, Value sum) {
  if (value == sum)
    return true;
  auto reciprocal = value.getDefiningOp<linalg::GenericOp>();
  if (!reciprocal || reciprocal.getNumDpsInputs() != 1 || reciprocal.getNumDpsInits() != 1 ||
      reciprocal.getDpsInputOperand(0)->get() != sum ||
      reciprocal.getNumLoops() != reciprocal.getNumParallelLoops() ||
      !llvm::all_of(reciprocal.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  auto division = dyn_cast_or_null<arith::DivFOp>(soleComputation(reciprocal));
  return division && division.getRhs() == reciprocal.getBody()->getArgument(0);
}

/// `y = e * v` or `y = e / v`, elementwise, where `v` is NaN wherever its row's sum is.
bool isNormalization(linalg::GenericOp op, Value exponentials, Value sum,
                     const RowShape &shape) {
  if (!isAllParallel(op, shape) || op.getNumDpsInputs() != 2)
    return false;
  OpOperand *eOperand = inputReading(op, exponentials, shape.elementMap);
  if (!eOperand)
    return false;
  OpOperand *vOperand = op.getDpsInputOperand(eOperand->getOperandNumber() == 0 ? 1 : 0);
  if (op.getMatchingIndexingMap(vOperand) != shape.rowMap ||
      !isNaNWhereSumIs(vOperand->get(), sum))
    return false;
  Value e = op.getMatchingBlockArgument(eOperand), v = op.getMatchingBlockArgument(vOperand);
  Operation *computation = soleComputation(op);
  if (auto product = dyn_cast_or_null<arith::MulFOp>(computation))
    return (product.getLhs() == e && product.getRhs() == v) ||
           (product.getLhs() == v && product.getRhs() == e);
  if (auto quotient = dyn_cast_or_null<arith::DivFOp>(computation))
    return quotient.getLhs() == e && quotient.getRhs() == v;
  return false;
}

/// Whether every use of `maximum`'s result is a softmax's: its exponentials `exp(x - m)`
/// are summed over the same rows, and used otherwise only divided by (or multiplied with
/// the reciprocals of) that sum. A NaN in a row then makes its exponential, its sum and
/// all its results NaN whatever the maximum is, and without NaN the maximum's value is
/// the same up to the sign of a zero, which `x - m` cannot show through exp.
bool onlyShiftsASoftmax(linalg::GenericOp maximum) {
  Value x = maximum.getDpsInputOperand(0)->get();
  RowShape shape = RowShape::of(maximum);
  Value rowMaximum = maximum.getResult(0);
  if (rowMaximum.use_empty())
    return false;
  for (Operation *user : rowMaximum.getUsers()) {
    auto exponential = dyn_cast<linalg::GenericOp>(user);
    if (!exponential || !isShiftedExponential(exponential, x, rowMaximum, shape))
      return false;
    Value exponentials = exponential.getResult(0);
    Value sum;
    for (Operation *consumer : exponentials.getUsers()) {
      auto generic = dyn_cast<linalg::GenericOp>(consumer);
      if (generic && !sum && isRowSum(generic, exponentials, maximum))
        sum = generic.getResult(0);
    }
    if (!sum)
      return false;
    for (Operation *consumer : exponentials.getUsers()) {
      auto generic = dyn_cast<linalg::GenericOp>(consumer);
      if (!generic)
        return false;
      if (generic.getResult(0) != sum && !isNormalization(generic, exponentials, sum, shape))
        return false;
    }
  }
  return true;
}

/// `exp(x - m)` with `m` the maximum of `x`'s row (exact or relaxed: either is at least
/// every element that is not NaN) has an argument at most 0 or NaN.
void markNonPositiveExponentials(linalg::GenericOp maximum) {
  Value x = maximum.getDpsInputOperand(0)->get();
  RowShape shape = RowShape::of(maximum);
  for (Operation *user : maximum.getResult(0).getUsers()) {
    auto exponential = dyn_cast<linalg::GenericOp>(user);
    if (!exponential || !isShiftedExponential(exponential, x, maximum.getResult(0), shape))
      continue;
    exponential.getBody()->walk([&](math::ExpOp exp) {
      exp->setAttr(dyno::kNonPositiveArgumentAttr, UnitAttr::get(exp->getContext()));
    });
  }
}

struct RelaxSoftmaxMaximumPass
    : mlir::dyno::impl::DynoRelaxSoftmaxMaximumBase<RelaxSoftmaxMaximumPass> {
  void runOnOperation() override {
    getOperation()->walk([&](linalg::GenericOp op) {
      auto combine = reductionCombiner<arith::MaximumFOp>(op);
      if (!combine || !op.hasPureTensorSemantics())
        return;
      markNonPositiveExponentials(op);
      if (!onlyShiftsASoftmax(op))
        return;
      arith::FastMathFlags current = combine.getFastmath();
      combine.setFastmath(current | arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
    });
  }
};
} // namespace
