//===- MergeSiblingGenerics.cpp - One generic for sibling graph outputs -*- C++ -*-===//
//
// Elementwise generics that read a common tensor over the same iteration space, and
// whose results are written to memory anyway (only returned by the graph, or
// transcendental and read by several ops), become one generic with all their results.
// Kernel formation puts a producer into a consumer's kernel only when all its users are
// in that kernel, so two outputs computed from shared intermediates (max pooling's
// values and indices) were separate kernels, each re-reading the input and the shared
// intermediates through memory. Once merged, the shared producers have one
// user, and `dyno-fuse-elementwise` (run again after this pass) fuses them in. See
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/ElementwiseCosts.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/EquivalenceClasses.h"

#define DEBUG_TYPE "dyno-merge-sibling-generics"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOMERGESIBLINGGENERICS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

/// A value the graph only returns, directly or through reshapes that are returned.
static bool onlyReturned(Value value) {
  return llvm::all_of(value.getUsers(), [](Operation *user) {
    if (isa<func::ReturnOp>(user))
      return true;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
      return onlyReturned(user->getResult(0));
    return false;
  });
}

/// A generic whose results kernel formation writes to memory whatever the merge: only
/// returned, or transcendental and read by several ops (dyno-fuse-elementwise computes
/// such a producer once rather than in each consumer: a rotary embedding's cos and sin
/// of the same angles, each read by the q and the k of every layer).
static bool writtenAnyway(linalg::GenericOp op) {
  if (llvm::all_of(op->getResults(), onlyReturned))
    return true;
  return dyno::hasTranscendental(op) && !op->use_empty() && !op->hasOneUse();
}

/// An all-parallel generic of static loop ranges whose results are written through
/// identity maps and to memory anyway: merging it loses no fusion into a consumer.
static bool isCandidate(linalg::GenericOp op) {
  if (op.getNumLoops() != op.getNumParallelLoops() || op.getNumLoops() == 0 ||
      !op.hasPureTensorSemantics())
    return false;
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isIdentity())
      return false;
  return writtenAnyway(op);
}

/// Moves `op` (or the op of `anchor`'s block that holds it) after `anchor` if it is
/// before it, with the users of its results that would then precede it.
static void moveAfterIfBefore(Operation *op, Operation *anchor) {
  op = anchor->getBlock()->findAncestorOpInBlock(*op);
  if (!op || op == anchor || !op->isBeforeInBlock(anchor))
    return;
  op->moveAfter(anchor);
  for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
    moveAfterIfBefore(user, op);
}

/// Whether no member reads what another computes, even through other ops: every
/// operand of each is an argument, made from nothing (an empty tensor, a constant), or
/// made before the first member. (A member reading a kernel that reads an earlier
/// member would have to come before and after the merged generic.)
static bool operandsPrecede(ArrayRef<linalg::GenericOp> members) {
  Operation *first = members.front();
  return llvm::all_of(members, [&](linalg::GenericOp member) {
    return llvm::all_of(member->getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return !def || def->getNumOperands() == 0 ||
             (def->getBlock() == first->getBlock() && def->isBeforeInBlock(first));
    });
  });
}

/// One generic computing every member's results, built before `insertionPoint`.
static linalg::GenericOp merge(MutableArrayRef<linalg::GenericOp> members,
                               Operation *insertionPoint) {
  OpBuilder b(insertionPoint);
  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> inputMaps, initMaps;
  SmallVector<Type> resultTypes;
  for (linalg::GenericOp &op : members) {
    for (OpOperand *input : op.getDpsInputOperands()) {
      inputs.push_back(input->get());
      inputMaps.push_back(op.getMatchingIndexingMap(input));
    }
    for (OpOperand &init : op.getDpsInitsMutable()) {
      inits.push_back(init.get());
      initMaps.push_back(op.getMatchingIndexingMap(&init));
    }
    llvm::append_range(resultTypes, op->getResultTypes());
  }
  SmallVector<AffineMap> maps(inputMaps);
  llvm::append_range(maps, initMaps);
  linalg::GenericOp first = members.front();
  auto merged = linalg::GenericOp::create(b, first.getLoc(), resultTypes, inputs, inits, maps,
                                          first.getIteratorTypesArray());
  Block *body = b.createBlock(&merged.getRegion());
  SmallVector<Value> inputArgs, initArgs;
  for (Value input : inputs)
    inputArgs.push_back(body->addArgument(getElementTypeOrSelf(input.getType()), input.getLoc()));
  for (Value init : inits)
    initArgs.push_back(body->addArgument(getElementTypeOrSelf(init.getType()), init.getLoc()));
  b.setInsertionPointToEnd(body);
  SmallVector<Value> yielded;
  unsigned nextInput = 0, nextInit = 0;
  for (linalg::GenericOp op : members) {
    Block &old = op.getRegion().front();
    IRMapping mapping;
    for (unsigned i = 0, e = op.getNumDpsInputs(); i < e; ++i)
      mapping.map(old.getArgument(i), inputArgs[nextInput++]);
    for (unsigned i = 0, e = op.getNumDpsInits(); i < e; ++i)
      mapping.map(old.getArgument(op.getNumDpsInputs() + i), initArgs[nextInit++]);
    for (Operation &inner : old.without_terminator())
      b.clone(inner, mapping);
    for (Value value : old.getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(value));
  }
  linalg::YieldOp::create(b, merged.getLoc(), yielded);
  return merged;
}

namespace {
struct MergeSiblingGenericsPass
    : mlir::dyno::impl::DynoMergeSiblingGenericsBase<MergeSiblingGenericsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    for (Block &block : func.getBody()) {
      // Candidates of one iteration space that read a common tensor are one class.
      SmallVector<linalg::GenericOp> candidates;
      for (auto op : block.getOps<linalg::GenericOp>())
        if (isCandidate(op))
          candidates.push_back(op);
      llvm::EquivalenceClasses<Operation *> classes;
      DenseMap<std::pair<Value, SmallVector<int64_t>>, Operation *> readerOf;
      for (linalg::GenericOp op : candidates) {
        classes.insert(op);
        SmallVector<int64_t> ranges = op.getStaticLoopRanges();
        for (OpOperand *input : op.getDpsInputOperands()) {
          if (!isa<RankedTensorType>(input->get().getType()))
            continue;
          auto [it, inserted] = readerOf.try_emplace({input->get(), ranges}, op);
          if (!inserted)
            classes.unionSets(it->second, op);
        }
      }
      for (const auto *set : classes) {
        if (!set->isLeader())
          continue;
        SmallVector<linalg::GenericOp> members;
        for (Operation *member : classes.members(*set))
          members.push_back(cast<linalg::GenericOp>(member));
        if (members.size() < 2)
          continue;
        llvm::sort(members, [](linalg::GenericOp a, linalg::GenericOp b) {
          return a->isBeforeInBlock(b);
        });
        if (!operandsPrecede(members))
          continue;
        // After the last member, every operand of each member is defined; the members'
        // users before it (returns and the reshapes before them, the kernels reading an
        // earlier member) move after the merged op, with their own users.
        Operation *last = members.back();
        linalg::GenericOp merged = merge(members, last->getNextNode());
        unsigned result = 0;
        for (linalg::GenericOp op : members) {
          for (Value old : op->getResults()) {
            Value replacement = merged->getResult(result++);
            for (Operation *user : llvm::make_early_inc_range(old.getUsers()))
              moveAfterIfBefore(user, merged);
            old.replaceAllUsesWith(replacement);
          }
        }
        for (linalg::GenericOp op : members)
          op->erase();
      }
    }
  }
};
} // namespace
