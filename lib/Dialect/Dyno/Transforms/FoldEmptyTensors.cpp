//===- FoldEmptyTensors.cpp - Computations with no elements, folded -*- C++ -*-===//
//
// A tensor with a static zero-size dimension holds no data, and a linalg op with a zero
// trip count leaves its inits as they are. This pass folds both away before kernel
// formation, so that no kernel is formed for (or passed) an empty tensor. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOFOLDEMPTYTENSORS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
bool hasNoElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && llvm::is_contained(tensor.getShape(), 0);
}

/// A side-effect-free op whose tensor results are all empty: each result becomes a
/// `tensor.empty` (the op's other results, if any, keep it alive).
struct EmptyResultsToEmptyTensors : RewritePattern {
  EmptyResultsToEmptyTensors(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (isa<tensor::EmptyOp>(op) || op->getNumResults() == 0 || !isMemoryEffectFree(op) ||
        op->getNumRegions() > 0 && !isa<linalg::LinalgOp>(op))
      return failure();
    bool replaced = false;
    for (OpResult result : op->getResults()) {
      if (!hasNoElements(result.getType()) || result.use_empty())
        continue;
      // Dynamic sizes of an empty result would need the op's own shape reasoning.
      auto type = cast<RankedTensorType>(result.getType());
      if (!type.hasStaticShape())
        continue;
      Value empty = tensor::EmptyOp::create(rewriter, op->getLoc(), type.getShape(),
                                            type.getElementType(), type.getEncoding());
      rewriter.replaceAllUsesWith(result, empty);
      replaced = true;
    }
    return success(replaced);
  }
};

/// A linalg op with a zero-size loop runs no iterations: its results are its inits
/// (a sum over an empty dimension is its fill).
struct ZeroTripLinalgToInits : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op->getNumResults() == 0 ||
        !llvm::is_contained(op.getStaticLoopRanges(), 0))
      return failure();
    SmallVector<Value> inits;
    for (auto [result, init] : llvm::zip_equal(op->getResults(), op.getDpsInits())) {
      if (result.getType() != init.getType())
        return failure();
      inits.push_back(init);
    }
    rewriter.replaceOp(op, inits);
    return success();
  }
};

/// Inserting an empty slice leaves the destination as it is.
struct EmptyInsertSliceToDest : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::InsertSliceOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasNoElements(op.getSource().getType()) ||
        op.getDest().getType() != op.getResult().getType())
      return failure();
    rewriter.replaceOp(op, op.getDest());
    return success();
  }
};

/// A concatenation skips its empty pieces (seen through casts, which hide the zero
/// size from the concatenation's own folds: torch-mlir's `roll` by 0).
struct DropEmptyConcatPieces : OpRewritePattern<tensor::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool isEmpty(Value piece) {
    while (auto cast = piece.getDefiningOp<tensor::CastOp>())
      piece = cast.getSource();
    return hasNoElements(piece.getType());
  }

  LogicalResult matchAndRewrite(tensor::ConcatOp op, PatternRewriter &rewriter) const override {
    SmallVector<Value> pieces;
    for (Value piece : op.getInputs())
      if (!isEmpty(piece))
        pieces.push_back(piece);
    if (pieces.size() == op.getInputs().size() || pieces.empty())
      return failure();
    Value result;
    if (pieces.size() == 1) {
      // The piece itself, from under the casts that only hid its size.
      result = pieces.front();
      while (result.getType() != op.getType())
        if (auto cast = result.getDefiningOp<tensor::CastOp>())
          result = cast.getSource();
        else
          break;
      if (result.getType() != op.getType())
        result = pieces.front();
    }
    else
      result = tensor::ConcatOp::create(rewriter, op.getLoc(), op.getDim(), pieces);
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(rewriter, op.getLoc(), op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct FoldEmptyTensorsPass
    : dyno::impl::DynoFoldEmptyTensorsBase<FoldEmptyTensorsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<ZeroTripLinalgToInits, EmptyInsertSliceToDest, DropEmptyConcatPieces>(context, /*benefit=*/2);
    patterns.add<EmptyResultsToEmptyTensors>(context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
