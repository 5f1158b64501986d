//===- MoveReads.cpp - Reads composed through moves and reshapes -*- C++ -*-===//
//
// See MoveReads.h.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/MoveReads.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;

bool mlir::dyno::copiesItsInput(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  Value yielded = cast<linalg::YieldOp>(op.getBody()->getTerminator()).getOperand(0);
  // A value widened and narrowed back to its own type is itself (bf16 and f16 are exact
  // in f32; only a NaN's payload bits could differ): what a bf16 copy's explicit casts
  // leave in its body once its input is a library call's bf16 result.
  if (auto narrow = yielded.getDefiningOp<arith::TruncFOp>())
    if (auto widen = narrow.getIn().getDefiningOp<arith::ExtFOp>())
      if (widen.getIn().getType() == narrow.getType())
        yielded = widen.getIn();
  return yielded == op.getMatchingBlockArgument(op.getDpsInputOperand(0));
}

namespace {
/// Makes `consumer` read `source` through `map` in place of `operand`, unless a loop
/// would then be no operand's plain dimension (nothing would give it its size).
bool readInstead(PatternRewriter &rewriter, linalg::GenericOp consumer, OpOperand *operand,
                 Value source, AffineMap map) {
  SmallVector<AffineMap> maps = consumer.getIndexingMapsArray();
  maps[operand->getOperandNumber()] = map;
  if (!inversePermutation(concatAffineMaps(maps, consumer.getContext())))
    return false;
  rewriter.modifyOpInPlace(consumer, [&] {
    operand->set(source);
    consumer.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  return true;
}

/// Whether `op` only moves elements (it copies its one input) and reads them out of
/// order: a rotation's generic, whose mod map upstream cannot expand through a reshape.
bool isOutOfOrderMove(linalg::GenericOp op) {
  return op && op.hasPureTensorSemantics() && dyno::copiesItsInput(op) &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() &&
         !op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isProjectedPermutation();
}

/// The frame both rewrites share: an all-parallel generic on tensors whose input
/// `operand` `Derived::newRead` can replace by another tensor read through another map.
/// (Not a reduction: dyno-block-long-sums and the Triton target's split of full
/// reductions need projected-permutation reads; a reduction reads the moved copy.)
template <typename Derived>
struct ReadInstead : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!consumer.hasPureTensorSemantics() ||
        consumer.getNumLoops() != consumer.getNumParallelLoops())
      return failure();
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      Value source;
      AffineMap map;
      if (static_cast<const Derived *>(this)->newRead(consumer, operand, source, map) &&
          readInstead(rewriter, consumer, operand, source, map))
        return success();
    }
    return failure();
  }
};

/// A generic reading an out-of-order move (a rotation) through an expand_shape (Swin's
/// window partition of its shifted image) reads the move's input instead: its map is
/// the move's map after the expansion's linearization, so the rotation and the window
/// partition are one read, not two copies. (Upstream propagates a reshape only through
/// projected permutations.) Static expansions only.
struct ReadMoveThroughExpansion : ReadInstead<ReadMoveThroughExpansion> {
  using ReadInstead::ReadInstead;
  bool newRead(linalg::GenericOp consumer, OpOperand *operand, Value &source,
               AffineMap &map) const {
    auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || !expand.getResultType().hasStaticShape())
      return false;
    auto move = expand.getSrc().getDefiningOp<linalg::GenericOp>();
    if (!isOutOfOrderMove(move))
      return false;
    MLIRContext *ctx = consumer.getContext();
    RankedTensorType expanded = expand.getResultType();
    SmallVector<AffineExpr> linearized;
    for (const ReassociationIndices &group : expand.getReassociationIndices()) {
      AffineExpr index = getAffineConstantExpr(0, ctx);
      int64_t stride = 1;
      for (int64_t dim : llvm::reverse(group)) {
        index = index + getAffineDimExpr(dim, ctx) * stride;
        stride *= expanded.getDimSize(dim);
      }
      linearized.push_back(index);
    }
    AffineMap linearization = AffineMap::get(expanded.getRank(), 0, linearized, ctx);
    AffineMap moveMap = move.getMatchingIndexingMap(move.getDpsInputOperand(0));
    source = move.getDpsInputOperand(0)->get();
    map = moveMap.compose(linearization.compose(consumer.getMatchingIndexingMap(operand)));
    return true;
  }
};

/// A generic reading a collapse_shape through a map that is not a projected permutation
/// (a rotation's mod map: Swin's window-reversed attention output, shifted back by the
/// residual add that reads it) reads the collapse's source instead, each collapsed index
/// split into the source's dimensions (floordiv and mod by their static sizes).
/// Upstream moves a collapse only into readers it can expand, which a mod map forbids.
/// All-parallel readers only, as ReadMoveThroughExpansion.
struct ReadThroughCollapse : ReadInstead<ReadThroughCollapse> {
  using ReadInstead::ReadInstead;
  bool newRead(linalg::GenericOp consumer, OpOperand *operand, Value &source,
               AffineMap &map) const {
    auto collapse = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
    AffineMap readMap = consumer.getMatchingIndexingMap(operand);
    if (!collapse || !collapse.getSrcType().hasStaticShape() ||
        readMap.isProjectedPermutation())
      return false;
    MLIRContext *ctx = consumer.getContext();
    ArrayRef<int64_t> sizes = collapse.getSrcType().getShape();
    SmallVector<AffineExpr> split(sizes.size());
    for (auto [group, collapsed] : llvm::enumerate(collapse.getReassociationIndices())) {
      AffineExpr index = getAffineDimExpr(group, ctx);
      int64_t stride = 1;
      for (int64_t dim : llvm::reverse(collapsed)) {
        split[dim] = stride == 1 ? index : index.floorDiv(stride);
        if (dim != collapsed.front())
          split[dim] = split[dim] % sizes[dim];
        stride *= sizes[dim];
      }
    }
    source = collapse.getSrc();
    map = AffineMap::get(collapse.getResultType().getRank(), 0, split, ctx).compose(readMap);
    return true;
  }
};
} // namespace

void mlir::dyno::populateReadMovesThroughExpansionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReadMoveThroughExpansion>(patterns.getContext());
}

void mlir::dyno::populateReadsThroughCollapsePatterns(RewritePatternSet &patterns) {
  patterns.add<ReadThroughCollapse>(patterns.getContext());
}
