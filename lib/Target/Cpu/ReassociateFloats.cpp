//===- ReassociateFloats.cpp - reassoc/contract on kernel math --*- C++ -*-===//
//
// Lets LLVM vectorize float reductions, form FMAs and divide by multiplying with a
// hoisted reciprocal. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"
#include "dyno/Dialect/Dyno/Transforms/ExactQuotients.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#define DEBUG_TYPE "dyno-reassociate-floats"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOREASSOCIATEFLOATS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// `op` updates a reduction's accumulator as loops over memrefs do: one operand is loaded
/// from the element the result is stored back to.
bool updatesAccumulator(Operation *op) {
  for (Value operand : op->getOperands()) {
    auto load = operand.getDefiningOp<memref::LoadOp>();
    if (!load)
      continue;
    for (Operation *user : op->getResult(0).getUsers()) {
      auto store = dyn_cast<memref::StoreOp>(user);
      if (store && store.getMemRef() == load.getMemRef() &&
          store.getIndices() == load.getIndices())
        return true;
    }
  }
  return false;
}

bool dividesBySquareRoot(Operation *op) {
  auto divide = dyn_cast<arith::DivFOp>(op);
  return divide && divide.getRhs().getDefiningOp<math::SqrtOp>();
}

struct ReassociateFloatsPass
    : mlir::dyno::impl::DynoReassociateFloatsBase<ReassociateFloatsPass> {
  void runOnOperation() override {
    constexpr auto allowed = arith::FastMathFlags::reassoc | arith::FastMathFlags::contract |
                             arith::FastMathFlags::arcp;
    getOperation()->walk([&](arith::ArithFastMathInterface op) {
      // A rounding to bf16/f16 and back is the point of an explicit cast (and of the
      // roundings dyno-widen-low-precision-floats places where eager rounds): with
      // `contract` on both, arith folds extf(truncf(x)) to x.
      if (isa<arith::TruncFOp, arith::ExtFOp>(op.getOperation()))
        return;
      auto flags = op.getFastMathFlagsAttr();
      arith::FastMathFlags current = flags ? flags.getValue() : arith::FastMathFlags::none;
      // A reciprocal of a square root may become x86's rsqrt estimate plus a Newton step,
      // which gives NaN for 0 and infinity (eager: inf and 0) and -inf for subnormals:
      // square roots, and divisions by them, keep exact reciprocals.
      arith::FastMathFlags add = allowed;
      if (isa<math::SqrtOp, math::RsqrtOp>(op) || dividesBySquareRoot(op))
        add = add & ~arith::FastMathFlags::arcp;
      // A quotient that is floored, truncated or compared must be exact (see
      // ExactQuotients.h): LLVM would divide by a constant as x * (1 / c) under `arcp`.
      if (auto division = dyn_cast<arith::DivFOp>(op.getOperation()))
        if (dyno::quotientIsRoundedOrCompared(division))
          add = add & ~arith::FastMathFlags::arcp;
      // Only a reduction's update needs `reassoc` (to vectorize). Elsewhere it would let
      // LLVM reorder computations whose rounding is the point: eager's floor division
      // computes (a - fmod(a, b)) / b, and reassociated it was off by one (4083 of
      // 4096 quotients). With `reassoc` on a multiplication, instcombine also sinks a
      // reciprocal into it, x * (1 / y) -> x / y, which moves a division computed once
      // per row (layernorm's rsqrt, dyno-multiply-by-reciprocals) into the loop over
      // the row.
      if (!updatesAccumulator(op))
        add = add & ~arith::FastMathFlags::reassoc;
      // `arcp` only where it is meant, on divisions: on other ops it licenses folds
      // into neighbouring divisions, e.g. -(1 / sqrt(x)) became (-1) / sqrt(x) with the
      // negation's `arcp`, i.e. the rsqrt estimate (NaN for x = inf); and on a
      // multiplication, x * (1 / y) -> x / y (see above).
      if (!isa<arith::DivFOp>(op))
        add = add & ~arith::FastMathFlags::arcp;
      auto updated = arith::FastMathFlagsAttr::get(op->getContext(), current | add);
      op->setAttr(op.getFastMathAttrName(), updated);
    });
  }
};
} // namespace
