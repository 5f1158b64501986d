//===- CheckGatherBounds.cpp - Bounds checks for data-dependent reads -*- C++ -*-===//
//
// A linalg body that reads another tensor at an index computed from input values (a
// gather: index_select, advanced indexing) must not read out of bounds where eager
// raises IndexError. This pass asserts the bounds in the body; dyno-hoist-kernel-
// assertions then checks them on the host before the read. See Passes.td.
//
//===----------------------------------------------------------------------===//
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

struct CheckGatherBoundsPass
    : dyno::impl::DynoCheckGatherBoundsBase<CheckGatherBoundsPass> {
  void runOnOperation() override {
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
