//===- FuseSiblingLoops.cpp - One loop for producer and consumer -*- C++ -*-===//
//
// After linalg-to-loops, every op of a kernel is its own loop nest over the same rows and
// columns: a softmax block computes exp(x - max) into a buffer in one loop and sums the
// buffer in the next. This pass merges consecutive scf.for loops with the same bounds
// when each iteration of the second only touches, of the memory the first writes (or
// reads), the elements of the same iteration. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#define DEBUG_TYPE "dyno-fuse-sibling-loops"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOFUSESIBLINGLOOPS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// One memory access of an op nest: the memref, the indices (none for a whole-buffer
/// access such as memref.copy), and whether it writes.
struct Access {
  Value memref;
  SmallVector<Value> indices;
  bool whole = false;
  bool write = false;
};

/// The buffer a memref view is taken of (subviews, casts and reshapes are views).
Value rootOf(Value memref) {
  while (Operation *op = memref.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
      memref = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(op)) {
      memref = cast.getSource();
      continue;
    }
    break;
  }
  return memref;
}

/// The memory accesses of `root` and the ops nested in it, or failure when one of them
/// has effects this pass does not model.
FailureOr<SmallVector<Access>> accessesOf(Operation *root) {
  SmallVector<Access> accesses;
  WalkResult result = root->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      accesses.push_back({load.getMemRef(), llvm::to_vector(load.getIndices())});
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      accesses.push_back({store.getMemRef(), llvm::to_vector(store.getIndices()), false, true});
      return WalkResult::advance();
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      accesses.push_back({copy.getSource(), {}, true, false});
      accesses.push_back({copy.getTarget(), {}, true, true});
      return WalkResult::advance();
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      accesses.push_back({dealloc.getMemref(), {}, true, true});
      return WalkResult::advance();
    }
    if (isa<memref::AllocaOp, memref::AllocOp, scf::ForOp, scf::YieldOp>(op) ||
        isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return failure();
  return accesses;
}

/// Whether some position of both index lists is exactly the loop's induction variable:
/// then different iterations touch different elements.
bool separatedByIteration(const Access &first, Value firstIv, const Access &second,
                          Value secondIv) {
  if (first.whole || second.whole || first.indices.size() != second.indices.size())
    return false;
  for (auto [a, b] : llvm::zip(first.indices, second.indices))
    if (a == firstIv && b == secondIv)
      return true;
  return false;
}

/// Whether `second`'s iterations may run interleaved with `first`'s, each right after
/// the iteration of `first` with the same induction variable.
bool canFuse(scf::ForOp first, scf::ForOp second, ArrayRef<Access> firstAccesses,
             ArrayRef<Access> secondAccesses) {
  if (first.getLowerBound() != second.getLowerBound() ||
      first.getUpperBound() != second.getUpperBound() ||
      first.getStep() != second.getStep() || first.getNumResults() != 0 ||
      second.getNumResults() != 0)
    return false;
  for (const Access &a : firstAccesses)
    for (const Access &b : secondAccesses) {
      if (!a.write && !b.write)
        continue;
      if (rootOf(a.memref) != rootOf(b.memref))
        continue; // distinct buffers (kernel arguments never alias a written one)
      if (a.memref != b.memref ||
          !separatedByIteration(a, first.getInductionVar(), b, second.getInductionVar()))
        return false;
    }
  return true;
}

/// Whether `op` (between two loops) can move above `loop`: the values it uses are
/// defined before the loop or by `hoistedBefore` (ops that move first), and it touches no buffer the loop writes, nor writes one the
/// loop touches.
bool canHoistAbove(Operation *op, scf::ForOp loop, ArrayRef<Access> loopAccesses,
                   ArrayRef<Operation *> hoistedBefore, DominanceInfo &dominance) {
  bool operandsReady = true;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      Operation *owner = operand.getDefiningOp();
      if (!owner)
        owner = operand.getParentBlock()->getParentOp();
      if (op->isAncestor(owner) && owner != op->getParentOp())
        continue; // defined inside `op`
      if (llvm::is_contained(hoistedBefore, owner))
        continue; // moves above the loop too, before `op`
      if (!dominance.properlyDominates(operand, loop))
        operandsReady = false;
    }
  });
  if (!operandsReady)
    return false;
  FailureOr<SmallVector<Access>> accesses = accessesOf(op);
  if (failed(accesses))
    return false;
  for (const Access &a : *accesses)
    for (const Access &b : loopAccesses)
      if ((a.write || b.write) && rootOf(a.memref) == rootOf(b.memref))
        return false;
  return true;
}

/// Merges `second`'s body into `first`'s, after `first`'s own body.
void fuseInto(scf::ForOp first, scf::ForOp second) {
  Block *target = first.getBody();
  Block *source = second.getBody();
  source->getArgument(0).replaceAllUsesWith(first.getInductionVar());
  Operation *terminator = target->getTerminator();
  while (!llvm::hasSingleElement(*source)) {
    Operation &op = source->front();
    op.moveBefore(terminator);
  }
  second.erase();
}

/// Fuses pairs of loops in `block` until none fuses, then in the blocks nested in it.
void fuseInBlock(Block &block, DominanceInfo &dominance) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : block) {
      auto first = dyn_cast<scf::ForOp>(&op);
      if (!first)
        continue;
      FailureOr<SmallVector<Access>> firstAccesses = accessesOf(first);
      if (failed(firstAccesses))
        continue;
      // The next loop, with only ops that can move above `first` in between.
      SmallVector<Operation *> between;
      scf::ForOp second;
      for (Operation *next = first->getNextNode(); next; next = next->getNextNode()) {
        if ((second = dyn_cast<scf::ForOp>(next)))
          break;
        if (next->hasTrait<OpTrait::IsTerminator>() ||
            !canHoistAbove(next, first, *firstAccesses, between, dominance))
          break;
        between.push_back(next);
      }
      if (!second)
        continue;
      FailureOr<SmallVector<Access>> secondAccesses = accessesOf(second);
      if (failed(secondAccesses) ||
          !canFuse(first, second, *firstAccesses, *secondAccesses))
        continue;
      // `second` may use values defined between the loops: those move above `first`.
      for (Operation *hoisted : between)
        hoisted->moveBefore(first);
      fuseInto(first, second);
      changed = true;
      break;
    }
  }
  for (Operation &op : block)
    for (Region &region : op.getRegions())
      for (Block &nested : region)
        fuseInBlock(nested, dominance);
}

struct FuseSiblingLoopsPass
    : mlir::dyno::impl::DynoFuseSiblingLoopsBase<FuseSiblingLoopsPass> {
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    for (Region &region : getOperation()->getRegions())
      for (Block &block : region)
        fuseInBlock(block, dominance);
  }
};
} // namespace
