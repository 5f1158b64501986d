//===- KernelOutlining.cpp - Cloning ops into a kernel function -*- C++ -*-===//
#include "dyno/Dialect/Dyno/Transforms/KernelOutlining.h"

#include "mlir/IR/Builders.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

void mlir::dyno::cloneIntoKernel(ArrayRef<Operation *> ops, Block *entry, IRMapping &mapping,
                                 SmallVectorImpl<Value> &outerValues,
                                 function_ref<bool(Operation *)> rematerialize) {
  OpBuilder builder = OpBuilder::atBlockEnd(entry);
  std::function<void(Value)> importValue = [&](Value value) {
    if (mapping.contains(value))
      return;
    Operation *def = value.getDefiningOp();
    if (def && rematerialize(def)) {
      for (Value operand : def->getOperands())
        importValue(operand);
      visitUsedValuesDefinedAbove(def->getRegions(),
                                  [&](OpOperand *use) { importValue(use->get()); });
      builder.clone(*def, mapping);
      return;
    }
    mapping.map(value, entry->addArgument(value.getType(), value.getLoc()));
    outerValues.push_back(value);
  };
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      importValue(operand);
    visitUsedValuesDefinedAbove(op->getRegions(),
                                [&](OpOperand *use) { importValue(use->get()); });
    builder.clone(*op, mapping);
  }
}
