//===- FoldFusedRoundings.cpp - bf16/f16 intermediates stay f32 in a kernel -*- C++ -*-===//
//
// After elementwise fusion, an op's rounded bf16/f16 result that its consumer widens
// again inside the same body (`extf(truncf(x))`, both made by
// dyno-widen-low-precision-floats) never reaches memory: the consumer reads `x` in f32.
// Loads widen and stores narrow, as in Inductor; explicit casts are untouched. See
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/LowPrecisionFloats.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOFOLDFUSEDROUNDINGS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
struct FoldFusedRoundingsPass
    : dyno::impl::DynoFoldFusedRoundingsBase<FoldFusedRoundingsPass> {
  void runOnOperation() override {
    getOperation().walk([](arith::ExtFOp ext) {
      auto trunc = ext.getIn().getDefiningOp<arith::TruncFOp>();
      if (!trunc || !trunc->hasAttr(dyno::kOpRoundingAttr) ||
          trunc.getIn().getType() != ext.getType())
        return;
      ext.getResult().replaceAllUsesWith(trunc.getIn());
    });
  }
};
} // namespace
