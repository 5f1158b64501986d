//===- MultiplyByReciprocals.cpp - One division per broadcast divisor -*- C++ -*-===//
//
// A linalg.generic that divides by an operand it broadcasts (softmax's x / sum(x) per
// row) divides by the same value once per element of the broadcast dimensions. This pass
// computes the operand's reciprocals once, in their own elementwise op, and multiplies
// by them in the loop. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/Passes.h"
#include "dyno/Dialect/Dyno/Transforms/ExactQuotients.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "dyno-multiply-by-reciprocals"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOMULTIPLYBYRECIPROCALS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// How many times each element of `operand` is read by `op`'s loops: the product of the
/// sizes of the loop dimensions its indexing map leaves out (ShapedType::kDynamic when one
/// of them is not static).
int64_t readsPerElement(linalg::GenericOp op, OpOperand &operand) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<int64_t> loopSizes = op.getStaticLoopRanges();
  int64_t reads = 1;
  for (auto [dimension, size] : llvm::enumerate(loopSizes)) {
    if (map.isFunctionOfDim(dimension))
      continue;
    if (ShapedType::isDynamic(size))
      return ShapedType::kDynamic;
    reads *= size;
  }
  return reads;
}

/// The divisions whose divisor is `argument`, when those are all its uses and none of
/// them is rounded or compared.
SmallVector<arith::DivFOp> divisionsByOnly(BlockArgument argument) {
  SmallVector<arith::DivFOp> divisions;
  for (OpOperand &use : argument.getUses()) {
    auto division = dyn_cast<arith::DivFOp>(use.getOwner());
    if (!division || use.getOperandNumber() != 1 ||
        dyno::quotientIsRoundedOrCompared(division))
      return {};
    divisions.push_back(division);
  }
  return divisions;
}

/// `1 / x` for every element of the ranked float tensor `value`.
Value buildReciprocals(OpBuilder &builder, Location loc, Value value,
                       arith::FastMathFlagsAttr flags) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, value);
  Value init = tensor::EmptyOp::create(builder, loc, sizes, type.getElementType());
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(), utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{type}, ValueRange{value}, ValueRange{init},
      ArrayRef<AffineMap>{identity, identity}, iterators,
      [&](OpBuilder &body, Location bodyLoc, ValueRange arguments) {
        Value one = arith::ConstantOp::create(
            body, bodyLoc, body.getFloatAttr(type.getElementType(), 1.0));
        Value reciprocal = arith::DivFOp::create(body, bodyLoc, one, arguments[0]);
        if (flags)
          reciprocal.getDefiningOp()->setAttr("fastmath", flags);
        linalg::YieldOp::create(body, bodyLoc, reciprocal);
      });
  return generic.getResult(0);
}

struct MultiplyByReciprocalsPass
    : mlir::dyno::impl::DynoMultiplyByReciprocalsBase<MultiplyByReciprocalsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      rewrite(op);
  }

  void rewrite(linalg::GenericOp op) {
    if (!op.hasPureTensorSemantics())
      return;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand->get().getType());
      // f32 and f64 only: a reciprocal rounded to f16 or bf16 costs up to one ulp of
      // that type, the whole of its comparison tolerance.
      if (!type || !(type.getElementType().isF32() || type.getElementType().isF64()) ||
          !op.getMatchingIndexingMap(operand).isProjectedPermutation())
        continue;
      int64_t reads = readsPerElement(op, *operand);
      if (!ShapedType::isDynamic(reads) && reads < static_cast<int64_t>(minReuse))
        continue;
      BlockArgument argument = op.getMatchingBlockArgument(operand);
      SmallVector<arith::DivFOp> divisions = divisionsByOnly(argument);
      if (divisions.empty())
        continue;
      OpBuilder builder(op);
      Value reciprocals = buildReciprocals(builder, op.getLoc(), operand->get(),
                                           divisions.front().getFastmathAttr());
      operand->set(reciprocals);
      for (arith::DivFOp division : divisions) {
        OpBuilder inBody(division);
        auto product = arith::MulFOp::create(inBody, division.getLoc(), division.getLhs(),
                                             argument, division.getFastmathAttr());
        division.replaceAllUsesWith(product.getResult());
        division.erase();
      }
    }
  }
};
} // namespace
