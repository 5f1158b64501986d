//===- KernelOutlining.cpp - Cloning ops into a kernel function -*- C++ -*-===//
#include "dyno/Dialect/Dyno/Transforms/KernelOutlining.h"

#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
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

SmallVector<Value> mlir::dyno::resolvedDynamicSizes(OpBuilder &builder, ArrayRef<Value> tensors,
                                                    ArrayRef<Operation *> alsoResolve) {
  SmallVector<Value> sizes;
  SmallVector<Operation *> worklist(alsoResolve);
  for (Value tensor : tensors) {
    auto type = cast<RankedTensorType>(tensor.getType());
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i)) {
        auto dim = tensor::DimOp::create(builder, tensor.getLoc(), tensor, i);
        sizes.push_back(dim);
        worklist.push_back(dim);
      }
  }
  if (sizes.empty())
    return sizes;
  // A placeholder user keeps the sizes alive while patterns replace them.
  auto holder = UnrealizedConversionCastOp::create(builder, sizes.front().getLoc(),
                                                   TypeRange{}, sizes);
  MLIRContext *context = builder.getContext();
  RewritePatternSet patterns(context);
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  memref::populateResolveShapedTypeResultDimsPatterns(patterns);
  tensor::DimOp::getCanonicalizationPatterns(patterns, context);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(worklist, std::move(patterns), config);
  SmallVector<Value> resolved(holder.getOperands());
  holder.erase();
  return resolved;
}

SmallVector<dyno::LaunchOp> mlir::dyno::launchesOf(ModuleOp module, func::FuncOp kernel) {
  SmallVector<dyno::LaunchOp> launches;
  module.walk([&](dyno::LaunchOp launch) {
    if (launch.getCallee().getLeafReference() == kernel.getSymNameAttr())
      launches.push_back(launch);
  });
  return launches;
}
