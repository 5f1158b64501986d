//===- WindowTapsAsReads.cpp - Pooling taps read from their source --*- C++ -*-===//
//
// A strided slice (a pooling window's tap) of a constant pad or of a cheap all-parallel
// generic becomes a generic over the slice that computes each element it needs from
// the tensors under them, so that elementwise fusion puts the whole window into its
// reader. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "PaddedReads.h"
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/ElementwiseCosts.h"
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "dyno-window-taps-as-reads"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOWINDOWTAPSASREADS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {

/// The most ops of a generic's body that each read of it recomputes, widenings aside (a
/// batch norm and its ReLU are 6, 8 in bf16; a 3x3 window of stride 2 reads each element
/// 2.25 times on average).
constexpr unsigned kMaxRecomputedOps = 12;

/// A slice whose offsets, sizes and strides are static and which keeps its rank.
bool isStaticSlice(tensor::ExtractSliceOp slice) {
  return slice.getSourceType().hasStaticShape() && slice.getType().hasStaticShape() &&
         slice.getType().getRank() == slice.getSourceType().getRank() &&
         !ShapedType::isDynamicShape(slice.getStaticOffsets()) &&
         !ShapedType::isDynamicShape(slice.getStaticStrides()) &&
         llvm::all_of(slice.getStaticStrides(), [](int64_t s) { return s > 0; });
}

/// A generic whose elements are cheap to compute from its indices: one result, all
/// parallel, its result laid out as its loops (identity map), inputs read through
/// projected permutations, a short body without transcendental functions, index checks
/// (which must check every index, as eager does) or reads of its init.
bool isRecomputable(linalg::GenericOp op) {
  if (op->getNumResults() != 1 || !op.hasPureTensorSemantics() ||
      op.getNumLoops() != op.getNumParallelLoops() || dyno::hasTranscendental(op) ||
      !op.getBody()->getOps<dyno::CheckOp>().empty())
    return false;
  // (Widenings of bf16 inputs are a shift each: not counted, as elementwise fusion
  // does not count them.)
  if (llvm::count_if(op.getBody()->without_terminator(), [](Operation &inner) {
        return !isa<arith::ExtFOp>(inner);
      }) > kMaxRecomputedOps)
    return false;
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
      !op.getMatchingBlockArgument(op.getDpsInitOperand(0)).use_empty())
    return false;
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return op.getMatchingIndexingMap(input).isProjectedPermutation() &&
           isa<RankedTensorType>(input->get().getType());
  });
}

/// Whether elements of `value` can be computed where they are read (elementAt): a
/// chain of static slices ending at a static constant pad or a recomputable generic,
/// none of which strides or pads the innermost dimension. (Channels-last windows: the
/// innermost loop runs over channels, reads contiguously and branches only on the outer
/// indices. An NCHW window's taps are strided along its rows, and the pad's checks
/// change along them: ResNet's f32 stem ran 5% slower computed this way.)
bool computableAt(Value value, bool &strided) {
  while (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!isStaticSlice(slice) || slice.getType().getRank() == 0 ||
        slice.getStaticStrides().back() != 1)
      return false;
    strided |= llvm::any_of(slice.getStaticStrides(), [](int64_t s) { return s != 1; });
    value = slice.getSource();
  }
  if (auto pad = value.getDefiningOp<tensor::PadOp>())
    return dyno::hasStaticConstantPadding(pad) &&
           pad.getSourceType().getShape().back() == pad.getResultType().getShape().back() &&
           getConstantIntValues(pad.getMixedLowPad())->back() == 0;
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  return generic && isRecomputable(generic);
}

Value constantIndex(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// How many recomputable generics, one reading another, a tap computes: fusion has
/// already merged such chains, so one is the tap's producer and a second would be rare.
constexpr unsigned kMaxRecomputedGenerics = 2;

/// The element of `value` at `indices`, computed: through static slices (offset +
/// stride * index), a constant pad (its source's element where the index is inside it,
/// in an scf.if, else the padding value) and up to `generics` recomputable generics
/// (their bodies on their inputs' elements, computed the same way); read otherwise.
Value elementAt(OpBuilder &b, Location loc, Value value, SmallVector<Value> indices,
                unsigned generics = kMaxRecomputedGenerics) {
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
      slice && isStaticSlice(slice)) {
    SmallVector<Value> inSource;
    for (auto [index, offset, stride] :
         llvm::zip(indices, slice.getStaticOffsets(), slice.getStaticStrides())) {
      Value at = index;
      if (stride != 1)
        at = arith::MulIOp::create(b, loc, at, constantIndex(b, loc, stride));
      if (offset != 0)
        at = arith::AddIOp::create(b, loc, at, constantIndex(b, loc, offset));
      inSource.push_back(at);
    }
    return elementAt(b, loc, slice.getSource(), inSource, generics);
  }
  if (auto pad = value.getDefiningOp<tensor::PadOp>();
      pad && dyno::hasStaticConstantPadding(pad))
    return dyno::paddedElement(b, loc, pad, indices,
                               [&](OpBuilder &at, Location where, ValueRange inSource) {
                                 return elementAt(at, where, pad.getSource(),
                                                  llvm::to_vector(inSource), generics);
                               });
  if (auto generic = value.getDefiningOp<linalg::GenericOp>();
      generic && generics > 0 && isRecomputable(generic)) {
    // Its loops are its result's indices (identity map).
    IRMapping mapping;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(input);
      SmallVector<Value> inputIndices;
      for (AffineExpr result : map.getResults())
        inputIndices.push_back(indices[cast<AffineDimExpr>(result).getPosition()]);
      mapping.map(generic.getMatchingBlockArgument(input),
                  elementAt(b, loc, input->get(), inputIndices, generics - 1));
    }
    for (Operation &op : generic.getBody()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(op)) {
        mapping.map(index.getResult(), indices[index.getDim()]);
        continue;
      }
      b.clone(op, mapping);
    }
    auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
    return mapping.lookupOrDefault(yield.getOperand(0));
  }
  return tensor::ExtractOp::create(b, loc, value, indices);
}

/// A pooling window's tap: a static slice with a stride, of a pad or a recomputable
/// generic (through other slices), that only generics read, as inputs.
struct WindowTapAsRead : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    bool strided = false;
    if (!computableAt(slice.getResult(), strided) || !strided)
      return rewriter.notifyMatchFailure(slice, "not a strided slice of a computable tensor");
    if (llvm::is_contained(slice.getType().getShape(), 0) ||
        slice.getResult().use_empty() ||
        !llvm::all_of(slice.getResult().getUses(), [](OpOperand &use) {
          auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
          return reader && reader.isDpsInput(&use);
        }))
      return rewriter.notifyMatchFailure(slice, "a reader that is not a generic's input");
    linalg::GenericOp generic = dyno::generateElements(
        rewriter, slice.getLoc(), slice.getType(),
        [&](OpBuilder &b, Location loc, ValueRange indices) {
          return elementAt(b, loc, slice.getResult(), llvm::to_vector(indices));
        });
    rewriter.replaceOp(slice, generic.getResults());
    return success();
  }
};

struct WindowTapsAsReadsPass
    : mlir::dyno::impl::DynoWindowTapsAsReadsBase<WindowTapsAsReadsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<WindowTapAsRead>(&getContext());
    // Bottom-up: a window's outer slices before the slices of rows they are taken from.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
