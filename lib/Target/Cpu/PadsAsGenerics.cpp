//===- PadsAsGenerics.cpp - Constant pads as parallel generics --*- C++ -*-===//
//
// A `tensor.pad` with a constant value becomes a `linalg.generic` over the padded shape
// that reads the source where the index falls inside it and yields the value elsewhere,
// so that dyno-tile-kernels shares it out among threads. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "PaddedReads.h"
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "dyno-pads-as-generics"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOPADSASGENERICS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
struct PadAsGeneric : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad, PatternRewriter &rewriter) const override {
    // A value, static shapes (with no empty source dimension, as a read inside one could
    // not be) and a static, non-negative low padding.
    if (!dyno::hasStaticConstantPadding(pad))
      return rewriter.notifyMatchFailure(pad, "not one value, static shapes and padding");
    Value source = pad.getSource();
    linalg::GenericOp generic = dyno::generateElements(
        rewriter, pad.getLoc(), pad.getResultType(),
        [&](OpBuilder &b, Location loc, ValueRange indices) {
          return dyno::paddedElement(
              b, loc, pad, indices, [&](OpBuilder &at, Location where, ValueRange inSource) {
                return tensor::ExtractOp::create(at, where, source, inSource).getResult();
              });
        });
    rewriter.replaceOp(pad, generic.getResults());
    return success();
  }
};

struct PadsAsGenericsPass : mlir::dyno::impl::DynoPadsAsGenericsBase<PadsAsGenericsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PadAsGeneric>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
