//===- ReassociateFloats.cpp - reassoc/contract on kernel math --*- C++ -*-===//
//
// Lets LLVM vectorize float reductions, form FMAs and divide by multiplying with a
// hoisted reciprocal. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#define DEBUG_TYPE "dyno-reassociate-floats"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOREASSOCIATEFLOATS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
struct ReassociateFloatsPass
    : mlir::dyno::impl::DynoReassociateFloatsBase<ReassociateFloatsPass> {
  void runOnOperation() override {
    constexpr auto allowed = arith::FastMathFlags::reassoc | arith::FastMathFlags::contract |
                             arith::FastMathFlags::arcp;
    getOperation()->walk([&](arith::ArithFastMathInterface op) {
      auto flags = op.getFastMathFlagsAttr();
      arith::FastMathFlags current = flags ? flags.getValue() : arith::FastMathFlags::none;
      auto updated = arith::FastMathFlagsAttr::get(op->getContext(), current | allowed);
      op->setAttr(op.getFastMathAttrName(), updated);
    });
  }
};
} // namespace
