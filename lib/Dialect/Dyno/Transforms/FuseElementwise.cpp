//===- FuseElementwise.cpp - Elementwise fusion with recompute --*- C++ -*-===//
//
// Upstream linalg's elementwise fusion fuses a producer only into its single user. Dyno
// recomputes cheap all-parallel producers in each consumer instead, which removes the
// intermediate tensors of row-wise pipelines (softmax, layernorm) before kernel formation.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "dyno-fuse-elementwise"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOFUSEELEMENTWISE
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

/// Library ops keep their operands as separate tensors (a transposed weight is passed to
/// the library as a strided view), so transposes feeding them are not generalized.
static bool isLibraryOp(Operation *op) {
  return isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(op);
}

static bool allUsersAreLibraryOps(Operation *op) {
  return !op->use_empty() &&
         llvm::all_of(op->getUsers(), [](Operation *user) { return isLibraryOp(user); });
}

static unsigned bodySize(linalg::GenericOp op) {
  return op.getRegion().front().getOperations().size();
}

/// Transcendental functions cost tens of instructions each; a producer using one is
/// computed once (per row block, after tiling) rather than in every consumer.
static bool hasTranscendental(linalg::GenericOp op) {
  return llvm::any_of(op.getRegion().front(), [](Operation &inner) {
    return isa<math::MathDialect>(inner.getDialect()) &&
           !isa<math::AbsFOp, math::AbsIOp, math::CopySignOp, math::FmaOp>(inner);
  });
}

namespace {
struct FuseElementwisePass
    : mlir::dyno::impl::DynoFuseElementwiseBase<FuseElementwisePass> {
  using DynoFuseElementwiseBase::DynoFuseElementwiseBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();

    // Named data movement ops become generics so that they fold into consumers' maps.
    IRRewriter rewriter(context);
    SmallVector<linalg::LinalgOp> toGeneralize;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::TransposeOp, linalg::BroadcastOp, linalg::ElementwiseOp,
              linalg::MapOp>(op.getOperation()) &&
          !allUsersAreLibraryOps(op))
        toGeneralize.push_back(op);
    });
    for (linalg::LinalgOp op : toGeneralize) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op)))
        return signalPassFailure();
    }

    unsigned maxOps = maxRecomputeOps;
    linalg::ControlFusionFn control = [maxOps](OpOperand *fusedOperand) {
      auto producer = fusedOperand->get().getDefiningOp<linalg::GenericOp>();
      if (!producer)
        return false;
      // A transcendental producer read with broadcasting (a per-row rsqrt feeding a
      // per-element op) would be recomputed for every element of the broadcast dims.
      auto consumer = cast<linalg::LinalgOp>(fusedOperand->getOwner());
      bool broadcast = !consumer.getMatchingIndexingMap(fusedOperand).isPermutation();
      if (hasTranscendental(producer) && (broadcast || !producer->hasOneUse()))
        return false;
      if (producer->hasOneUse())
        return true;
      // Recompute only all-parallel producers with cheap bodies.
      return producer.getNumLoops() == producer.getNumParallelLoops() &&
             bodySize(producer) <= maxOps;
    };
    // Propagating a reshape through a matmul or convolution would rewrite it into an
    // expanded linalg.generic contraction that no library call matches any more.
    linalg::ControlFusionFn singleUseNoLibrary = [](OpOperand *fusedOperand) {
      Operation *producer = fusedOperand->get().getDefiningOp();
      return producer && producer->hasOneUse() && !isLibraryOp(producer) &&
             !isLibraryOp(fusedOperand->getOwner());
    };

    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, singleUseNoLibrary);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);

    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(applyPatternsGreedily(func, std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
