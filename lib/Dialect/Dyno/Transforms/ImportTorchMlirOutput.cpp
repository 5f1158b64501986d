//===- ImportTorchMlirOutput.cpp - torch-mlir's linalg output into Dyno -*- C++ -*-===//
//
// The hand-off from torch-mlir's lowering: its TMTensor scans, scatters and sorts
// (unregistered here, parsed under --allow-unregistered-dialect) become Dyno's ops of
// the same operands, properties and regions; any other op Dyno does not know (a torch op
// torch-mlir left, a TMTensor op Dyno has no counterpart for) is an error naming it.
// See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOIMPORTTORCHMLIROUTPUT
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// Dyno's op for a TMTensor op, or "" where Dyno has none.
StringRef dynoCounterpart(StringRef name) {
  return llvm::StringSwitch<StringRef>(name)
      .Case("tm_tensor.scan", dyno::ScanOp::getOperationName())
      .Case("tm_tensor.scatter", dyno::ScatterOp::getOperationName())
      .Case("tm_tensor.sort", dyno::SortOp::getOperationName())
      .Case("tm_tensor.yield", dyno::YieldOp::getOperationName())
      .Default("");
}

/// The error for an op that neither Dyno nor this hand-off knows.
InFlightDiagnostic unknownOp(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (name.starts_with("torch.") || name.starts_with("torch_c."))
    return op->emitError() << "torch-mlir did not lower '" << name << "' to linalg";
  if (name.starts_with("tm_tensor."))
    return op->emitError() << "torch-mlir lowered an op to '" << name
                           << "', which Dyno does not compile";
  return op->emitError() << "'" << name << "' is not an operation Dyno knows";
}

/// `op` recreated as `name`: its operands, properties (which an unregistered op keeps
/// as one attribute), attributes, result types and regions, which move over.
Operation *recreateAs(Operation *op, StringRef name) {
  OperationState state(op->getLoc(), name);
  state.addOperands(op->getOperands());
  state.addTypes(op->getResultTypes());
  state.propertiesAttr = op->getPropertiesAsAttribute();
  for (NamedAttribute attribute : op->getDiscardableAttrs())
    state.addAttribute(attribute.getName(), attribute.getValue());
  for (Region &region : op->getRegions())
    state.addRegion()->takeBody(region);
  OpBuilder builder(op);
  Operation *created = builder.create(state);
  op->replaceAllUsesWith(created->getResults());
  op->erase();
  return created;
}

struct ImportTorchMlirOutputPass
    : mlir::dyno::impl::DynoImportTorchMlirOutputBase<ImportTorchMlirOutputPass> {
  void runOnOperation() override {
    // Inner ops first, so that a scan's yield is Dyno's before the scan takes its body.
    SmallVector<Operation *> unregistered;
    getOperation()->walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (!op->isRegistered())
        unregistered.push_back(op);
    });
    bool failed = false;
    for (Operation *op : unregistered) {
      StringRef counterpart = dynoCounterpart(op->getName().getStringRef());
      if (counterpart.empty()) {
        unknownOp(op);
        failed = true;
        continue;
      }
      recreateAs(op, counterpart);
    }
    if (failed)
      signalPassFailure();
  }
};
} // namespace
