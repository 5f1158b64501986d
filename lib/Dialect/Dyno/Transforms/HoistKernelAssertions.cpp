//===- HoistKernelAssertions.cpp - Per-element checks become host checks -*- C++ -*-===//
//
// torch-mlir checks indices per element with `cf.assert` inside linalg bodies (an
// embedding's "index must be smaller than dim size"). In a kernel a failed assert can only
// abort the process. This pass computes an op's conditions over its iteration space in
// one reduction of their own and asserts the result on the host, before the op runs.
// See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

#define DEBUG_TYPE "dyno-hoist-kernel-assertions"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOHOISTKERNELASSERTIONS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// What one assertion's condition needs from the op that holds it.
struct ConditionSlice {
  SetVector<Operation *> ops;        // body ops computing the condition
  SetVector<unsigned> inputs;        // indices of the `ins` operands read
  SetVector<unsigned> indexedLoops;  // loops read through linalg.index
};

/// The body ops `condition` depends on, or failure when it depends on an `outs` value
/// or on an op with effects (then the assertion stays where it is).
FailureOr<ConditionSlice> sliceOf(linalg::GenericOp op, Value condition) {
  ConditionSlice slice;
  Block *body = op.getBody();
  bool ok = true;
  std::function<void(Value)> visit = [&](Value value) {
    if (!ok)
      return;
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() != body)
        return; // defined outside the op
      if (argument.getArgNumber() >= op.getNumDpsInputs())
        ok = false; // reads the output
      else
        slice.inputs.insert(argument.getArgNumber());
      return;
    }
    Operation *def = value.getDefiningOp();
    if (def->getBlock() != body || slice.ops.contains(def))
      return;
    if (!isMemoryEffectFree(def) || def->getNumRegions() > 0) {
      ok = false;
      return;
    }
    if (auto index = dyn_cast<linalg::IndexOp>(def))
      slice.indexedLoops.insert(index.getDim());
    for (Value operand : def->getOperands())
      visit(operand);
    slice.ops.insert(def);
  };
  visit(condition);
  if (!ok)
    return failure();
  return slice;
}

/// Builds `all(conditions)` over the loops the conditions read (one reduction for all
/// of an op's hoistable assertions), asserts it on the host before `op`, and removes the
/// assertions from the body. An assertion whose condition reads the op's outputs, or
/// indexes a loop no input it reads spans, stays in the body.
void hoist(linalg::GenericOp op, ArrayRef<cf::AssertOp> candidates) {
  ConditionSlice slice;
  SmallVector<cf::AssertOp> assertions;
  for (cf::AssertOp assertion : candidates) {
    FailureOr<ConditionSlice> own = sliceOf(op, assertion.getArg());
    if (failed(own))
      continue;
    assertions.push_back(assertion);
    slice.ops.insert(own->ops.begin(), own->ops.end());
    slice.inputs.insert(own->inputs.begin(), own->inputs.end());
    slice.indexedLoops.insert(own->indexedLoops.begin(), own->indexedLoops.end());
  }
  if (assertions.empty())
    return;
  SmallVector<Operation *> ordered(slice.ops.begin(), slice.ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<unsigned> inputs(slice.inputs.begin(), slice.inputs.end());
  llvm::sort(inputs);
  // The loops of the check: those of the inputs read, renumbered densely.
  SmallVector<AffineMap> inputMaps;
  llvm::SmallBitVector used(op.getNumLoops());
  for (unsigned input : inputs) {
    AffineMap map = op.getIndexingMapsArray()[input];
    inputMaps.push_back(map);
    for (AffineExpr result : map.getResults())
      result.walk([&](AffineExpr e) {
        if (auto dim = dyn_cast<AffineDimExpr>(e))
          used.set(dim.getPosition());
      });
  }
  for (unsigned loop : slice.indexedLoops)
    if (!used.test(loop))
      return;
  SmallVector<int64_t> newPosition(op.getNumLoops(), -1);
  unsigned numLoops = 0;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
    if (used.test(loop))
      newPosition[loop] = numLoops++;
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> replacements;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
    replacements.push_back(used.test(loop) ? getAffineDimExpr(newPosition[loop], context)
                                           : getAffineConstantExpr(0, context));
  SmallVector<AffineMap> maps;
  for (AffineMap map : inputMaps)
    maps.push_back(map.replaceDimsAndSymbols(replacements, {}, numLoops, 0));
  maps.push_back(AffineMap::get(numLoops, 0, {}, context));

  OpBuilder builder(op);
  Location loc = assertions.front().getLoc();
  SmallVector<Value> operands;
  for (unsigned input : inputs)
    operands.push_back(op.getDpsInputs()[input]);
  Type i1 = builder.getI1Type();
  Value init = tensor::EmptyOp::create(builder, loc, ArrayRef<int64_t>{}, i1);
  Value allTrue = arith::ConstantOp::create(builder, loc, builder.getBoolAttr(true));
  init = linalg::FillOp::create(builder, loc, allTrue, init).getResult(0);
  SmallVector<utils::IteratorType> iterators(numLoops, utils::IteratorType::reduction);
  auto check = linalg::GenericOp::create(
      builder, loc, init.getType(), operands, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange arguments) {
        IRMapping mapping;
        for (auto [position, input] : llvm::enumerate(inputs))
          mapping.map(op.getBody()->getArgument(input), arguments[position]);
        for (Operation *bodyOp : ordered) {
          if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
            Value loop = linalg::IndexOp::create(nested, nestedLoc,
                                                 newPosition[index.getDim()]);
            mapping.map(index.getResult(), loop);
            continue;
          }
          nested.clone(*bodyOp, mapping);
        }
        // The conditions first, then one `and` with the accumulator: the reduction form
        // both targets recognize.
        Value holds;
        for (cf::AssertOp assertion : assertions) {
          Value condition = mapping.lookupOrDefault(assertion.getArg());
          holds = holds ? arith::AndIOp::create(nested, nestedLoc, holds, condition).getResult()
                        : condition;
        }
        Value all = arith::AndIOp::create(nested, nestedLoc, arguments.back(), holds);
        linalg::YieldOp::create(nested, nestedLoc, all);
      });
  SetVector<StringRef> messages;
  for (cf::AssertOp assertion : assertions)
    messages.insert(assertion.getMsg());
  Value holds = tensor::ExtractOp::create(builder, loc, check.getResult(0), ValueRange{});
  cf::AssertOp::create(builder, loc, holds, llvm::join(messages, "; "));
  for (cf::AssertOp assertion : assertions)
    assertion.erase();
}

struct HoistKernelAssertionsPass
    : dyno::impl::DynoHoistKernelAssertionsBase<HoistKernelAssertionsPass> {
  void runOnOperation() override {
    llvm::MapVector<Operation *, SmallVector<cf::AssertOp>> assertions;
    getOperation()->walk([&](cf::AssertOp assertion) {
      auto op = dyn_cast<linalg::GenericOp>(assertion->getParentOp());
      if (op && op.hasPureTensorSemantics())
        assertions[op].push_back(assertion);
    });
    for (auto &[op, opAssertions] : assertions)
      hoist(cast<linalg::GenericOp>(op), opAssertions);
  }
};
} // namespace
