//===- UnswitchInnerLoops.cpp - Invariant branches taken out of loops -*- C++ -*-===//
//
// An innermost loop's `scf.if` on a loop-invariant condition becomes an `scf.if` around
// two copies of the loop, each with one branch inlined. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#define DEBUG_TYPE "dyno-unswitch-inner-loops"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOUNSWITCHINNERLOOPS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

/// Whether `loop` holds no other loop.
static bool isInnermost(scf::ForOp loop) {
  bool nested = false;
  loop.getBody()->walk([&](LoopLikeOpInterface) { nested = true; });
  return !nested;
}

/// The first `scf.if` directly in `loop`'s body whose condition is defined outside it.
static scf::IfOp invariantBranch(scf::ForOp loop) {
  for (Operation &op : loop.getBody()->without_terminator())
    if (auto branch = dyn_cast<scf::IfOp>(op))
      if (loop.isDefinedOutsideOfLoop(branch.getCondition()))
        return branch;
  return {};
}

/// Replaces `branch` by the operations of one of its regions (the then-region where
/// `then`), its results by what that region yields.
static void inlineBranch(RewriterBase &rewriter, scf::IfOp branch, bool then) {
  Region &region = then ? branch.getThenRegion() : branch.getElseRegion();
  if (region.empty()) { // an scf.if without results and without an else-region
    rewriter.eraseOp(branch);
    return;
  }
  Block *block = &region.front();
  auto yield = cast<scf::YieldOp>(block->getTerminator());
  SmallVector<Value> results = yield.getOperands();
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(block, branch);
  rewriter.replaceOp(branch, results);
}

namespace {
struct UnswitchInnerLoopsPass
    : mlir::dyno::impl::DynoUnswitchInnerLoopsBase<UnswitchInnerLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop.getInitArgs().empty() && isInnermost(loop))
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
      scf::IfOp branch = invariantBranch(loop);
      if (!branch)
        continue;
      unsigned position = 0;
      for (Operation &op : loop.getBody()->without_terminator()) {
        if (&op == branch.getOperation())
          break;
        ++position;
      }
      rewriter.setInsertionPoint(loop);
      auto outer = scf::IfOp::create(rewriter, loop.getLoc(), branch.getCondition(),
                                     /*withElseRegion=*/true);
      for (bool then : {true, false}) {
        Block *target = then ? outer.thenBlock() : outer.elseBlock();
        rewriter.setInsertionPoint(target->getTerminator());
        auto copy = cast<scf::ForOp>(rewriter.clone(*loop));
        auto copied = cast<scf::IfOp>(
            *std::next(copy.getBody()->without_terminator().begin(), position));
        inlineBranch(rewriter, copied, then);
      }
      rewriter.eraseOp(loop);
    }
  }
};
} // namespace
