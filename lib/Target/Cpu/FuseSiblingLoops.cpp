//===- FuseSiblingLoops.cpp - One loop for producer and consumer -*- C++ -*-===//
//
// After linalg-to-loops, every op of a kernel is its own loop nest over the same rows and
// columns: a softmax block computes exp(x - max) into a buffer in one loop and sums the
// buffer in the next. This pass merges consecutive scf.for loops with the same bounds
// when each iteration of the second only touches, of the memory the first writes (or
// reads), the elements of the same iteration. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#define DEBUG_TYPE "dyno-fuse-sibling-loops"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOFUSESIBLINGLOOPS
#include "dyno/Target/Cpu/Passes.h.inc"
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
    if (isa<memref::AllocaOp, memref::AllocOp, scf::ForOp, scf::YieldOp, scf::ForallOp,
            scf::InParallelOp>(op) ||
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
  // One iteration each (a tile's unit row loop): the fused loop runs the same bodies in
  // the same order.
  std::optional<int64_t> lower = getConstantIntValue(first.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(first.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(first.getStep());
  if (lower && upper && step && *upper > *lower && *upper - *lower <= *step)
    return true;
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

/// How iteration `iv` of a parallel loop (scf.forall, as dyno-tile-kernels builds it)
/// reaches a buffer: through a subview whose offset in the buffer's leading dimension
/// is `iv * scale`, `size` rows long (size <= scale: iterations touch disjoint rows).
struct RowSlab {
  int64_t scale = 0;
  int64_t size = 0;
};

/// The scale of an offset `iv` (1) or `affine.apply (d0 * c)(iv)` (c), else 0.
int64_t offsetScale(OpFoldResult offset, Value iv) {
  auto value = dyn_cast<Value>(offset);
  if (!value)
    return 0;
  if (value == iv)
    return 1;
  auto apply = value.getDefiningOp<affine::AffineApplyOp>();
  if (!apply || apply.getMapOperands().size() != 1 || apply.getMapOperands()[0] != iv)
    return 0;
  AffineMap map = apply.getAffineMap();
  if (map.getNumResults() != 1 || map.getNumSymbols() != 0)
    return 0;
  auto mul = dyn_cast<AffineBinaryOpExpr>(map.getResult(0));
  if (!mul || mul.getKind() != AffineExprKind::Mul || !isa<AffineDimExpr>(mul.getLHS()))
    return 0;
  auto constant = dyn_cast<AffineConstantExpr>(mul.getRHS());
  return constant && constant.getValue() > 0 ? constant.getValue() : 0;
}

/// Whether a reshape keeps the leading dimension as a dimension of its own.
bool keepsLeadingDimension(Operation *op) {
  SmallVector<ReassociationIndices> groups;
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(op))
    groups = expand.getReassociationIndices();
  else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(op))
    groups = collapse.getReassociationIndices();
  else
    return false;
  return !groups.empty() && groups.front().size() == 1;
}

/// The rows of its buffer that iteration `iv` reaches through `memref`: the view chain
/// holds a subview at rows `iv * scale` (any views below it stay inside those rows),
/// and above it only reshapes that keep the leading dimension.
std::optional<RowSlab> rowSlabOf(Value memref, Value iv) {
  Value current = memref;
  while (Operation *op = current.getDefiningOp()) {
    if (auto subview = dyn_cast<memref::SubViewOp>(op)) {
      int64_t scale = offsetScale(subview.getMixedOffsets().front(), iv);
      std::optional<int64_t> size = getConstantIntValue(subview.getMixedSizes().front());
      if (scale && size && *size <= scale && subview.getSourceType().getRank() ==
                                                 subview.getType().getRank()) {
        // Above: reshapes that keep the leading dimension, up to the buffer.
        Value source = subview.getSource();
        while (Operation *above = source.getDefiningOp()) {
          if (!keepsLeadingDimension(above))
            break;
          source = above->getOperand(0);
        }
        if (source == rootOf(memref))
          return RowSlab{scale, *size};
        return std::nullopt;
      }
    }
    if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
      current = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(op)) {
      current = cast.getSource();
      continue;
    }
    break;
  }
  return std::nullopt;
}

/// Whether two scf.forall loops over the same space can become one: every buffer one
/// writes and the other touches is reached, in both, only through the rows of the
/// iteration (the same rows for the same induction variable, disjoint otherwise). The
/// fused body runs the first's body, then the second's, for each iteration.
bool canFuseParallel(scf::ForallOp first, scf::ForallOp second,
                     ArrayRef<Access> firstAccesses, ArrayRef<Access> secondAccesses) {
  if (first.getNumResults() != 0 || second.getNumResults() != 0 ||
      first.getRank() != 1 || second.getRank() != 1 ||
      first.getMixedLowerBound() != second.getMixedLowerBound() ||
      first.getMixedUpperBound() != second.getMixedUpperBound() ||
      first.getMixedStep() != second.getMixedStep() ||
      first.getMapping() != second.getMapping())
    return false;
  Value firstIv = first.getInductionVar(0), secondIv = second.getInductionVar(0);
  for (const Access &a : firstAccesses)
    for (const Access &b : secondAccesses) {
      if ((!a.write && !b.write) || rootOf(a.memref) != rootOf(b.memref))
        continue;
      std::optional<RowSlab> slabA = rowSlabOf(a.memref, firstIv);
      std::optional<RowSlab> slabB = rowSlabOf(b.memref, secondIv);
      if (!slabA || !slabB || slabA->scale != slabB->scale)
        return false;
    }
  return true;
}

/// Merges `second`'s body into `first`'s, after `first`'s own body.
void fuseParallelInto(scf::ForallOp first, scf::ForallOp second) {
  Block *target = first.getBody();
  Block *source = second.getBody();
  source->getArgument(0).replaceAllUsesWith(first.getInductionVar(0));
  Operation *terminator = target->getTerminator();
  while (!llvm::hasSingleElement(*source)) {
    Operation &op = source->front();
    op.moveBefore(terminator);
  }
  second.erase();
  // Each body took its own views of the iteration's rows (subviews at iv, their
  // offsets): one of each, so that accesses to the same rows use the same memref.
  SmallVector<Operation *> kept;
  for (Operation &op : llvm::make_early_inc_range(target->without_terminator())) {
    if (op.getNumRegions() != 0 || op.getNumResults() == 0 || !isMemoryEffectFree(&op))
      continue;
    Operation *same = nullptr;
    for (Operation *earlier : kept)
      if (OperationEquivalence::isEquivalentTo(earlier, &op,
                                               OperationEquivalence::IgnoreLocations)) {
        same = earlier;
        break;
      }
    if (!same) {
      kept.push_back(&op);
      continue;
    }
    op.replaceAllUsesWith(same);
    op.erase();
  }
}

/// Whether two sets of accesses touch a buffer that one of them writes.
bool conflict(ArrayRef<Access> first, ArrayRef<Access> second) {
  for (const Access &a : first)
    for (const Access &b : second)
      if ((a.write || b.write) && rootOf(a.memref) == rootOf(b.memref))
        return true;
  return false;
}

/// Whether `op` (between two loops) can move above `loop`: the values it uses are
/// defined before the loop or by `hoistedBefore` (ops that move first), and it touches no buffer the loop writes, nor writes one the
/// loop touches.
bool canHoistAbove(Operation *op, Operation *loop, ArrayRef<Access> loopAccesses,
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
  return !conflict(*accesses, loopAccesses);
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

/// Whether `loop` (or an op nested in it) uses a result of one of `ops`.
bool usesResultOf(Operation *loop, ArrayRef<Operation *> ops) {
  WalkResult result = loop->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (Operation *owner = operand.getDefiningOp(); owner && llvm::is_contained(ops, owner))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Fuses pairs of loops (scf.for, or scf.forall) in `block` until none fuses, then in the
/// blocks nested in it.
void fuseInBlock(Block &block, DominanceInfo &dominance) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : block) {
      if (!isa<scf::ForOp, scf::ForallOp>(op))
        continue;
      Operation *first = &op;
      FailureOr<SmallVector<Access>> firstAccesses = accessesOf(first);
      if (failed(firstAccesses))
        continue;
      // The next loop, with only ops in between that can move above `first` (the next
      // accumulator's fill) or below the second loop (the epilogue of `first`'s sum).
      SmallVector<Operation *> hoisted, sunk;
      SmallVector<Access> sunkAccesses;
      Operation *second = nullptr;
      for (Operation *next = first->getNextNode(); next; next = next->getNextNode()) {
        if (isa<scf::ForOp, scf::ForallOp>(next)) {
          second = next;
          break;
        }
        FailureOr<SmallVector<Access>> accesses = accessesOf(next);
        if (next->hasTrait<OpTrait::IsTerminator>() || failed(accesses))
          break;
        if (canHoistAbove(next, first, *firstAccesses, hoisted, dominance) &&
            !conflict(*accesses, sunkAccesses)) {
          hoisted.push_back(next);
          continue;
        }
        if (next->getNumRegions() != 0)
          break;
        sunk.push_back(next);
        sunkAccesses.append(*accesses);
      }
      if (!second || first->getName() != second->getName())
        continue;
      FailureOr<SmallVector<Access>> secondAccesses = accessesOf(second);
      if (failed(secondAccesses) || conflict(sunkAccesses, *secondAccesses) ||
          usesResultOf(second, sunk))
        continue;
      auto firstFor = dyn_cast<scf::ForOp>(first);
      bool fusable =
          firstFor ? canFuse(firstFor, cast<scf::ForOp>(second), *firstAccesses,
                             *secondAccesses)
                   : canFuseParallel(cast<scf::ForallOp>(first), cast<scf::ForallOp>(second),
                                     *firstAccesses, *secondAccesses);
      if (!fusable)
        continue;
      // `second` may use values defined between the loops: those move above `first`;
      // the others follow the fused loop.
      for (Operation *op : hoisted)
        op->moveBefore(first);
      if (firstFor)
        fuseInto(firstFor, cast<scf::ForOp>(second));
      else
        fuseParallelInto(cast<scf::ForallOp>(first), cast<scf::ForallOp>(second));
      Operation *after = first;
      for (Operation *op : sunk) {
        op->moveAfter(after);
        after = op;
      }
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
