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
/// A constant of `type` (a scalar type, or a shaped type splatting `scalar`).
static Value splatConstant(OpBuilder &builder, Location loc, Type type, Attribute scalar) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    scalar = DenseElementsAttr::get(shaped, scalar);
  return arith::ConstantOp::create(builder, loc, type, cast<TypedAttr>(scalar));
}

/// Builds a splat constant of `type` (a float or a shaped type of floats).
static Value floatConstant(OpBuilder &builder, Location loc, Type type, double value) {
  auto elementType = cast<FloatType>(getElementTypeOrSelf(type));
  return splatConstant(builder, loc, type, builder.getFloatAttr(elementType, value));
}

/// f32 erf as one rational function of x*x, the approximation Eigen, XLA and JAX use
/// (Eigen's generic_fast_erf_float): x is clamped to [-4, 4] (|erf(4) - 1| < 2e-8) and
///   erf(x) = x * P(x^2) / Q(x^2)
/// with degree-6 and degree-4 polynomials. No exp and no select: about 16 vector
/// operations, a third of an exp-based formula, which is what makes GELU cheap. Measured
/// against float64 erf over [-6, 6] and |x| down to 1e-30: maximal error 4.5e-7
/// absolute and relative (7.5 ulp); the relative error stays small near 0, where x*P/Q
/// has no cancellation.
struct ErfRational : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ErfOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](float value) { return floatConstant(rewriter, loc, type, value); };
    auto horner = [&](Value t, ArrayRef<float> coefficients) {
      Value result = constant(coefficients.front());
      for (float coefficient : coefficients.drop_front())
        result = math::FmaOp::create(rewriter, loc, result, t, constant(coefficient));
      return result;
    };
    // minnumf/maxnumf would turn NaN into 4; NaN must stay NaN. cmpf+select with an
    // unordered predicate keeps it: clamp(NaN) is NaN, and NaN propagates below.
    Value x = op.getOperand();
    Value above = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, x,
                                        constant(4.0f));
    Value clamped = arith::SelectOp::create(rewriter, loc, above, constant(4.0f), x);
    Value below = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, clamped,
                                        constant(-4.0f));
    clamped = arith::SelectOp::create(rewriter, loc, below, constant(-4.0f), clamped);
    Value t = arith::MulFOp::create(rewriter, loc, clamped, clamped);
    Value numerator = horner(t, {-2.72614225801306e-10f, 2.77068142495902e-08f,
                                 -2.10102402082508e-06f, -5.69250639462346e-05f,
                                 -7.34990630326855e-04f, -2.95459980854025e-03f,
                                 -1.60960333262415e-02f});
    Value denominator = horner(t, {-1.45660718464996e-05f, -2.13374055278905e-04f,
                                   -1.68282697438203e-03f, -7.37332916720468e-03f,
                                   -1.42647390514189e-02f});
    Value scaled = arith::MulFOp::create(rewriter, loc, clamped, numerator);
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, scaled, denominator);
    return success();
  }
};

/// f32 exp of an argument known to be at most 0 or NaN (dyno-relax-softmax-maximum marks
/// a softmax's `exp(x - max)` with kNonPositiveArgumentAttr): upstream's expansion
/// (Cephes' range reduction and polynomial, the same constants and order of operations,
/// so the same results), without its two upper clamps (x <= 88.8, k <= 127), which such
/// an argument never reaches. The exp loop of a softmax is bound by the FMA pipes, where
/// the clamps run.
struct ExpOfNonPositive : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32() ||
        !op->hasAttr(dyno::kNonPositiveArgumentAttr))
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](float value) { return floatConstant(rewriter, loc, type, value); };
    auto fma = [&](Value a, Value b, Value c) {
      return math::FmaOp::create(rewriter, loc, a, b, c).getResult();
    };
    // Unordered comparisons: NaN passes the clamps and propagates.
    auto atLeast = [&](Value value, float bound) {
      Value above = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UGE, value,
                                          constant(bound));
      return arith::SelectOp::create(rewriter, loc, above, value, constant(bound)).getResult();
    };
    Value x = atLeast(op.getOperand(), -87.8f);
    // exp(x) = 2^k exp(r), k = floor(x log2(e) + 1/2), r = x - k ln 2 (ln 2 in two parts).
    Value k = atLeast(math::FloorOp::create(rewriter, loc, fma(x, constant(1.44269502f),
                                                             constant(0.5f))),
                      -127.0f);
    Value r = fma(constant(-0.693359375f), k, x);
    r = fma(constant(2.12194442e-4f), k, r);
    Value p = fma(constant(1.98756912e-4f), r, constant(1.39819994e-3f));
    for (float coefficient : {8.33345205e-3f, 4.16657962e-2f, 1.66666657e-1f, 0.5f})
      p = fma(p, r, constant(coefficient));
    Value expR = arith::AddFOp::create(
        rewriter, loc, fma(p, arith::MulFOp::create(rewriter, loc, r, r), r), constant(1.0f));
    // 2^k from its exponent bits (k = -127 gives 0: results below 2^-127 flush to zero).
    Type i32 = rewriter.getI32Type();
    Type intType = isa<ShapedType>(type) ? cast<ShapedType>(type).clone(i32) : i32;
    auto intConstant = [&](int32_t value) {
      return splatConstant(rewriter, loc, intType, rewriter.getI32IntegerAttr(value));
    };
    Value exponent = arith::AddIOp::create(
        rewriter, loc, arith::FPToSIOp::create(rewriter, loc, intType, k), intConstant(127));
    Value twoToK = arith::BitcastOp::create(
        rewriter, loc, type, arith::ShLIOp::create(rewriter, loc, exponent, intConstant(23)));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, expR, twoToK);
    return success();
  }
};

/// log1p and expm1 of other float types than f32 (which upstream's patterns expand):
/// convert-math-to-llvm lowers them as log(1 + x) and exp(x) - 1, which lose every digit
/// for |x| < 1e-16 in float64 (expm1(1e-20) gave 0) and half of them at 1e-8. These are
/// Goldberg's and Kahan's exact-cancellation forms instead:
///   log1p(x) = x                       if 1 + x == 1, else log(u) * x / (u - 1), u = 1 + x
///   expm1(x) = x if exp(x) == 1, exp(x) - 1 if |x| > 1/2, else (u - 1) * x / log(u),
///              u = exp(x)
/// (log1p: log(inf) == inf passes x = inf through, where inf * inf / inf would be NaN).
struct Log1pExact : OpRewritePattern<math::Log1pOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::Log1pOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value one = floatConstant(rewriter, loc, type, 1.0);
    Value u = arith::AddFOp::create(rewriter, loc, x, one);
    Value logU = math::LogOp::create(rewriter, loc, u);
    Value quotient = arith::DivFOp::create(
        rewriter, loc, arith::MulFOp::create(rewriter, loc, logU, x),
        arith::SubFOp::create(rewriter, loc, u, one));
    Value exactlyX = arith::OrIOp::create(
        rewriter, loc, arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OEQ, u, one),
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OEQ, logU, u));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, exactlyX, x, quotient);
    return success();
  }
};

struct Expm1Exact : OpRewritePattern<math::ExpM1Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ExpM1Op op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value one = floatConstant(rewriter, loc, type, 1.0);
    Value u = math::ExpOp::create(rewriter, loc, x);
    Value uMinusOne = arith::SubFOp::create(rewriter, loc, u, one);
    Value quotient = arith::DivFOp::create(
        rewriter, loc, arith::MulFOp::create(rewriter, loc, uMinusOne, x),
        math::LogOp::create(rewriter, loc, u));
    auto equal = [&](Value a, Value b) {
      return arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OEQ, a, b);
    };
    // Away from 0 (|x| > 1/2) exp(x) - 1 does not cancel, and the quotient's product
    // could overflow (x = 709.7).
    Value large = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT,
                                        math::AbsFOp::create(rewriter, loc, x),
                                        floatConstant(rewriter, loc, type, 0.5));
    Value result = arith::SelectOp::create(rewriter, loc, large, uMinusOne, quotient);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, equal(u, one), x, result);
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
    auto splat = [&](float value) { return floatConstant(builder, loc, type, value); };
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
      patterns.add<ErfRational>(&getContext(), /*benefit=*/2);
    if (selected("exp"))
      patterns.add<ExpOfNonPositive>(&getContext(), /*benefit=*/2);
    if (selected("log1p"))
      patterns.add<Log1pExact>(&getContext());
    if (selected("expm1"))
      patterns.add<Expm1Exact>(&getContext());
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
