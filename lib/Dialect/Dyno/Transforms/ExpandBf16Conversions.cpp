//===- ExpandBf16Conversions.cpp - f32 <-> bf16 in integer arithmetic -*- C++ -*-===//
//
// Eager converts between f32 and bf16 with integer arithmetic (c10::BFloat16), keeping
// subnormals. LLVM on x86 CPUs with AVX512-BF16 lowers `fptrunc float to bfloat` to
// vcvtneps2bf16, which flushes them (`x * 1.0` of a bf16 3e-39 returned 0), and
// Triton's interpreter truncates instead of rounding and mangles bf16 subnormals when
// widening. This pass spells both conversions as eager does, and f64 <-> bf16 through
// f32 as eager does too (LLVM would call compiler-rt's __truncdfbf2, which GCC 12's
// libgcc lacks). See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/LowPrecisionFloats.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

#define DEBUG_TYPE "dyno-expand-bf16-conversions"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOEXPANDBF16CONVERSIONS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

namespace {
/// A constant of `type` (a scalar or a vector of integers) splatting `value`.
Value integerConstant(OpBuilder &builder, Location loc, Type type, int64_t value) {
  auto element = cast<IntegerType>(getElementTypeOrSelf(type));
  APInt bits(element.getWidth(), value, /*isSigned=*/true);
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(builder, loc, DenseElementsAttr::get(vector, bits));
  return arith::ConstantOp::create(builder, loc, IntegerAttr::get(element, bits));
}

/// c10::round_to_nearest_even: bits + 0x7FFF + (bit 16 of bits), shifted down 16; a NaN
/// keeps its upper 16 bits, quieted.
Value roundToNearestEven(OpBuilder &builder, Location loc, Value x, Type bf16Type) {
  Type i32Type = withElement(x.getType(), builder.getI32Type());
  Type i16Type = withElement(x.getType(), builder.getI16Type());
  Value bits = arith::BitcastOp::create(builder, loc, i32Type, x);
  Value sixteen = integerConstant(builder, loc, i32Type, 16);
  Value lowestKept = arith::AndIOp::create(
      builder, loc, arith::ShRUIOp::create(builder, loc, bits, sixteen),
      integerConstant(builder, loc, i32Type, 1));
  Value bias = arith::AddIOp::create(builder, loc, lowestKept,
                                     integerConstant(builder, loc, i32Type, 0x7FFF));
  Value rounded = arith::ShRUIOp::create(
      builder, loc, arith::AddIOp::create(builder, loc, bits, bias), sixteen);
  Value narrow = arith::TruncIOp::create(builder, loc, i16Type, rounded);
  // A NaN keeps its sign and upper payload, quieted (rounding could carry it into
  // infinity): copysign and signbit of NaNs stay as eager computes them.
  Value upper = arith::TruncIOp::create(builder, loc, i16Type,
                                        arith::ShRUIOp::create(builder, loc, bits, sixteen));
  Value quietNan = arith::OrIOp::create(builder, loc, upper,
                                        integerConstant(builder, loc, i16Type, 0x0040));
  Value isNan = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UNO, x, x);
  Value chosen = arith::SelectOp::create(builder, loc, isNan, quietNan, narrow);
  return arith::BitcastOp::create(builder, loc, bf16Type, chosen);
}

/// Whether every value `x` (f32) can take is a bf16 value: a widened bf16, a constant
/// bf16 represents, or a choice among such values (select, max/min, negation,
/// absolute value). Rounding such a value to bf16 changes nothing: its low 16 bits are
/// zero. (A ReLU or max pool of bf16 values, computed in f32 as eager computes them.)
bool isExactInBf16(Value x, unsigned depth = 8) {
  if (depth == 0 || !getElementTypeOrSelf(x.getType()).isF32())
    return false;
  Operation *op = x.getDefiningOp();
  if (!op)
    return false;
  if (auto extend = dyn_cast<arith::ExtFOp>(op))
    return getElementTypeOrSelf(extend.getIn().getType()).isBF16();
  FloatAttr::ValueType value(0.0f);
  if (matchPattern(x, m_ConstantFloat(&value)))  // scalars and splats
    return (value.bitcastToAPInt().getZExtValue() & 0xFFFF) == 0;
  if (auto select = dyn_cast<arith::SelectOp>(op))
    return isExactInBf16(select.getTrueValue(), depth - 1) &&
           isExactInBf16(select.getFalseValue(), depth - 1);
  if (isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(op))
    return isExactInBf16(op->getOperand(0), depth - 1) &&
           isExactInBf16(op->getOperand(1), depth - 1);
  if (isa<arith::NegFOp, math::AbsFOp>(op))
    return isExactInBf16(op->getOperand(0), depth - 1);
  return false;
}

/// An f32 holding a bf16 value (isExactInBf16) as that bf16: its upper 16 bits. A NaN
/// keeps its bits (one the rounding would have quieted stays signaling).
Value narrowExactly(OpBuilder &builder, Location loc, Value x, Type bf16Type) {
  Type i32Type = withElement(x.getType(), builder.getI32Type());
  Type i16Type = withElement(x.getType(), builder.getI16Type());
  Value bits = arith::BitcastOp::create(builder, loc, i32Type, x);
  Value upper = arith::ShRUIOp::create(builder, loc, bits,
                                       integerConstant(builder, loc, i32Type, 16));
  Value narrow = arith::TruncIOp::create(builder, loc, i16Type, upper);
  return arith::BitcastOp::create(builder, loc, bf16Type, narrow);
}

/// A bf16's bits as the upper half of an f32's: exact, subnormals included.
Value widenExactly(OpBuilder &builder, Location loc, Value x, Type f32Type) {
  Type i16Type = withElement(x.getType(), builder.getI16Type());
  Type i32Type = withElement(x.getType(), builder.getI32Type());
  Value bits = arith::BitcastOp::create(builder, loc, i16Type, x);
  Value wide = arith::ExtUIOp::create(builder, loc, i32Type, bits);
  Value shifted = arith::ShLIOp::create(builder, loc, wide,
                                        integerConstant(builder, loc, i32Type, 16));
  return arith::BitcastOp::create(builder, loc, f32Type, shifted);
}

/// Whether `op` is a conversion this pass spells out: f32 or f64 to bf16, bf16 to f32 or
/// f64. (LLVM lowers f64 <-> bf16 through compiler-rt's __truncdfbf2, which GCC 12's
/// libgcc lacks: kernels calling it did not load on AMD Zen 4.)
bool converts(Operation *op) {
  if (!isa<arith::TruncFOp, arith::ExtFOp>(op))
    return false;
  Type source = getElementTypeOrSelf(op->getOperand(0).getType());
  Type result = getElementTypeOrSelf(op->getResult(0).getType());
  if (isa<arith::TruncFOp>(op))
    return (source.isF32() || source.isF64()) && result.isBF16();
  return source.isBF16() && (result.isF32() || result.isF64());
}

struct ExpandBf16ConversionsPass
    : dyno::impl::DynoExpandBf16ConversionsBase<ExpandBf16ConversionsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> conversions;
    // Judged before any conversion is rewritten (the judgement reads the widenings).
    llvm::SmallPtrSet<Operation *, 16> exactNarrowings;
    getOperation()->walk([&](Operation *op) {
      if (!converts(op))
        return;
      conversions.push_back(op);
      if (isa<arith::TruncFOp>(op) && isExactInBf16(op->getOperand(0)))
        exactNarrowings.insert(op);
    });
    for (Operation *op : conversions) {
      OpBuilder builder(op);
      Location loc = op->getLoc();
      Value input = op->getOperand(0);
      Type type = op->getResult(0).getType();
      Type f32Type = withElement(type, builder.getF32Type());
      Value exact;
      if (isa<arith::TruncFOp>(op)) {
        // From f64: to f32 first, as eager's static_cast<BFloat16>(double) rounds.
        if (getElementTypeOrSelf(input.getType()).isF64())
          input = arith::TruncFOp::create(builder, loc, f32Type, input);
        exact = exactNarrowings.contains(op) ? narrowExactly(builder, loc, input, type)
                                             : roundToNearestEven(builder, loc, input, type);
      } else {
        exact = widenExactly(builder, loc, input, f32Type);
        if (getElementTypeOrSelf(type).isF64())
          exact = arith::ExtFOp::create(builder, loc, type, exact);
      }
      op->getResult(0).replaceAllUsesWith(exact);
      op->erase();
    }
  }
};
} // namespace
