//===- CheckStaticSizes.cpp - Run-time checks of sizes the IR assumes -*- C++ -*-===//
//
// Where a linalg op's operands disagree on a loop's size (one static, one dynamic), or a
// tensor.cast makes a dynamic size static, the IR assumes the dynamic size's value. This
// pass checks that assumption on the host at run time. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dyno-check-static-sizes"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOCHECKSTATICSIZES
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

/// Asserts that dimension `dim` of `value` is `expected` (for `op`), as soon as `value`
/// exists: before anything (e.g. a copy canonicalization adds) relies on the size.
static void checkSize(OpBuilder &builder, Operation *op, Value value, int64_t dim,
                      int64_t expected) {
  Location loc = op->getLoc();
  if (auto argument = dyn_cast<BlockArgument>(value))
    builder.setInsertionPointToStart(argument.getOwner());
  else
    builder.setInsertionPointAfter(value.getDefiningOp());
  Value size = tensor::DimOp::create(builder, loc, value, dim);
  Value want = arith::ConstantIndexOp::create(builder, loc, expected);
  Value same = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, size, want);
  std::string message;
  llvm::raw_string_ostream(message)
      << "dyno: the lowered graph assumes size " << expected << " for dimension " << dim
      << " of a " << value.getType() << " (at " << loc << ")";
  cf::AssertOp::create(builder, loc, same, message);
}

namespace {
struct CheckStaticSizesPass
    : mlir::dyno::impl::DynoCheckStaticSizesBase<CheckStaticSizesPass> {
  void runOnOperation() override {
    OpBuilder builder(&getContext());
    SmallVector<Operation *> ops;
    getOperation().getBody().walk([&](Operation *op) {
      if (isa<linalg::LinalgOp, tensor::CastOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto cast = dyn_cast<tensor::CastOp>(op)) {
        auto source = dyn_cast<RankedTensorType>(cast.getSource().getType());
        auto result = dyn_cast<RankedTensorType>(cast.getType());
        if (!source || !result)
          continue;
        for (int64_t i = 0; i < result.getRank(); ++i)
          if (source.isDynamicDim(i) && !result.isDynamicDim(i))
            checkSize(builder, op, cast.getSource(), i, result.getDimSize(i));
        continue;
      }
      auto linalgOp = cast<linalg::LinalgOp>(op);
      if (!linalgOp.hasPureTensorSemantics())
        continue;
      // Per loop: a static size some operand gives it, and the operand dimensions that
      // leave it dynamic.
      unsigned numLoops = linalgOp.getNumLoops();
      SmallVector<int64_t> staticSize(numLoops, ShapedType::kDynamic);
      SmallVector<SmallVector<std::pair<Value, int64_t>>> dynamicDims(numLoops);
      for (OpOperand &operand : op->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type)
          continue;
        AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
        for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
          auto loop = dyn_cast<AffineDimExpr>(expr);
          if (!loop)
            continue;
          if (type.isDynamicDim(dim))
            dynamicDims[loop.getPosition()].push_back({operand.get(), dim});
          else
            staticSize[loop.getPosition()] = type.getDimSize(dim);
        }
      }
      for (unsigned loop = 0; loop < numLoops; ++loop)
        if (!ShapedType::isDynamic(staticSize[loop]))
          for (auto [value, dim] : dynamicDims[loop])
            checkSize(builder, op, value, dim, staticSize[loop]);
    }
  }
};
} // namespace
