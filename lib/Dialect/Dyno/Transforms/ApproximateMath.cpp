//===- ApproximateMath.cpp - Vectorizable transcendental math ---*- C++ -*-===//
//
// Upstream's polynomial approximations are only registered as a test pass; Dyno's CPU
// kernels need them so that loops with erf/exp/tanh vectorize. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "dyno-approximate-math"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOAPPROXIMATEMATH
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// f32 erf as PyTorch's vectorized CPU kernels compute it (Abramowitz & Stegun 7.1.26,
/// absolute error below 1.5e-7): one division and one exp instead of upstream's three
/// rational polynomials, and results that match eager's GELU closely. Below |x| = 0.5,
/// where that absolute error would be a large relative one, a Taylor series.
///   t = 1 / (1 + p|x|),  erf(x) = sign(x) * (1 - t * poly(t) * exp(-x*x))
struct ErfAbramowitzStegun : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ErfOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](float value) -> Value {
      Attribute attr = rewriter.getF32FloatAttr(value);
      if (auto shaped = dyn_cast<ShapedType>(type))
        attr = DenseElementsAttr::get(shaped, attr);
      return arith::ConstantOp::create(rewriter, loc, type, cast<TypedAttr>(attr));
    };
    Value x = op.getOperand();
    Value one = constant(1.0f);
    Value absX = math::AbsFOp::create(rewriter, loc, x);
    Value denominator = math::FmaOp::create(rewriter, loc, constant(0.3275911f), absX, one);
    Value t = arith::DivFOp::create(rewriter, loc, one, denominator);
    Value poly = constant(1.061405429f);
    for (float coefficient : {-1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f})
      poly = math::FmaOp::create(rewriter, loc, poly, t, constant(coefficient));
    Value square = arith::MulFOp::create(rewriter, loc, x, x);
    Value expNegSquare =
        math::ExpOp::create(rewriter, loc, arith::NegFOp::create(rewriter, loc, square));
    Value tail = arith::MulFOp::create(
        rewriter, loc, arith::MulFOp::create(rewriter, loc, poly, t), expNegSquare);
    Value magnitude = arith::SubFOp::create(rewriter, loc, one, tail);
    Value formula = math::CopySignOp::create(rewriter, loc, magnitude, x);
    // Near 0 the formula's absolute error (1.5e-7) is a large relative error: use the
    // Taylor series there (6 terms; relative error below 1e-7 for |x| < 0.5).
    Value series = constant(-1.0f / 1320.0f);
    for (float coefficient : {1.0f / 216.0f, -1.0f / 42.0f, 1.0f / 10.0f, -1.0f / 3.0f, 1.0f})
      series = math::FmaOp::create(rewriter, loc, series, square, constant(coefficient));
    Value taylor = arith::MulFOp::create(
        rewriter, loc, arith::MulFOp::create(rewriter, loc, x, constant(1.1283791670955126f)),
        series);
    Value small = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, absX,
                                        constant(0.5f));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, small, taylor, formula);
    return success();
  }
};

/// Upstream's log and log2 approximations read the exponent field, which is wrong for
/// subnormal inputs (log(1e-40) gave -87.3, not -92.1). A subnormal is scaled by 2^24
/// into the normal range first and 24 log(2) subtracted after: one log either way.
void scaleSubnormalLogArguments(Operation *root) {
  SmallVector<Operation *> logs;
  root->walk([&](Operation *op) {
    if (isa<math::LogOp, math::Log2Op>(op) && getElementTypeOrSelf(op->getResultTypes()[0]).isF32())
      logs.push_back(op);
  });
  for (Operation *op : logs) {
    OpBuilder builder(op);
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    Type type = x.getType();
    auto splat = [&](float value) -> Value {
      Attribute attr = builder.getF32FloatAttr(value);
      if (auto shaped = dyn_cast<ShapedType>(type))
        attr = DenseElementsAttr::get(shaped, value);
      return arith::ConstantOp::create(builder, loc, cast<TypedAttr>(attr));
    };
    Value subnormal = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OLT,
                                            math::AbsFOp::create(builder, loc, x),
                                            splat(0x1p-126f));
    Value scaled = arith::MulFOp::create(builder, loc, x, splat(0x1p24f));
    Value argument = arith::SelectOp::create(builder, loc, subnormal, scaled, x);
    float shift = isa<math::LogOp>(op) ? 24.0f * 0.69314718055994531f : 24.0f;
    Value correction = arith::SelectOp::create(builder, loc, subnormal, splat(shift), splat(0.0f));
    op->setOperand(0, argument);
    builder.setInsertionPointAfter(op);
    Value result = arith::SubFOp::create(builder, loc, op->getResult(0), correction);
    op->getResult(0).replaceAllUsesExcept(result, result.getDefiningOp());
  }
}

struct ApproximateMathPass
    : mlir::dyno::impl::DynoApproximateMathBase<ApproximateMathPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Upstream's predicates receive operation names ("math.atan").
    auto selected = [&](StringRef name) {
      name.consume_front("math.");
      return opNames.empty() || llvm::is_contained(opNames, name.str());
    };
    if (selected("log") || selected("log2"))
      scaleSubnormalLogArguments(getOperation());
    if (selected("erf"))
      patterns.add<ErfAbramowitzStegun>(&getContext(), /*benefit=*/2);
    if (opNames.empty()) {
      populateMathPolynomialApproximationPatterns(patterns,
                                                  MathPolynomialApproximationOptions{});
    } else {
      populateMathF32ExpansionPatterns(patterns, selected);
      populateMathPolynomialApproximationPatterns(patterns, selected);
    }
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
