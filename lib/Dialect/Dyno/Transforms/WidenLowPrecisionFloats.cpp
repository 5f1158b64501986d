//===- WidenLowPrecisionFloats.cpp - bf16/f16 computed in f32 ---*- C++ -*-===//
//
// Eager PyTorch computes every bf16/f16 op in float32 and rounds its result once
// (ATen's opmath type), and accumulates reductions in float32. torch-mlir lowers such ops
// to linalg bodies that compute in the low precision itself: each arithmetic op rounds,
// a sum accumulates in bf16 (8 bits of mantissa), and Triton's GPU compiler rejects
// `tl.erf`/`tl.exp` of bf16 blocks. This pass rewrites each linalg.generic that computes
// in bf16/f16 to compute in f32: inputs widen at entry, results narrow at the yield, an
// explicit truncation keeps its rounding, and a reduction's low-precision accumulator
// becomes an f32 tensor rounded once after the reduction. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/LibraryCalls.h"
#include "dyno/Dialect/Dyno/Transforms/LowPrecisionFloats.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOWIDENLOWPRECISIONFLOATS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

namespace {
bool hasLowPrecision(TypeRange types) {
  return llvm::any_of(types, [](Type t) { return isLowPrecisionFloat(t); });
}

/// Ops that compute the same function of their operands' values in f32 as eager computes
/// in its float32 opmath: arithmetic, comparisons, selects and math functions.
bool isWidenable(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  if (isa<math::MathDialect>(op->getDialect()))
    return true;
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp, arith::RemFOp,
             arith::NegFOp, arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::CmpFOp, arith::SelectOp, arith::FPToSIOp,
             arith::FPToUIOp>(op);
}

/// `constant` as an f32 constant, rounded first to `roundTo` when given (an explicit
/// truncation, computed exactly here), else of the same value (a bf16/f16 constant).
Value widenConstant(OpBuilder &builder, Location loc, arith::ConstantFloatOp constant,
                    FloatType roundTo = {}) {
  APFloat value = constant.value();
  bool losesInfo = false;
  if (roundTo)
    value.convert(roundTo.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
  value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &losesInfo);
  return arith::ConstantFloatOp::create(builder, loc, builder.getF32Type(), value);
}

/// Whether the generic computes in a low precision: some op other than the casts at
/// its edges has a bf16/f16 operand or result, or a reduction accumulates in one.
bool computesInLowPrecision(linalg::GenericOp generic) {
  Block *body = generic.getBody();
  for (Operation &op : body->without_terminator()) {
    if (op.getNumRegions() != 0)
      return false;  // nested loops (per-element loops) keep their own types
    if (isa<arith::ExtFOp, arith::TruncFOp>(op))
      continue;
    if (hasLowPrecision(op.getOperandTypes()) || hasLowPrecision(op.getResultTypes()))
      return true;
  }
  if (generic.getNumReductionLoops() == 0)
    return false;
  for (OpOperand &init : generic.getDpsInitsMutable())
    if (isLowPrecisionFloat(getElementTypeOrSelf(init.get().getType())) &&
        !generic.getMatchingBlockArgument(&init).use_empty())
      return true;
  return false;
}

/// A reduction's init, widened: a constant fill is refilled in f32, anything else cast.
Value widenInit(OpBuilder &builder, Location loc, Value init, Type wide) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    Value value = fill.getInputs()[0];
    if (auto constant = value.getDefiningOp<arith::ConstantFloatOp>()) {
      Value wideValue = widenConstant(builder, loc, constant);
      Value empty = tensor::EmptyOp::create(
          builder, loc, tensor::getMixedSizes(builder, loc, init), wide);
      return linalg::FillOp::create(builder, loc, wideValue, empty).getResult(0);
    }
  }
  return castTensorElements(builder, loc, init, wide);
}

/// Builds a generic's body anew in f32: maps each value of the old body to its value in
/// the new one, and each low-precision value to the f32 value standing for it.
class BodyWidener {
public:
  BodyWidener(OpBuilder &builder, Location loc, Type wide)
      : builder(builder), loc(loc), wide(wide) {}

  /// The f32 value standing for `old` (a low-precision value of the old body, or one
  /// defined above it: torch-mlir's bodies use scalar constants of the function).
  Value wideOf(Value old) {
    if (Value wideValue = wideValues.lookup(old))
      return wideValue;
    Value wideValue;
    if (Value narrow = mapping.lookupOrNull(old))  // a block argument, widened at first use
      wideValue = arith::ExtFOp::create(builder, loc, wide, narrow);
    else if (auto constant = old.getDefiningOp<arith::ConstantFloatOp>())
      wideValue = widenConstant(builder, loc, constant);
    else
      wideValue = arith::ExtFOp::create(builder, loc, wide, old);
    wideValues[old] = wideValue;
    return wideValue;
  }

  /// The value of the new body standing for `old` in its own type.
  Value narrowOf(Value old) {
    if (!isLowPrecisionFloat(old.getType()))
      return mapping.lookupOrDefault(old);
    if (Value narrow = mapping.lookupOrNull(old))
      return narrow;
    if (!wideValues.count(old))
      return old;  // defined above the body
    auto narrow = arith::TruncFOp::create(builder, loc, old.getType(), wideOf(old));
    narrow->setAttr(kOpRoundingAttr, builder.getUnitAttr());
    mapping.map(old, narrow);
    return narrow;
  }

  void mapArgument(BlockArgument old, Value now) {
    if (!isLowPrecisionFloat(old.getType())) {
      mapping.map(old, now);
      return;
    }
    if (now.getType() == wide) {
      wideValues[old] = now;
      return;
    }
    mapping.map(old, now);
  }

  void widen(Operation &op) {
    if (auto ext = dyn_cast<arith::ExtFOp>(op); ext && isLowPrecisionFloat(ext.getIn().getType())) {
      Value value = wideOf(ext.getIn());
      if (ext.getType() != wide)
        value = arith::ExtFOp::create(builder, loc, ext.getType(), value);
      mapping.map(ext.getResult(), value);
      return;
    }
    if (auto trunc = dyn_cast<arith::TruncFOp>(op); trunc && isLowPrecisionFloat(trunc.getType())) {
      // A constant is rounded here, once and exactly (Triton's interpreter casts an f64
      // scalar to bf16 as 0).
      if (auto constant = trunc.getIn().getDefiningOp<arith::ConstantFloatOp>()) {
        wideValues[trunc.getResult()] =
            widenConstant(builder, loc, constant, cast<FloatType>(trunc.getType()));
        return;
      }
      // An explicit rounding stays exact: round, then compute on in f32.
      Value in = isLowPrecisionFloat(trunc.getIn().getType())
                     ? wideOf(trunc.getIn())
                     : mapping.lookupOrDefault(trunc.getIn());
      Value narrow = arith::TruncFOp::create(builder, loc, trunc.getType(), in);
      mapping.map(trunc.getResult(), narrow);
      wideValues[trunc.getResult()] = arith::ExtFOp::create(builder, loc, wide, narrow);
      return;
    }
    if (auto constant = dyn_cast<arith::ConstantFloatOp>(op);
        constant && isLowPrecisionFloat(constant.getType())) {
      wideValues[constant.getResult()] = widenConstant(builder, loc, constant);
      return;
    }
    if (isWidenable(&op)) {
      // Operands first: widening one may create an op, which must come before the clone.
      SmallVector<Value> operands;
      for (Value old : op.getOperands())
        operands.push_back(isLowPrecisionFloat(old.getType()) ? wideOf(old)
                                                         : mapping.lookupOrDefault(old));
      Operation *clone = builder.clone(op);
      clone->setOperands(operands);
      for (auto [old, now] : llvm::zip(op.getResults(), clone->getResults())) {
        if (isLowPrecisionFloat(old.getType())) {
          now.setType(wide);
          wideValues[old] = now;
        } else {
          mapping.map(old, now);
        }
      }
      return;
    }
    // Any other op (index arithmetic, integer casts, extracts) keeps its types: its
    // low-precision operands are rounded, its low-precision results widened.
    SmallVector<Value> operands;
    for (Value old : op.getOperands())
      operands.push_back(narrowOf(old));
    IRMapping operandMapping;
    operandMapping.map(op.getOperands(), operands);
    Operation *clone = builder.clone(op, operandMapping);
    for (auto [old, now] : llvm::zip(op.getResults(), clone->getResults())) {
      mapping.map(old, now);
      if (isLowPrecisionFloat(old.getType()))
        wideValues[old] = arith::ExtFOp::create(builder, loc, wide, now);
    }
  }

  /// The value yielded for `old` into an init of element type `type`.
  Value yielded(Value old, Type type) {
    if (isLowPrecisionFloat(old.getType()))
      return type == wide ? wideOf(old) : narrowOf(old);
    return mapping.lookupOrDefault(old);
  }

private:
  OpBuilder &builder;
  Location loc;
  Type wide;
  IRMapping mapping;                   // old value -> new value of the same type
  llvm::DenseMap<Value, Value> wideValues;  // old low-precision value -> its f32 value
};

void widenGeneric(linalg::GenericOp generic, IRRewriter &rewriter) {
  Location loc = generic.getLoc();
  Type wide = rewriter.getF32Type();
  rewriter.setInsertionPoint(generic);
  bool reduces = generic.getNumReductionLoops() > 0;

  SmallVector<Value> inits;
  SmallVector<bool> widened;
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    Type element = getElementTypeOrSelf(init.get().getType());
    bool accumulates = reduces && isLowPrecisionFloat(element) &&
                       !generic.getMatchingBlockArgument(&init).use_empty();
    widened.push_back(accumulates);
    inits.push_back(accumulates ? widenInit(rewriter, loc, init.get(), wide) : init.get());
  }
  SmallVector<Type> resultTypes;
  for (Value init : inits)
    resultTypes.push_back(init.getType());

  Block *oldBody = generic.getBody();
  auto widenedGeneric = linalg::GenericOp::create(
      rewriter, loc, resultTypes, generic.getDpsInputs(), inits,
      generic.getIndexingMapsArray(), generic.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        BodyWidener widener(b, l, wide);
        for (auto [old, now] : llvm::zip(oldBody->getArguments(), args))
          widener.mapArgument(old, now);
        for (Operation &op : oldBody->without_terminator())
          widener.widen(op);
        SmallVector<Value> yields;
        for (auto [old, init] : llvm::zip(oldBody->getTerminator()->getOperands(), inits))
          yields.push_back(widener.yielded(old, getElementTypeOrSelf(init.getType())));
        linalg::YieldOp::create(b, l, yields);
      });
  // Carry discardable attributes (none of linalg's own) across.
  for (NamedAttribute attribute : generic->getDiscardableAttrs())
    widenedGeneric->setAttr(attribute.getName(), attribute.getValue());

  SmallVector<Value> results;
  for (auto [index, result] : llvm::enumerate(widenedGeneric.getResults())) {
    Type original = generic.getResult(index).getType();
    results.push_back(widened[index]
                          ? castTensorElements(rewriter, loc, result,
                                               getElementTypeOrSelf(original),
                                               /*opRounding=*/true)
                          : result);
  }
  rewriter.replaceOp(generic, results);
}

/// Whether `generic` only rounds its one input to a low-precision float (elementwise).
bool onlyRounds(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0)
    return false;
  Block *body = generic.getBody();
  auto trunc = dyn_cast<arith::TruncFOp>(body->front());
  return body->getOperations().size() == 2 && trunc &&
         trunc.getIn() == body->getArgument(0) && isLowPrecisionFloat(trunc.getType()) &&
         body->getTerminator()->getOperand(0) == trunc.getResult();
}

/// Whether the f32 `result` of a contraction is only rounded to a low precision: what
/// torch-mlir emits for a bf16/f16 mm, bmm or convolution (and for addmm, after adding
/// the bias). A product the program reads in f32 (`a.float() @ b.float()` of bf16 `a`
/// and `b`) is not: a low-precision library call would round it (0.05 off in a bf16 ulp
/// where eager's f32 product is exact to f32).
bool onlyRoundedToLowPrecision(Value result, bool throughBiasAdd) {
  return !result.use_empty() && llvm::all_of(result.getUsers(), [&](Operation *user) {
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic)
      return false;
    if (onlyRounds(generic))
      return true;
    // addmm: the add of a row bias that accumulateIntoRowBias moves into the call (any
    // other add would round the product before it), then the rounding.
    Block *body = generic.getBody();
    if (!throughBiasAdd || generic.getNumDpsInputs() != 2 || generic.getNumResults() != 1 ||
        generic.getNumLoops() != 2 || generic.getNumReductionLoops() != 0 ||
        body->getOperations().size() != 2 || !isa<arith::AddFOp>(body->front()))
      return false;
    MLIRContext *context = generic.getContext();
    AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(1, context)}, context);
    unsigned product = generic.getDpsInputs()[0] == result ? 0 : 1;
    Value bias = generic.getDpsInputs()[1 - product];
    return generic.getIndexingMapsArray()[1 - product] == row &&
           widenedLowPrecisionSource(bias) &&
           onlyRoundedToLowPrecision(generic.getResult(0), /*throughBiasAdd=*/false);
  });
}

/// A matmul or convolution of bf16/f16 operands widened to f32 whose result is only
/// rounded back (torch-mlir's mm/addmm) reads the low-precision operands directly:
/// linalg's contractions extend their inputs to the accumulator's type, so the value is
/// the same, and dyno-form-kernels then calls the library in the low precision, as
/// torch-mlir's bmm and convolutions already are.
template <typename ContractionOp>
void readLowPrecisionOperands(ContractionOp contraction, IRRewriter &rewriter) {
  if (!onlyRoundedToLowPrecision(contraction->getResult(0),
                                 std::is_same_v<ContractionOp, linalg::MatmulOp>))
    return;
  SmallVector<Value> inputs;
  bool narrowed = false;
  for (Value input : contraction.getDpsInputs()) {
    Value source = widenedLowPrecisionSource(input);
    narrowed |= bool(source);
    inputs.push_back(source ? source : input);
  }
  if (!narrowed)
    return;
  // Named ops carry a body typed by their operands: build the op anew.
  rewriter.setInsertionPoint(contraction);
  auto rebuilt = ContractionOp::create(rewriter, contraction.getLoc(),
                                       contraction->getResultTypes(), inputs,
                                       contraction.getDpsInits(),
                                       namedOpAttributes(contraction));
  rewriter.replaceOp(contraction, rebuilt->getResults());
}

/// Slices each input of a named op to the extent its loops read. A max pool with
/// ceil_mode pads its input past the last window (torch-mlir pads to a whole stride);
/// the named op allows that, but the generic it generalizes to infers its loop ranges
/// from the input's shape and fails to verify.
void sliceInputsToTheirReadExtent(linalg::LinalgOp op, IRRewriter &rewriter) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type || !type.hasStaticShape())
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<int64_t> extents;
    bool smaller = false;
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      // The largest index the loops reach (indexing maps of named ops have nonnegative
      // coefficients), plus one.
      SmallVector<AffineExpr> lasts;
      for (int64_t range : ranges)
        lasts.push_back(getAffineConstantExpr(range - 1, op.getContext()));
      auto last = dyn_cast<AffineConstantExpr>(
          expr.replaceDims(lasts).replaceSymbols({}));
      if (!last)
        return;
      int64_t extent = last.getValue() + 1;
      if (extent > type.getDimSize(dim))
        return;
      smaller |= extent < type.getDimSize(dim);
      extents.push_back(extent);
    }
    if (!smaller)
      continue;
    rewriter.setInsertionPoint(op);
    SmallVector<OpFoldResult> offsets(extents.size(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(extents.size(), rewriter.getIndexAttr(1));
    for (int64_t extent : extents)
      sizes.push_back(rewriter.getIndexAttr(extent));
    Value slice = tensor::ExtractSliceOp::create(rewriter, op.getLoc(), input->get(),
                                                 offsets, sizes, strides);
    rewriter.modifyOpInPlace(op, [&] { input->set(slice); });
  }
}

struct WidenLowPrecisionFloatsPass
    : dyno::impl::DynoWidenLowPrecisionFloatsBase<WidenLowPrecisionFloatsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> contractions;
    getOperation().walk([&](Operation *op) {
      if (isLibraryContraction(op))
        contractions.push_back(op);
    });
    for (Operation *op : contractions)
      llvm::TypeSwitch<Operation *>(op)
          .Case<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp,
                linalg::Conv2DNgchwGfchwOp, linalg::DepthwiseConv2DNchwChwOp>(
              [&](auto contraction) { readLowPrecisionOperands(contraction, rewriter); });
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp matmul) { matmuls.push_back(matmul); });
    for (linalg::MatmulOp matmul : matmuls)
      accumulateIntoRowBias(matmul, rewriter, /*float32=*/false);
    // Named reductions other than library calls (max pooling) are widened as generics:
    // Triton's interpreter compares bf16 blocks by their bits (a bf16 max pool gave -inf).
    SmallVector<linalg::LinalgOp> named;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp>(op) && !isLibraryContraction(op) &&
          op.getNumReductionLoops() > 0 && op.getNumDpsInits() == 1 &&
          isLowPrecisionFloat(getElementTypeOrSelf(op.getDpsInits()[0].getType())))
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      sliceInputsToTheirReadExtent(op, rewriter);
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }

    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (computesInLowPrecision(generic))
        generics.push_back(generic);
    });
    for (linalg::GenericOp generic : generics)
      widenGeneric(generic, rewriter);
  }
};
} // namespace
