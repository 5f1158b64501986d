//===- KeepAssertionsInKernels.cpp - Index checks as checks of the index -*- C++ -*-===//
//
// GPUs: a per-element index check in a linalg body becomes a `dyno.check` of the index
// it guards, which the Triton target emits as a device-side assertion in the kernel
// reading through it; no reduction and host assertion of its own. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "dyno-keep-assertions-in-kernels"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOKEEPASSERTIONSINKERNELS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// The values of `body` that `root` is computed from (itself included), stopping at
/// values defined outside the body.
SetVector<Value> sliceInBody(Value root, Block *body) {
  SetVector<Value> slice;
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (value.getParentBlock() != body || !slice.insert(value))
      continue;
    if (Operation *def = value.getDefiningOp())
      llvm::append_range(worklist, def->getOperands());
  }
  return slice;
}

/// Whether `value` (in the body of `op`) is computed from the op's inputs' elements.
bool readsInputs(linalg::GenericOp op, Value value, DenseMap<Value, bool> &memo) {
  if (auto it = memo.find(value); it != memo.end())
    return it->second;
  memo[value] = false; // (no cycles in a block; seeded all the same)
  bool reads = false;
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    reads = argument.getOwner() == op.getBody() &&
            argument.getArgNumber() < op.getNumDpsInputs();
  } else if (Operation *def = value.getDefiningOp(); def && def->getBlock() == op.getBody()) {
    reads = llvm::any_of(def->getOperands(),
                         [&](Value operand) { return readsInputs(op, operand, memo); });
  }
  return memo[value] = reads;
}

/// Attaches `assertion` to an index of the first read after it (torch-mlir and
/// dyno-check-gather-bounds assert right before the read they guard) that shares an
/// input-derived value with its condition; false when that read has none (the host
/// pass then checks it).
bool attach(linalg::GenericOp op, cf::AssertOp assertion, DenseMap<Value, bool> &memo) {
  Block *body = op.getBody();
  SetVector<Value> condition = sliceInBody(assertion.getArg(), body);
  for (Operation *next = assertion->getNextNode(); next; next = next->getNextNode()) {
    auto extract = dyn_cast<tensor::ExtractOp>(next);
    if (!extract)
      continue;
    for (OpOperand &index : extract.getIndicesMutable()) {
      SetVector<Value> read = sliceInBody(index.get(), body);
      bool shared = llvm::any_of(read, [&](Value value) {
        return condition.contains(value) && readsInputs(op, value, memo);
      });
      if (!shared)
        continue;
      OpBuilder builder(extract);
      Value checked = dyno::CheckOp::create(builder, assertion.getLoc(), index.get(),
                                            assertion.getArg(), assertion.getMsg());
      index.set(checked);
      return true;
    }
    return false;
  }
  return false;
}

struct KeepAssertionsInKernelsPass
    : dyno::impl::DynoKeepAssertionsInKernelsBase<KeepAssertionsInKernelsPass> {
  void runOnOperation() override {
    SmallVector<cf::AssertOp> assertions;
    getOperation()->walk([&](cf::AssertOp assertion) {
      auto op = dyn_cast<linalg::GenericOp>(assertion->getParentOp());
      if (op && op.hasPureTensorSemantics())
        assertions.push_back(assertion);
    });
    DenseMap<Value, bool> memo;
    for (cf::AssertOp assertion : assertions)
      if (attach(cast<linalg::GenericOp>(assertion->getParentOp()), assertion, memo))
        assertion.erase();
  }
};
} // namespace
