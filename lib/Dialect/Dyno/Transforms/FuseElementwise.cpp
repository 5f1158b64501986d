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

/// A reduction cannot take in a producer whose inputs leave some of its loops to its
/// init alone (a gather: an embedding lookup reads its table with tensor.extract, so
/// only the token ids are inputs): after fusion no operand would give those loops their
/// sizes, and upstream refuses. The producer's result (the squares of gathered rows in
/// an RMSNorm) was then written in full and read back. Such a reduction first gains an
/// input that only carries the fused operand's shape (a tensor.empty its body never
/// reads), after which the producer fuses. Returns whether a reduction gained one.
static bool addShapeOperandsForFusion(func::FuncOp func, IRRewriter &rewriter,
                                      const linalg::ControlFusionFn &control) {
  SmallVector<OpOperand *> blocked;
  func.walk([&](linalg::GenericOp consumer) {
    if (consumer.getNumReductionLoops() == 0 || !consumer.hasPureTensorSemantics())
      return;
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      // Only a producer the reduction alone reads: fusion keeps a producer's result
      // that others read as a result of the fused op, indexed here by reduced loops.
      if (!producer || !producer->hasOneUse() ||
          producer.getNumParallelLoops() != producer.getNumLoops() ||
          linalg::areElementwiseOpsFusable(operand) || !control(operand))
        continue;
      blocked.push_back(operand);
      return; // one operand per consumer and round: the consumer is rebuilt
    }
  });
  bool changed = false;
  for (OpOperand *operand : blocked) {
    auto consumer = cast<linalg::GenericOp>(operand->getOwner());
    auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
    auto result = cast<OpResult>(operand->get());
    Value init = producer.getDpsInitOperand(result.getResultNumber())->get();
    rewriter.setInsertionPoint(consumer);
    Location loc = consumer.getLoc();
    Value shape = tensor::EmptyOp::create(rewriter, loc, tensor::getMixedSizes(rewriter, loc, init),
                                          getElementTypeOrSelf(init.getType()));
    SmallVector<Value> inputs(consumer.getDpsInputs());
    inputs.push_back(shape);
    SmallVector<AffineMap> maps;
    for (OpOperand *input : consumer.getDpsInputOperands())
      maps.push_back(consumer.getMatchingIndexingMap(input));
    maps.push_back(consumer.getMatchingIndexingMap(operand));
    for (OpOperand &output : consumer.getDpsInitsMutable())
      maps.push_back(consumer.getMatchingIndexingMap(&output));
    auto widened = linalg::GenericOp::create(
        rewriter, loc, consumer.getResultTypes(), inputs, consumer.getDpsInits(), maps,
        consumer.getIteratorTypesArray());
    widened->setDiscardableAttrs(consumer->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(consumer.getRegion(), widened.getRegion(),
                                widened.getRegion().begin());
    widened.getRegion().front().insertArgument(
        consumer.getNumDpsInputs(), getElementTypeOrSelf(shape.getType()), loc);
    // Still refused (another condition than the loop sizes): the consumer stays as it
    // was, so that no pass is left with an input it cannot fuse or drop.
    if (!linalg::areElementwiseOpsFusable(
            &widened->getOpOperand(operand->getOperandNumber()))) {
      rewriter.inlineRegionBefore(widened.getRegion(), consumer.getRegion(),
                                  consumer.getRegion().begin());
      consumer.getRegion().front().eraseArgument(consumer.getNumDpsInputs());
      rewriter.eraseOp(widened);
      rewriter.eraseOp(shape.getDefiningOp());
      continue;
    }
    rewriter.replaceOp(consumer, widened->getResults());
    changed = true;
  }
  return changed;
}

namespace {
/// A generic whose body yields its inits unchanged computes nothing: its results are its
/// inits. (A bounds check whose condition folds to true once its gather fuses in reduces
/// `and(acc, true)` = `acc`; the Triton target recognizes no combiner in it.)
struct FoldGenericYieldingItsInits : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != op->getNumResults())
      return failure();
    auto yield = cast<linalg::YieldOp>(op.getRegion().front().getTerminator());
    for (OpOperand &init : op.getDpsInitsMutable())
      if (yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs()) !=
              op.getMatchingBlockArgument(&init) ||
          init.get().getType() != op->getResult(init.getOperandNumber() -
                                                 op.getNumDpsInputs()).getType())
        return failure();
    rewriter.replaceOp(op, op.getDpsInits());
    return success();
  }
};

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
    patterns.add<FoldGenericYieldingItsInits>(context);

    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Fusion, then shape operands where a gather producer could not fuse into a
    // reduction, then fusion again (a chain of producers reaches the gather one fusion
    // at a time).
    for (int round = 0; round < 8; ++round) {
      if (failed(applyPatternsGreedily(func, frozen, config)))
        return signalPassFailure();
      if (!addShapeOperandsForFusion(func, rewriter, control))
        break;
    }
  }
};
} // namespace
