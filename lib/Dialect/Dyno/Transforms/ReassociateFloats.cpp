//===- ReassociateFloats.cpp - reassoc/contract on kernel math --*- C++ -*-===//
//
// Lets LLVM vectorize float reductions, form FMAs and divide by multiplying with a
// hoisted reciprocal. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#define DEBUG_TYPE "dyno-reassociate-floats"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOREASSOCIATEFLOATS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
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
      auto flags = op.getFastMathFlagsAttr();
      arith::FastMathFlags current = flags ? flags.getValue() : arith::FastMathFlags::none;
      // A reciprocal of a square root may become x86's rsqrt estimate plus a Newton step,
      // which gives NaN for 0 and infinity (eager: inf and 0) and -inf for subnormals:
      // square roots, and divisions by them, keep exact reciprocals.
      arith::FastMathFlags add = allowed;
      if (isa<math::SqrtOp, math::RsqrtOp>(op) || dividesBySquareRoot(op))
        add = add & ~arith::FastMathFlags::arcp;
      auto updated = arith::FastMathFlagsAttr::get(op->getContext(), current | add);
      op->setAttr(op.getFastMathAttrName(), updated);
    });
  }
};
} // namespace
