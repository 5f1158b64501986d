//===- PadsAsGenerics.cpp - Constant pads as parallel generics --*- C++ -*-===//
//
// A `tensor.pad` with a constant value becomes a `linalg.generic` over the padded shape
// that reads the source where the index falls inside it and yields the value elsewhere,
// so that dyno-tile-kernels shares it out among threads. See Passes.td.
//
//===----------------------------------------------------------------------===//
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
    Value padValue = pad.getConstantPaddingValue();
    if (!padValue)
      return rewriter.notifyMatchFailure(pad, "the padding value is not one value");
    RankedTensorType sourceType = pad.getSourceType();
    RankedTensorType resultType = pad.getResultType();
    // Static shapes (with no empty source dimension, as a read inside one could not be).
    if (!sourceType.hasStaticShape() || !resultType.hasStaticShape() ||
        llvm::is_contained(sourceType.getShape(), 0))
      return rewriter.notifyMatchFailure(pad, "a dynamic or empty shape");
    std::optional<SmallVector<int64_t>> low = getConstantIntValues(pad.getMixedLowPad());
    if (!low || llvm::any_of(*low, [](int64_t l) { return l < 0; }))
      return rewriter.notifyMatchFailure(pad, "a dynamic or negative low padding");

    Location loc = pad.getLoc();
    int64_t rank = resultType.getRank();
    Value source = pad.getSource();
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType());
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{}, ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location nested, ValueRange) {
          SmallVector<Value> indices;
          Value inside;
          for (int64_t d = 0; d < rank; ++d) {
            Value index = linalg::IndexOp::create(b, nested, d);
            if ((*low)[d] == 0 && sourceType.getDimSize(d) == resultType.getDimSize(d)) {
              indices.push_back(index);
              continue;
            }
            // index - low as an unsigned number is below the size exactly inside.
            Value shifted = arith::SubIOp::create(
                b, nested, index, arith::ConstantIndexOp::create(b, nested, (*low)[d]));
            Value size = arith::ConstantIndexOp::create(b, nested, sourceType.getDimSize(d));
            Value within = arith::CmpIOp::create(b, nested, arith::CmpIPredicate::ult,
                                                 shifted, size);
            indices.push_back(shifted);
            inside = inside ? arith::AndIOp::create(b, nested, inside, within) : within;
          }
          if (!inside) { // nothing padded: a copy
            linalg::YieldOp::create(
                b, nested, tensor::ExtractOp::create(b, nested, source, indices).getResult());
            return;
          }
          // The read only where the index is inside: contiguous along the innermost
          // dimension, so LLVM vectorizes it as a masked load.
          auto read = scf::IfOp::create(
              b, nested, inside,
              [&](OpBuilder &then, Location at) {
                scf::YieldOp::create(
                    then, at, tensor::ExtractOp::create(then, at, source, indices).getResult());
              },
              [&](OpBuilder &otherwise, Location at) {
                scf::YieldOp::create(otherwise, at, padValue);
              });
          linalg::YieldOp::create(b, nested, read.getResult(0));
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
