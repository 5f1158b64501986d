//===- RemoveProvenAssertions.cpp - Drop checks that value ranges prove -*- C++ -*-===//
//
// dyno-check-gather-bounds and torch-mlir assert that every data-dependent index is in
// bounds; dyno-hoist-kernel-assertions turns each assertion into a reduction checked on
// the host. Where the indices are computed from values whose ranges are known (sort
// indices, loop indices, constants, topk positions divided by k, histogram bins), the
// check cannot fail: on a GPU it costs two launches (the reduction and the assert). This
// pass bounds values and tensor elements and removes the assertions whose condition is
// true for every value in those bounds. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dyno-remove-proven-assertions"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOREMOVEPROVENASSERTIONS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// Bounds of a scalar, or of every element of a tensor: an integer range (upstream's
/// ConstantIntRanges), a closed interval of finite floats (never NaN), or unknown.
struct Bounds {
  std::optional<ConstantIntRanges> ints;
  std::optional<std::pair<APFloat, APFloat>> floats;

  static Bounds unknown() { return {}; }
  static Bounds ofInts(const ConstantIntRanges &range) { return {range, std::nullopt}; }
  static Bounds ofFloats(const APFloat &lo, const APFloat &hi) {
    if (!lo.isFinite() || !hi.isFinite() || hi < lo)
      return unknown();
    return {std::nullopt, std::make_pair(lo, hi)};
  }
  bool isKnown() const { return ints || floats; }
  bool isTrue() const {
    if (!ints || ints->umin().getBitWidth() != 1)
      return false;
    std::optional<APInt> value = ints->getConstantValue();
    return value && value->isOne();
  }
  bool operator==(const Bounds &other) const {
    if (ints || other.ints)
      return ints && other.ints && *ints == *other.ints;
    if (floats || other.floats)
      return floats && other.floats && floats->first.bitwiseIsEqual(other.floats->first) &&
             floats->second.bitwiseIsEqual(other.floats->second);
    return true;
  }
};

Bounds join(const Bounds &a, const Bounds &b) {
  if (a.ints && b.ints && a.ints->umin().getBitWidth() == b.ints->umin().getBitWidth())
    return Bounds::ofInts(a.ints->rangeUnion(*b.ints));
  if (a.floats && b.floats &&
      &a.floats->first.getSemantics() == &b.floats->first.getSemantics())
    return Bounds::ofFloats(minnum(a.floats->first, b.floats->first),
                            maxnum(a.floats->second, b.floats->second));
  return Bounds::unknown();
}

unsigned intWidth(Type type) {
  if (type.isIndex())
    return IndexType::kInternalStorageBitWidth;
  return type.getIntOrFloatBitWidth();
}

/// [0, size - 1] in `type` (an integer or index), for positions along a static size.
Bounds positions(Type type, int64_t size) {
  unsigned width = intWidth(type);
  if (ShapedType::isDynamic(size) || size < 1 || width < 64)
    return Bounds::unknown();
  return Bounds::ofInts(
      ConstantIntRanges::fromSigned(APInt(width, 0), APInt(width, size - 1, true)));
}

/// Bounds of scalars and tensor elements of one function, computed on demand. Sound
/// for the code Dyno emits: float bounds are rounded outward (and quotients widened by
/// two units in the last place, for a GPU's approximate division), so they hold
/// whether an op rounds to its own type or computes wider.
class ValueBounds {
public:
  Bounds scalar(Value value);
  Bounds elements(Value tensor);

private:
  /// A scalar op's result from its operands' bounds.
  Bounds evaluate(Operation *op, unsigned result, function_ref<Bounds(Value)> operand);
  Bounds evaluateFloat(Operation *op, function_ref<Bounds(Value)> operand);
  /// Runs `body` (block arguments bound by `arguments`) and returns its yields' bounds;
  /// the bounds of its values go to `values`.
  SmallVector<Bounds> runBody(Block *body, ArrayRef<Bounds> arguments,
                              DenseMap<Value, Bounds> &values);
  /// A linalg op's body with its outputs' bounds at a fixed point.
  struct BodyBounds {
    DenseMap<Value, Bounds> values;
    SmallVector<Bounds> results;
  };
  const BodyBounds &linalgBody(linalg::LinalgOp op);
  /// Bounds of a combiner region (scatter, scan) applied any number of times:
  /// `current` joined with the region's yield until it no longer grows.
  Bounds combined(Region &region, Bounds current, const Bounds &update,
                  bool updateFirst);
  Bounds libraryCall(dyno::LibraryCallOp call, unsigned result);
  /// Whether `indices` holds a permutation of 0 .. size - 1, and whether `scatter`
  /// overwrites every element of its original (an inverse permutation).
  bool isPermutation(Value indices, int64_t size);
  bool replacesEveryElement(dyno::ScatterOp scatter);

  DenseMap<Value, Bounds> scalars, tensors;
  DenseMap<Operation *, BodyBounds> bodies;
  unsigned depth = 0;
};

Bounds ValueBounds::scalar(Value value) {
  Block *block = value.getParentBlock();
  if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(block->getParentOp())) {
    const BodyBounds &body = linalgBody(linalgOp);
    auto it = body.values.find(value);
    return it == body.values.end() ? Bounds::unknown() : it->second;
  }
  if (auto it = scalars.find(value); it != scalars.end())
    return it->second;
  Bounds bounds;
  Operation *def = value.getDefiningOp();
  if (def && depth < 256) {
    ++depth;
    bounds = evaluate(def, cast<OpResult>(value).getResultNumber(),
                      [&](Value operand) { return scalar(operand); });
    --depth;
  }
  scalars[value] = bounds;
  return bounds;
}

Bounds ValueBounds::evaluate(Operation *op, unsigned result,
                             function_ref<Bounds(Value)> operand) {
  Type type = op->getResult(result).getType();
  // Integer constants and tensor.dim: their own range inference, below.
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto attr = dyn_cast<FloatAttr>(constant.getValue()))
      return Bounds::ofFloats(attr.getValue(), attr.getValue());
  }
  if (auto extract = dyn_cast<tensor::ExtractOp>(op))
    return elements(extract.getTensor());
  if (auto check = dyn_cast<dyno::CheckOp>(op))
    return operand(check.getValue());
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    Bounds condition = operand(select.getCondition());
    if (condition.ints) {
      if (std::optional<APInt> value = condition.ints->getConstantValue())
        return operand(value->isOne() ? select.getTrueValue() : select.getFalseValue());
    }
    return join(operand(select.getTrueValue()), operand(select.getFalseValue()));
  }
  if (isa<FloatType>(type) || isa<arith::FPToSIOp, arith::FPToUIOp>(op))
    return evaluateFloat(op, operand);
  auto infer = dyn_cast<InferIntRangeInterface>(op);
  if (!infer || !type.isSignlessIntOrIndex())
    return Bounds::unknown();
  SmallVector<IntegerValueRange> arguments;
  for (Value value : op->getOperands()) {
    Bounds bounds = operand(value);
    arguments.push_back(bounds.ints ? IntegerValueRange(*bounds.ints)
                                    : IntegerValueRange::getMaxRange(value));
  }
  Bounds inferred;
  Value wanted = op->getResult(result);
  // Triton kernels compute `index` in 32 bits where every size fits: an index range
  // beyond i32 may wrap there, so it proves nothing.
  auto fitsInt32 = [](const ConstantIntRanges &range) {
    return range.smin().sge(APInt::getSignedMinValue(32).sext(range.smin().getBitWidth())) &&
           range.smax().sle(APInt::getSignedMaxValue(32).sext(range.smax().getBitWidth()));
  };
  infer.inferResultRangesFromOptional(arguments,
                                      [&](Value value, const IntegerValueRange &range) {
                                        if (value == wanted && !range.isUninitialized() &&
                                            (!type.isIndex() || fitsInt32(range.getValue())))
                                          inferred = Bounds::ofInts(range.getValue());
                                      });
  return inferred;
}

/// Float ops that are monotone in each operand (or bounded by their operands'
/// corners), with conversions to and from integers.
Bounds ValueBounds::evaluateFloat(Operation *op, function_ref<Bounds(Value)> operand) {
  SmallVector<std::pair<APFloat, APFloat>> args;
  SmallVector<Bounds> intArgs;
  for (Value value : op->getOperands()) {
    Bounds bounds = operand(value);
    if (isa<FloatType>(value.getType())) {
      if (!bounds.floats)
        return Bounds::unknown();
      args.push_back(*bounds.floats);
    } else {
      intArgs.push_back(bounds);
    }
  }
  Type type = op->getResult(0).getType();
  auto rounded = [](APFloat value, const llvm::fltSemantics &semantics,
                    APFloat::roundingMode mode) {
    bool losesInfo = false;
    value.convert(semantics, mode, &losesInfo);
    return value;
  };
  // Products and quotients: the extremes are at the operands' corners.
  auto corners = [&](auto apply) {
    std::optional<APFloat> lo, hi;
    for (const APFloat &a : {args[0].first, args[0].second}) {
      for (const APFloat &b : {args[1].first, args[1].second}) {
        APFloat down = a, up = a;
        apply(down, b, APFloat::rmTowardNegative);
        apply(up, b, APFloat::rmTowardPositive);
        lo = lo ? minnum(*lo, down) : down;
        hi = hi ? maxnum(*hi, up) : up;
      }
    }
    return Bounds::ofFloats(*lo, *hi);
  };
  return TypeSwitch<Operation *, Bounds>(op)
      .Case<arith::SIToFPOp, arith::UIToFPOp>([&](Operation *) {
        if (!intArgs[0].ints)
          return Bounds::unknown();
        bool isSigned = isa<arith::SIToFPOp>(op);
        const ConstantIntRanges &range = *intArgs[0].ints;
        APFloat lo(cast<FloatType>(type).getFloatSemantics()), hi = lo;
        lo.convertFromAPInt(isSigned ? range.smin() : range.umin(), isSigned,
                            APFloat::rmTowardNegative);
        hi.convertFromAPInt(isSigned ? range.smax() : range.umax(), isSigned,
                            APFloat::rmTowardPositive);
        return Bounds::ofFloats(lo, hi);
      })
      .Case<arith::FPToSIOp, arith::FPToUIOp>([&](Operation *) {
        bool isSigned = isa<arith::FPToSIOp>(op);
        unsigned width = intWidth(op->getResult(0).getType());
        APSInt lo(width, !isSigned), hi(width, !isSigned);
        bool exact = false;
        auto invalid = [](APFloat::opStatus status) {
          return (static_cast<unsigned>(status) & APFloat::opInvalidOp) != 0;
        };
        if (invalid(args[0].first.convertToInteger(lo, APFloat::rmTowardZero, &exact)) ||
            invalid(args[0].second.convertToInteger(hi, APFloat::rmTowardZero, &exact)))
          return Bounds::unknown();
        return Bounds::ofInts(isSigned ? ConstantIntRanges::fromSigned(lo, hi)
                                       : ConstantIntRanges::fromUnsigned(lo, hi));
      })
      .Case<arith::ExtFOp, arith::TruncFOp>([&](Operation *) {
        const llvm::fltSemantics &semantics = cast<FloatType>(type).getFloatSemantics();
        return Bounds::ofFloats(
            rounded(args[0].first, semantics, APFloat::rmTowardNegative),
            rounded(args[0].second, semantics, APFloat::rmTowardPositive));
      })
      .Case<arith::AddFOp>([&](Operation *) {
        APFloat lo = args[0].first, hi = args[0].second;
        lo.add(args[1].first, APFloat::rmTowardNegative);
        hi.add(args[1].second, APFloat::rmTowardPositive);
        return Bounds::ofFloats(lo, hi);
      })
      .Case<arith::SubFOp>([&](Operation *) {
        APFloat lo = args[0].first, hi = args[0].second;
        lo.subtract(args[1].second, APFloat::rmTowardNegative);
        hi.subtract(args[1].first, APFloat::rmTowardPositive);
        return Bounds::ofFloats(lo, hi);
      })
      .Case<arith::NegFOp>([&](Operation *) {
        return Bounds::ofFloats(neg(args[0].second), neg(args[0].first));
      })
      .Case<arith::MulFOp>([&](Operation *) {
        return corners([](APFloat &a, const APFloat &b, APFloat::roundingMode mode) {
          a.multiply(b, mode);
        });
      })
      .Case<arith::DivFOp>([&](Operation *) {
        const APFloat &divisorLo = args[1].first, &divisorHi = args[1].second;
        bool positive = !divisorLo.isNegative() && !divisorLo.isZero();
        bool negative = divisorHi.isNegative() && !divisorHi.isZero();
        if (!positive && !negative)
          return Bounds::unknown(); // the divisor may be zero
        Bounds bounds = corners([](APFloat &a, const APFloat &b,
                                   APFloat::roundingMode mode) { a.divide(b, mode); });
        if (!bounds.floats)
          return bounds;
        // A GPU's f32 division may be off by two units in the last place, and
        // dyno-multiply-by-reciprocals later turns x / s into x * (1 / s) (about five):
        // the bounds widen by 2^-19 of their magnitude (16 units of an f32), plus one
        // unit for a bound near zero. The quotient's sign is exact all the same.
        APFloat lo = bounds.floats->first, hi = bounds.floats->second;
        bool nonNegative = !lo.isNegative() || lo.isZero();
        bool nonPositive = hi.isNegative() || hi.isZero();
        auto widened = [](APFloat bound, bool down) {
          APFloat margin = abs(bound);
          margin.multiply(APFloat(bound.getSemantics(), "0x1p-19"),
                          APFloat::rmTowardPositive);
          bound.add(down ? neg(margin) : margin,
                    down ? APFloat::rmTowardNegative : APFloat::rmTowardPositive);
          bound.next(/*nextDown=*/down);
          return bound;
        };
        lo = widened(lo, /*down=*/true);
        hi = widened(hi, /*down=*/false);
        if (nonNegative && lo.isNegative())
          lo = APFloat::getZero(lo.getSemantics());
        if (nonPositive && !hi.isNegative())
          hi = APFloat::getZero(hi.getSemantics(), /*Negative=*/true);
        return Bounds::ofFloats(lo, hi);
      })
      .Case<math::FloorOp, math::CeilOp, math::TruncOp, math::RoundOp,
            math::RoundEvenOp>([&](Operation *) {
        APFloat::roundingMode mode =
            TypeSwitch<Operation *, APFloat::roundingMode>(op)
                .Case<math::FloorOp>([](auto) { return APFloat::rmTowardNegative; })
                .Case<math::CeilOp>([](auto) { return APFloat::rmTowardPositive; })
                .Case<math::TruncOp>([](auto) { return APFloat::rmTowardZero; })
                .Case<math::RoundOp>([](auto) { return APFloat::rmNearestTiesToAway; })
                .Default([](auto) { return APFloat::rmNearestTiesToEven; });
        APFloat lo = args[0].first, hi = args[0].second;
        lo.roundToIntegral(mode);
        hi.roundToIntegral(mode);
        return Bounds::ofFloats(lo, hi);
      })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *) {
        return Bounds::ofFloats(maxnum(args[0].first, args[1].first),
                                maxnum(args[0].second, args[1].second));
      })
      .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *) {
        return Bounds::ofFloats(minnum(args[0].first, args[1].first),
                                minnum(args[0].second, args[1].second));
      })
      .Default([](Operation *) { return Bounds::unknown(); });
}

SmallVector<Bounds> ValueBounds::runBody(Block *body, ArrayRef<Bounds> arguments,
                                         DenseMap<Value, Bounds> &values) {
  values.clear();
  for (auto [argument, bounds] : llvm::zip(body->getArguments(), arguments))
    values[argument] = bounds;
  auto lookup = [&](Value value) {
    if (auto it = values.find(value); it != values.end())
      return it->second;
    if (value.getParentBlock() == body)
      return Bounds::unknown(); // an op with regions of its own, not evaluated
    return scalar(value);
  };
  for (Operation &op : body->without_terminator()) {
    if (op.getNumRegions() > 0)
      continue;
    for (OpResult result : op.getResults()) {
      if (auto index = dyn_cast<linalg::IndexOp>(op)) {
        auto linalgOp = cast<linalg::LinalgOp>(body->getParentOp());
        values[result] =
            positions(result.getType(), linalgOp.getStaticLoopRanges()[index.getDim()]);
        continue;
      }
      values[result] = evaluate(&op, result.getResultNumber(), lookup);
    }
  }
  SmallVector<Bounds> yields;
  for (Value value : body->getTerminator()->getOperands())
    yields.push_back(lookup(value));
  return yields;
}

const ValueBounds::BodyBounds &ValueBounds::linalgBody(linalg::LinalgOp op) {
  if (auto it = bodies.find(op); it != bodies.end())
    return it->second;
  // Seeded before evaluating, so that a cycle through this body ends as unknown.
  bodies[op];
  Block *body = op.getBlock();
  if (body->getNumArguments() != op->getNumOperands())
    return bodies[op]; // linalg.map and the like: no block argument per output
  auto operandBounds = [&](Value value) {
    return isa<ShapedType>(value.getType()) ? elements(value) : scalar(value);
  };
  SmallVector<Bounds> arguments, inits;
  for (OpOperand *input : op.getDpsInputOperands())
    arguments.push_back(operandBounds(input->get()));
  for (OpOperand &init : op.getDpsInitsMutable()) {
    inits.push_back(operandBounds(init.get()));
    arguments.push_back(inits.back());
  }
  unsigned numInputs = op.getNumDpsInputs();
  BodyBounds result;
  SmallVector<Bounds> yields;
  // An output's block argument holds its initial value or an earlier yield.
  for (int round = 0;; ++round) {
    yields = runBody(body, arguments, result.values);
    bool grew = false;
    for (auto [i, yield] : llvm::enumerate(yields)) {
      Value argument = body->getArgument(numInputs + i);
      if (argument.use_empty())
        continue;
      Bounds joined = join(arguments[numInputs + i], yield);
      if (joined == arguments[numInputs + i])
        continue;
      grew = true;
      arguments[numInputs + i] = round < 4 ? joined : Bounds::unknown();
    }
    if (!grew)
      break;
  }
  // Each output element is written by exactly one iteration only where every loop maps
  // to an output dimension; otherwise (reductions, a loop of size zero that no output
  // spans) an element may keep its initial value.
  bool writesEveryElementOnce =
      op.getNumReductionLoops() == 0 &&
      llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
        return op.getMatchingIndexingMap(&init).isPermutation();
      });
  for (auto [yield, init] : llvm::zip(yields, inits))
    result.results.push_back(writesEveryElementOnce ? yield : join(yield, init));
  return bodies[op] = std::move(result);
}

Bounds ValueBounds::combined(Region &region, Bounds current, const Bounds &update,
                             bool updateFirst) {
  DenseMap<Value, Bounds> values;
  for (int round = 0; round < 5; ++round) {
    SmallVector<Bounds> arguments = updateFirst ? SmallVector<Bounds>{update, current}
                                                : SmallVector<Bounds>{current, update};
    Bounds joined = join(current, runBody(&region.front(), arguments, values)[0]);
    if (joined == current)
      return current;
    current = joined;
  }
  return Bounds::unknown();
}

Bounds ValueBounds::libraryCall(dyno::LibraryCallOp call, unsigned result) {
  StringRef name = call.getName();
  bool sorts = name.starts_with("aten.sort.") || name.starts_with("aten.topk.");
  if (!sorts || call.getArgs().empty())
    return Bounds::unknown();
  if (result == 0)
    return elements(call.getArgs()[0]); // the same values, reordered
  // Positions along one dimension of the input: below its largest size.
  auto input = cast<RankedTensorType>(call.getArgs()[0].getType());
  if (!input.hasStaticShape() || input.getRank() == 0)
    return Bounds::unknown();
  int64_t largest = *llvm::max_element(input.getShape());
  return positions(getElementTypeOrSelf(call.getResult(result).getType()), largest);
}

/// The sort positions of a whole 1-D tensor of `size` elements (`aten.sort` of it), seen
/// through reshapes and through elementwise generics that pass them on unchanged (a
/// negative index's wraparound, `i < 0 ? i + n : i`, whose condition the bounds decide).
bool ValueBounds::isPermutation(Value indices, int64_t size) {
  for (int step = 0; step < 16; ++step) {
    Operation *def = indices.getDefiningOp();
    if (!def)
      return false;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(def)) {
      indices = def->getOperand(0);
      continue;
    }
    if (auto call = dyn_cast<dyno::LibraryCallOp>(def)) {
      if (call.getArgs().empty() || !call.getName().starts_with("aten.sort.") ||
          cast<OpResult>(indices).getResultNumber() != 1)
        return false;
      auto input = cast<RankedTensorType>(call.getArgs()[0].getType());
      return input.getRank() == 1 && input.getDimSize(0) == size;
    }
    auto generic = dyn_cast<linalg::GenericOp>(def);
    if (!generic || generic.getNumLoops() != generic.getNumParallelLoops() ||
        !llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return false;
    // Follow the yielded value through selects whose condition is decided.
    const BodyBounds &body = linalgBody(generic);
    Value yielded =
        generic.getBody()->getTerminator()->getOperand(cast<OpResult>(indices).getResultNumber());
    while (auto select = yielded.getDefiningOp<arith::SelectOp>()) {
      auto it = body.values.find(select.getCondition());
      if (it == body.values.end() || !it->second.ints)
        return false;
      std::optional<APInt> condition = it->second.ints->getConstantValue();
      if (!condition)
        return false;
      yielded = condition->isOne() ? select.getTrueValue() : select.getFalseValue();
    }
    auto argument = dyn_cast<BlockArgument>(yielded);
    if (!argument || argument.getOwner() != generic.getBody() ||
        argument.getArgNumber() >= generic.getNumDpsInputs())
      return false;
    indices = generic.getDpsInputs()[argument.getArgNumber()];
  }
  return false;
}

/// One index column into a 1-D original of n elements, n single-element updates at a
/// permutation of 0 .. n - 1, and a region that yields the update.
bool ValueBounds::replacesEveryElement(dyno::ScatterOp scatter) {
  auto original = cast<RankedTensorType>(scatter.getOriginal().getType());
  auto updates = cast<RankedTensorType>(scatter.getUpdates().getType());
  auto indices = cast<RankedTensorType>(scatter.getIndices().getType());
  if (original.getRank() != 1 || !original.hasStaticShape() ||
      scatter.getDimensionMap().size() != 1 || scatter.getDimensionMap()[0] != 0)
    return false;
  SmallVector<int64_t> column = {original.getDimSize(0), 1};
  if (updates.getShape() != ArrayRef<int64_t>(column) ||
      indices.getShape() != ArrayRef<int64_t>(column))
    return false;
  Block &body = scatter.getRegion().front();
  if (body.getNumArguments() != 2 || body.getTerminator()->getNumOperands() != 1 ||
      body.getTerminator()->getOperand(0) != body.getArgument(0))
    return false;
  return isPermutation(scatter.getIndices(), original.getDimSize(0));
}

Bounds ValueBounds::elements(Value tensor) {
  if (auto it = tensors.find(tensor); it != tensors.end())
    return it->second;
  Operation *def = tensor.getDefiningOp();
  if (!def || depth >= 256)
    return tensors[tensor] = Bounds::unknown();
  tensors[tensor] = Bounds::unknown(); // a cycle ends as unknown
  ++depth;
  unsigned result = cast<OpResult>(tensor).getResultNumber();
  Bounds bounds =
      TypeSwitch<Operation *, Bounds>(def)
          .Case([&](arith::ConstantOp constant) {
            // Index tensors of a graph's constants (torch-mlir's dense resources).
            auto ofValues = [](auto values, unsigned width) {
              if (values.empty() || values.size() > (1u << 20))
                return Bounds::unknown();
              auto [lo, hi] = std::minmax_element(values.begin(), values.end());
              return Bounds::ofInts(ConstantIntRanges::fromSigned(
                  APInt(width, *lo, /*isSigned=*/true), APInt(width, *hi, true)));
            };
            if (auto resource = dyn_cast<DenseI64ResourceElementsAttr>(constant.getValue())) {
              std::optional<ArrayRef<int64_t>> values = resource.tryGetAsArrayRef();
              return values ? ofValues(*values, 64) : Bounds::unknown();
            }
            if (auto resource = dyn_cast<DenseI32ResourceElementsAttr>(constant.getValue())) {
              std::optional<ArrayRef<int32_t>> values = resource.tryGetAsArrayRef();
              return values ? ofValues(*values, 32) : Bounds::unknown();
            }
            auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
            if (!dense || dense.getNumElements() > (1 << 20) || dense.empty())
              return Bounds::unknown();
            Type element = dense.getElementType();
            Bounds all;
            bool first = true;
            auto add = [&](Bounds next) {
              all = first ? next : join(all, next);
              first = false;
            };
            if (element.isSignlessIntOrIndex()) {
              for (APInt value : dense.getValues<APInt>())
                add(Bounds::ofInts(ConstantIntRanges::constant(
                    element.isIndex() ? value.sextOrTrunc(64) : value)));
            } else if (isa<FloatType>(element)) {
              for (APFloat value : dense.getValues<APFloat>())
                add(Bounds::ofFloats(value, value));
            } else {
              return Bounds::unknown();
            }
            return all;
          })
          .Case([&](linalg::LinalgOp op) {
            const BodyBounds &body = linalgBody(op);
            return result < body.results.size() ? body.results[result] : Bounds::unknown();
          })
          .Case([&](dyno::SortOp sort) {
            if (sort.getPrefix())
              return Bounds::unknown(); // the rest of each line is unspecified
            return elements(sort.getOutputs()[result]);
          })
          .Case([&](dyno::ScatterOp scatter) {
            // Every element replaced (an inverse permutation): the updates' bounds.
            if (replacesEveryElement(scatter))
              return elements(scatter.getUpdates());
            return combined(scatter.getRegion(), elements(scatter.getOriginal()),
                            elements(scatter.getUpdates()), /*updateFirst=*/true);
          })
          .Case([&](dyno::ScanOp scan) {
            Bounds input = elements(scan.getInputs()[0]);
            // An exclusive scan starts from the accumulator; a scan of zero length
            // returns it.
            auto scanned = cast<RankedTensorType>(scan.getInputs()[0].getType());
            int64_t length = scanned.getDimSize(scan.getDimension());
            bool mayBeEmpty = ShapedType::isDynamic(length) || length < 1;
            Bounds start = scan.getInclusive() && !mayBeEmpty
                               ? input
                               : join(input, elements(scan.getOutputs()[1]));
            return combined(scan.getRegion(), start, input, /*updateFirst=*/false);
          })
          .Case([&](dyno::LibraryCallOp call) { return libraryCall(call, result); })
          .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ExtractSliceOp,
                tensor::CastOp, tensor::ReshapeOp>(
              [&](Operation *op) { return elements(op->getOperand(0)); })
          .Case([&](tensor::InsertSliceOp insert) {
            return join(elements(insert.getSource()), elements(insert.getDest()));
          })
          .Case([&](tensor::ConcatOp concat) {
            Bounds all = elements(concat.getInputs()[0]);
            for (Value input : concat.getInputs().drop_front())
              all = join(all, elements(input));
            return all;
          })
          .Case([&](tensor::FromElementsOp fromElements) {
            if (fromElements.getElements().empty())
              return Bounds::unknown();
            Bounds all = scalar(fromElements.getElements()[0]);
            for (Value element : fromElements.getElements().drop_front())
              all = join(all, scalar(element));
            return all;
          })
          .Default([](Operation *) { return Bounds::unknown(); });
  --depth;
  return tensors[tensor] = bounds;
}

struct RemoveProvenAssertionsPass
    : dyno::impl::DynoRemoveProvenAssertionsBase<RemoveProvenAssertionsPass> {
  void runOnOperation() override {
    ValueBounds bounds;
    SmallVector<cf::AssertOp> proven;
    getOperation()->walk([&](cf::AssertOp assertion) {
      if (bounds.scalar(assertion.getArg()).isTrue())
        proven.push_back(assertion);
    });
    // Checks kept in kernels (dyno-keep-assertions-in-kernels): the same, per element.
    SmallVector<dyno::CheckOp> provenChecks;
    getOperation()->walk([&](dyno::CheckOp check) {
      if (bounds.scalar(check.getCondition()).isTrue())
        provenChecks.push_back(check);
    });
    // Selects in kernel bodies whose condition the bounds decide (a negative index's
    // wraparound, `i < 0 ? i + n : i`, of sort positions, also with its comparison in
    // a generic of its own): the value they always pick. Decided before anything is erased (the bounds cache values).
    SmallVector<std::pair<arith::SelectOp, Value>> decided;
    getOperation()->walk([&](arith::SelectOp select) {
      if (!isa<linalg::GenericOp>(select->getParentOp()) ||
          !select.getCondition().getType().isInteger(1))
        return;
      Bounds condition = bounds.scalar(select.getCondition());
      if (!condition.ints || condition.ints->umin().getBitWidth() != 1)
        return;
      if (std::optional<APInt> value = condition.ints->getConstantValue())
        decided.push_back(
            {select, value->isOne() ? select.getTrueValue() : select.getFalseValue()});
    });
    DenseSet<Operation *> erased;
    SmallVector<Operation *> worklist;
    // A decided select's result -> the value that replaced it: a select picking another
    // decided select (clamped, then wrapped) picks what replaced that one, which is
    // erased by then.
    DenseMap<Value, Value> replacedBy;
    for (auto [select, value] : decided) {
      LLVM_DEBUG(llvm::dbgs() << "decided: " << select << "\n");
      while (Value replacement = replacedBy.lookup(value))
        value = replacement;
      select.getResult().replaceAllUsesWith(value);
      replacedBy[select.getResult()] = value;
      for (Value operand : select->getOperands())
        if (Operation *def = operand.getDefiningOp())
          worklist.push_back(def);
      erased.insert(select);
      select.erase();
    }
    for (cf::AssertOp assertion : proven) {
      LLVM_DEBUG(llvm::dbgs() << "proven: " << assertion << "\n");
      Operation *condition = assertion.getArg().getDefiningOp();
      assertion.erase();
      // The check's own computation (its reduction, the extract) has no other reader,
      // nor has a decided select's comparison.
      if (condition)
        worklist.push_back(condition);
    }
    for (dyno::CheckOp check : provenChecks) {
      LLVM_DEBUG(llvm::dbgs() << "proven: " << check << "\n");
      Operation *condition = check.getCondition().getDefiningOp();
      check.getResult().replaceAllUsesWith(check.getValue());
      check.erase();
      if (condition)
        worklist.push_back(condition);
    }
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (erased.contains(op) || !isOpTriviallyDead(op))
        continue;
      // The ops in its regions go with it (a decided select's comparison in the body
      // of a check's generic may still be on the worklist).
      op->walk([&](Operation *nested) { erased.insert(nested); });
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          worklist.push_back(def);
      op->erase();
    }
  }
};
} // namespace
