//===- ScatterAddsAsReductions.cpp - Small histograms as row sums -*- C++ -*-===//
//
// A scatter that adds many updates into a few elements (torch.histc, bincount, a
// mixture-of-experts router's tokens per expert) is, on a GPU, thousands of atomic adds
// on the same few addresses. This pass rewrites it as a reduction with one row per
// destination element: row d sums the updates whose index is d. Its index producer then
// fuses into the reduction (dyno-fuse-elementwise), and the destination's initial
// value is the reduction's. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "dyno-scatter-adds-as-reductions"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOSCATTERADDSASREDUCTIONS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// The value `scatter`'s region adds to the element it lands on (`original + f(update)`,
/// f of the update alone, in arith/math ops), or null.
Value addedContribution(dyno::ScatterOp scatter) {
  Block &body = scatter.getRegion().front();
  Value original = body.getArgument(1);
  Value yielded = body.getTerminator()->getOperand(0);
  Operation *add = yielded.getDefiningOp();
  if (!add || !isa<arith::AddFOp, arith::AddIOp>(add) || add->getBlock() != &body)
    return {};
  if (add->getOperand(0) != original && add->getOperand(1) != original)
    return {};
  Value contribution = add->getOperand(add->getOperand(0) == original ? 1 : 0);
  if (contribution == original)
    return {};
  for (Operation &inner : body.without_terminator()) {
    if (&inner == add)
      continue;
    if (llvm::is_contained(inner.getOperands(), original) || inner.getNumRegions() ||
        !isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return {};
  }
  return contribution;
}

/// The static slice [offset, offset + size) along dimension 0 that the only user of
/// `value` reads (torch-mlir's histc drops its overflow bin so), or the whole tensor.
std::pair<int64_t, int64_t> rowsRead(Value value, tensor::ExtractSliceOp &slice) {
  int64_t rows = cast<RankedTensorType>(value.getType()).getDimSize(0);
  slice = {};
  if (!value.hasOneUse())
    return {0, rows};
  auto user = dyn_cast<tensor::ExtractSliceOp>(*value.getUsers().begin());
  if (!user || user.getSourceType().getRank() != 1 || user.getResultType().getRank() != 1 ||
      !user.hasUnitStride() || ShapedType::isDynamic(user.getStaticOffsets()[0]) ||
      ShapedType::isDynamic(user.getStaticSizes()[0]))
    return {0, rows};
  slice = user;
  return {user.getStaticOffsets()[0], user.getStaticSizes()[0]};
}

struct ScatterAddsAsReductionsPass
    : dyno::impl::DynoScatterAddsAsReductionsBase<ScatterAddsAsReductionsPass> {
  using Base::Base;

  LogicalResult rewrite(dyno::ScatterOp scatter) {
    auto originalType = cast<RankedTensorType>(scatter.getOriginal().getType());
    auto updatesType = cast<RankedTensorType>(scatter.getUpdates().getType());
    auto indicesType = cast<RankedTensorType>(scatter.getIndices().getType());
    Type element = originalType.getElementType();
    // One destination dimension, addressed by one index per update; an update is one
    // element (a window of one element at most).
    if (originalType.getRank() != 1 || !originalType.hasStaticShape() ||
        !updatesType.hasStaticShape() || !indicesType.hasStaticShape() ||
        indicesType.getRank() != 2 || indicesType.getDimSize(1) != 1 ||
        scatter.getDimensionMap().size() != 1 || scatter.getDimensionMap()[0] != 0 ||
        updatesType.getRank() > 2 || (updatesType.getRank() == 2 && updatesType.getDimSize(1) != 1))
      return failure();
    // Low-precision floats would round the running sum at every step.
    if (!(element.isF32() || element.isF64() || element.isSignlessInteger()))
      return failure();
    int64_t updates = updatesType.getDimSize(0);
    if (updates == 0 || updates > maxUpdates)
      return failure();
    Value contribution = addedContribution(scatter);
    if (!contribution)
      return failure();
    tensor::ExtractSliceOp slice;
    auto [first, rows] = rowsRead(scatter.getResult(0), slice);
    if (rows == 0 || rows > maxDestinationElements)
      return failure();

    OpBuilder b(scatter);
    Location loc = scatter.getLoc();
    MLIRContext *ctx = scatter.getContext();
    Value init = scatter.getOriginal();
    if (slice)
      init = tensor::ExtractSliceOp::create(b, loc, init, ArrayRef<OpFoldResult>{b.getIndexAttr(first)},
                                            ArrayRef<OpFoldResult>{b.getIndexAttr(rows)},
                                            ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    // (d, n): d the destination row, n the update.
    AffineExpr d = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx);
    AffineExpr zero = getAffineConstantExpr(0, ctx);
    SmallVector<AffineExpr> updateRead = {n};
    if (updatesType.getRank() == 2)
      updateRead.push_back(zero);
    SmallVector<AffineMap> maps = {AffineMap::get(2, 0, updateRead, ctx),
                                   AffineMap::get(2, 0, {n, zero}, ctx),
                                   AffineMap::get(2, 0, {d}, ctx)};
    SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                  utils::IteratorType::reduction};
    Block &body = scatter.getRegion().front();
    bool failedClone = false;
    auto sum = linalg::GenericOp::create(
        b, loc, init.getType(), ValueRange{scatter.getUpdates(), scatter.getIndices()},
        ValueRange{init}, maps, iterators,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange arguments) {
          IRMapping mapping;
          mapping.map(body.getArgument(0), arguments[0]);
          for (Operation &inner : body.without_terminator()) {
            if (inner.getResult(0) == body.getTerminator()->getOperand(0))
              break;
            nested.clone(inner, mapping);
          }
          Value added = mapping.lookupOrDefault(contribution);
          if (added.getParentBlock() != nested.getBlock()) {
            // (a constant of the region, or a value from above)
            Operation *def = added.getDefiningOp();
            if (!def || !isa<arith::ConstantOp>(def)) {
              failedClone = true;
              linalg::YieldOp::create(nested, nestedLoc, arguments[2]);
              return;
            }
            added = nested.clone(*def)->getResult(0);
          }
          // Row d takes the updates whose index is d; the others add the identity
          // (-0.0 for floats: x + -0.0 is x, -0.0 included).
          Value row = linalg::IndexOp::create(nested, nestedLoc, 0);
          if (first)
            row = arith::AddIOp::create(nested, nestedLoc, row,
                                        arith::ConstantIndexOp::create(nested, nestedLoc, first));
          Value index = arith::IndexCastOp::create(nested, nestedLoc, nested.getIndexType(),
                                                   arguments[1]);
          Value hit = arith::CmpIOp::create(nested, nestedLoc, arith::CmpIPredicate::eq,
                                            index, row);
          Value identity;
          if (auto floatType = dyn_cast<FloatType>(element))
            identity = arith::ConstantOp::create(
                nested, nestedLoc, floatType,
                nested.getFloatAttr(floatType, APFloat::getZero(floatType.getFloatSemantics(),
                                                                /*Negative=*/true)));
          else
            identity = arith::ConstantOp::create(nested, nestedLoc, element,
                                                 nested.getIntegerAttr(element, 0));
          Value term = arith::SelectOp::create(nested, nestedLoc, hit, added, identity);
          Value total = isa<FloatType>(element)
                            ? Value(arith::AddFOp::create(nested, nestedLoc, arguments[2], term))
                            : Value(arith::AddIOp::create(nested, nestedLoc, arguments[2], term));
          linalg::YieldOp::create(nested, nestedLoc, total);
        });
    if (failedClone) {
      sum.erase();
      return failure();
    }
    if (slice) {
      slice.getResult().replaceAllUsesWith(sum.getResult(0));
      slice.erase();
    } else {
      scatter.getResult(0).replaceAllUsesWith(sum.getResult(0));
    }
    scatter.erase();
    return success();
  }

  void runOnOperation() override {
    SmallVector<dyno::ScatterOp> scatters;
    getOperation().walk([&](dyno::ScatterOp scatter) { scatters.push_back(scatter); });
    for (dyno::ScatterOp scatter : scatters)
      (void)rewrite(scatter);
  }
};
} // namespace
