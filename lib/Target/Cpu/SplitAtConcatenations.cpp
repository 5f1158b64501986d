//===- SplitAtConcatenations.cpp - Read concatenated pieces in place -*- C++ -*-===//
//
// An elementwise generic that reads a concatenation is split where the pieces meet, so
// that each part reads its piece where it is computed; the elementwise producers of the
// pieces then fuse into the parts. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "dyno-split-at-concatenations"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOSPLITATCONCATENATIONS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {

bool isElementwise(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && op.getNumLoops() == op.getNumParallelLoops() &&
         op.getNumLoops() > 0 &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isProjectedPermutation(); }) &&
         llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
           return op.getMatchingIndexingMap(&init).isIdentity();
         });
}

/// Static sizes of the pieces of `concat` along its dimension, if all are static.
std::optional<SmallVector<int64_t>> pieceSizes(tensor::ConcatOp concat) {
  SmallVector<int64_t> sizes;
  for (Value input : concat.getInputs()) {
    int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(concat.getDim());
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    sizes.push_back(size);
  }
  return sizes;
}

/// An elementwise generic reading a static concatenation through a loop dimension
/// becomes one generic per piece (linalg::splitOp), each writing its slice of the
/// result.
struct SplitConsumerAtConcat : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!isElementwise(op) || op.getNumDpsInits() != 1 || op.hasDynamicShape())
      return failure();
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto concat = input->get().getDefiningOp<tensor::ConcatOp>();
      if (!concat || concat.getInputs().size() < 2)
        continue;
      std::optional<SmallVector<int64_t>> sizes = pieceSizes(concat);
      auto dim = dyn_cast<AffineDimExpr>(
          op.getMatchingIndexingMap(input).getResult(concat.getDim()));
      if (!sizes || !dim)
        continue;
      // Split off the first piece; the rest reads a slice of the concatenation that
      // FoldSliceOfConcat turns into the concatenation of the other pieces.
      auto [first, rest] =
          linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()),
                          dim.getPosition(), rewriter.getIndexAttr(sizes->front()));
      if (!first || !rest)
        return failure();
      return success();
    }
    return failure();
  }
};

/// A unit-stride slice of a static concatenation that covers whole pieces along the
/// concatenated dimension (and all of the others) is those pieces.
struct FoldSliceOfConcat : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto concat = slice.getSource().getDefiningOp<tensor::ConcatOp>();
    if (!concat || !slice.hasUnitStride() || slice.getSourceType().getRank() !=
                                                 slice.getResultType().getRank())
      return failure();
    std::optional<SmallVector<int64_t>> sizes = pieceSizes(concat);
    if (!sizes)
      return failure();
    int64_t dim = concat.getDim();
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    ArrayRef<int64_t> extents = slice.getStaticSizes();
    ArrayRef<int64_t> shape = slice.getSourceType().getShape();
    for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
      if (ShapedType::isDynamic(offsets[d]) || ShapedType::isDynamic(extents[d]))
        return failure();
      if (d != dim && (offsets[d] != 0 || extents[d] != shape[d]))
        return failure();
    }
    SmallVector<Value> covered;
    int64_t start = 0;
    for (auto [piece, size] : llvm::zip(concat.getInputs(), *sizes)) {
      int64_t end = start + size;
      bool inside = start >= offsets[dim] && end <= offsets[dim] + extents[dim];
      bool outside = end <= offsets[dim] || start >= offsets[dim] + extents[dim];
      if (!inside && !outside)
        return failure(); // cuts a piece
      if (inside && size > 0) {
        if (!cast<RankedTensorType>(piece.getType()).hasStaticShape())
          return failure(); // (its type would differ from the slice's)
        covered.push_back(piece);
      }
      start = end;
    }
    if (covered.empty())
      return failure();
    if (covered.size() == 1)
      rewriter.replaceOp(slice, covered.front());
    else
      rewriter.replaceOpWithNewOp<tensor::ConcatOp>(slice, slice.getResultType(), dim,
                                                    covered);
    return success();
  }
};

/// A slice of an elementwise generic's result, where every user of the generic is a
/// unit-stride slice and no two slices overlap, is computed on its own: the generic on
/// the slices of its operands (tensor::replaceExtractSliceWithTiledProducer). Nothing is
/// computed twice, and each part can fuse into the slice's reader.
struct SliceDisjointElementwiseProducer : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(slice.getSource());
    auto producer = result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
    if (!producer || !isElementwise(producer) || producer->getNumResults() != 1 ||
        producer.hasDynamicShape())
      return failure();
    SmallVector<tensor::ExtractSliceOp> slices;
    for (Operation *user : producer->getUsers()) {
      auto other = dyn_cast<tensor::ExtractSliceOp>(user);
      if (!other || !other.hasUnitStride() ||
          other.getSourceType().getRank() != other.getResultType().getRank() ||
          ShapedType::isDynamicShape(other.getStaticOffsets()) ||
          ShapedType::isDynamicShape(other.getStaticSizes()))
        return failure();
      slices.push_back(other);
    }
    for (auto [i, a] : llvm::enumerate(slices))
      for (tensor::ExtractSliceOp b : ArrayRef(slices).drop_front(i + 1)) {
        bool disjoint = false;
        for (int64_t d = 0; d < a.getSourceType().getRank(); ++d) {
          int64_t aStart = a.getStaticOffsets()[d], aEnd = aStart + a.getStaticSizes()[d];
          int64_t bStart = b.getStaticOffsets()[d], bEnd = bStart + b.getStaticSizes()[d];
          disjoint |= aEnd <= bStart || bEnd <= aStart;
        }
        if (!disjoint)
          return failure();
      }
    FailureOr<TilingResult> tiled =
        tensor::replaceExtractSliceWithTiledProducer(rewriter, slice, result);
    if (failed(tiled) || tiled->tiledValues.size() != 1 ||
        tiled->tiledValues.front().getType() != slice.getType())
      return failure();
    rewriter.replaceOp(slice, tiled->tiledValues.front());
    return success();
  }
};

struct SplitAtConcatenationsPass
    : mlir::dyno::impl::DynoSplitAtConcatenationsBase<SplitAtConcatenationsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitConsumerAtConcat, FoldSliceOfConcat, SliceDisjointElementwiseProducer>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
