//===- CheckGatherBounds.cpp - Bounds checks for data-dependent reads -*- C++ -*-===//
//
// A linalg body that reads another tensor at an index computed from input values (a
// gather: index_select, advanced indexing) must not read out of bounds where eager
// raises IndexError. This pass asserts the bounds in the body; dyno-hoist-kernel-
// assertions then checks them on the host before the read. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dyno-check-gather-bounds"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOCHECKGATHERBOUNDS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// Whether `value` is computed (inside `body`) from an element of an input tensor.
bool dependsOnInputValues(Value value, Block *body, unsigned numInputs) {
  SmallVector<Value> worklist{value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    if (auto argument = dyn_cast<BlockArgument>(current)) {
      if (argument.getOwner() == body && argument.getArgNumber() < numInputs)
        return true;
      continue;
    }
    Operation *def = current.getDefiningOp();
    if (!def || def->getBlock() != body)
      continue;
    llvm::append_range(worklist, def->getOperands());
  }
  return false;
}

/// Asserts on the host, before `scatter`, that every index addresses original: for
/// column k (dimension d = dimension_map[k]), 0 <= index <= size(d) - extent, where
/// extent is the update slice's size along d (1 where no slice dimension maps there).
void checkScatterIndices(dyno::ScatterOp scatter) {
  OpBuilder builder(scatter);
  Location loc = scatter.getLoc();
  Value indices = scatter.getIndices(), updates = scatter.getUpdates();
  auto indicesType = cast<RankedTensorType>(indices.getType());
  Type indexElement = indicesType.getElementType();
  int64_t originalRank = cast<RankedTensorType>(scatter.getOriginal().getType()).getRank();
  int64_t offset =
      originalRank - (cast<RankedTensorType>(updates.getType()).getRank() - 1);
  SmallVector<Value> bounds;
  for (int64_t dim : scatter.getDimensionMap()) {
    Value size = tensor::DimOp::create(builder, loc, scatter.getOriginal(), dim);
    if (dim >= offset) {
      Value extent = tensor::DimOp::create(builder, loc, updates, 1 + dim - offset);
      size = arith::SubIOp::create(builder, loc, size, extent);
    } else {
      size = arith::SubIOp::create(builder, loc, size,
                                   arith::ConstantIndexOp::create(builder, loc, 1));
    }
    bounds.push_back(arith::IndexCastOp::create(builder, loc, indexElement, size));
  }
  Type i1 = builder.getI1Type();
  Value init = tensor::EmptyOp::create(builder, loc, ArrayRef<int64_t>{}, i1);
  Value allTrue = arith::ConstantOp::create(builder, loc, builder.getBoolAttr(true));
  init = linalg::FillOp::create(builder, loc, allTrue, init).getResult(0);
  MLIRContext *context = builder.getContext();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(2, context),
                                 AffineMap::get(2, 0, {}, context)};
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::reduction);
  auto check = linalg::GenericOp::create(
      builder, loc, init.getType(), ValueRange{indices}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value column = linalg::IndexOp::create(b, l, 1);
        Value bound = bounds.back();
        for (int64_t k = static_cast<int64_t>(bounds.size()) - 2; k >= 0; --k) {
          Value isColumn = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, column,
                                                 arith::ConstantIndexOp::create(b, l, k));
          bound = arith::SelectOp::create(b, l, isColumn, bounds[k], bound);
        }
        Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(indexElement, 0));
        Value aboveZero =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, args[0], zero);
        Value belowBound =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, args[0], bound);
        Value ok = arith::AndIOp::create(b, l, aboveZero, belowBound);
        linalg::YieldOp::create(b, l, ValueRange{arith::AndIOp::create(b, l, args[1], ok)});
      });
  Value holds = tensor::ExtractOp::create(builder, loc, check.getResult(0), ValueRange{});
  cf::AssertOp::create(builder, loc, holds,
                       "index out of range: dyno checks scatter indices like eager");
}

struct CheckGatherBoundsPass
    : dyno::impl::DynoCheckGatherBoundsBase<CheckGatherBoundsPass> {
  void runOnOperation() override {
    getOperation()->walk([&](dyno::ScatterOp scatter) { checkScatterIndices(scatter); });
    getOperation()->walk([&](tensor::ExtractOp extract) {
      auto op = dyn_cast<linalg::GenericOp>(extract->getParentOp());
      if (!op || !op.hasPureTensorSemantics())
        return;
      // The tensor read must come from outside the body (its sizes are then known
      // before the op runs).
      if (extract.getTensor().getParentBlock() == op.getBody())
        return;
      OpBuilder builder(extract);
      Location loc = extract.getLoc();
      Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
      for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
        if (!dependsOnInputValues(index, op.getBody(), op.getNumDpsInputs()))
          continue;
        Value size = tensor::DimOp::create(builder, loc, extract.getTensor(), dim);
        Value aboveZero =
            arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sge, index, zero);
        Value belowSize =
            arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt, index, size);
        Value inBounds = arith::AndIOp::create(builder, loc, aboveZero, belowSize);
        cf::AssertOp::create(builder, loc, inBounds,
                             "index out of range: dyno checks gather indices like eager");
      }
    });
  }
};
} // namespace
