//===- ExpandLoopsThroughReshapes.cpp - One space across reshapes -*- C++ -*-===//
//
// A residual add over (batch, tokens, width) followed by a layer norm over
// (batch * tokens, width) is one kernel after kernel formation, but two index spaces
// for Triton: the add's three loops and the norm's two meet through a
// `tensor.collapse_shape` that merges dimensions, which the iteration space does not
// follow. dyno-split-kernels-for-triton would make it two kernels, the add's result
// going through memory.
//
// Here the generics that read a computed tensor through such a reshape take the
// producer's shape instead: their loops are expanded (upstream's reshape fusion by
// expansion), the reshape moves past them, and a reshaped result the kernel returns is
// reshaped by the host (a view) after the launch. A generic that reads a computed copy
// in another order through a rotation's mod map (Swin's window reversal, read shifted
// back) reads the copy's source with the maps composed, and the copy is computed in it
// (MoveReads.h). A kernel keeps the rewrite only where it then fits one space; elsewhere
// it is left exactly as it was.
//
//===----------------------------------------------------------------------===//
#include "IterationSpace.h"

#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/KernelOutlining.h"
#include "dyno/Dialect/Dyno/Transforms/MoveReads.h"
#include "dyno/Target/Triton/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOEXPANDLOOPSTHROUGHRESHAPES
#include "dyno/Target/Triton/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

namespace {

bool isReshape(Operation *op) { return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op); }

/// The reshapes (innermost first) through which `value` views a generic's result, or
/// nothing when it is not such a view.
SmallVector<Operation *> reshapesOfComputed(Value value) {
  SmallVector<Operation *> chain;
  Operation *def = value.getDefiningOp();
  while (def && isReshape(def)) {
    chain.push_back(def);
    def = def->getOperand(0).getDefiningOp();
  }
  if (chain.empty() || !isa_and_nonnull<linalg::GenericOp>(def))
    return {};
  std::reverse(chain.begin(), chain.end());
  return chain;
}

bool hasStaticShapes(func::FuncOp kernel) {
  auto isStatic = [](Type type) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    return !ranked || ranked.hasStaticShape();
  };
  return llvm::all_of(kernel.getArgumentTypes(), isStatic) &&
         llvm::all_of(kernel.getResultTypes(), isStatic);
}

bool hasScanScatterOrSort(func::FuncOp kernel) {
  return kernel
      .walk([](Operation *op) {
        return isa<ScanOp, ScatterOp, SortOp>(op) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Reshape fusion by expansion, limited to reshapes of tensors the kernel computes: a
/// generic reading a collapsed computed tensor, or an expanded generic result. (Reshapes
/// of arguments are strides the lowering reads directly.) A generic reading a collapse
/// through a rotation's mod map reads the collapse's source, and a copy in another
/// order that only it reads fuses in (Swin's window reversal of a bf16 matrix product's
/// result, shifted back by its reader: a copy kernel of its own otherwise).
LogicalResult expandThroughReshapes(func::FuncOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  RewritePatternSet patterns(ctx);
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, [](OpOperand *operand) {
    Operation *reshape = operand->get().getDefiningOp();
    if (reshape && isa<tensor::CollapseShapeOp>(reshape))
      return isa_and_nonnull<linalg::GenericOp>(reshape->getOperand(0).getDefiningOp());
    // The expansion of a generic's result (the other pattern asks about the generic).
    return isa_and_nonnull<linalg::GenericOp>(operand->get().getDefiningOp()) &&
           isa<tensor::ExpandShapeOp>(operand->getOwner());
  });
  dyno::populateReadsThroughCollapsePatterns(patterns);
  // A copy in another order (a window reversal) that only one generic reads, through a
  // map no reshape could carry, is computed in its reader.
  linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *operand) {
    auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
    return producer && producer->hasOneUse() && dyno::copiesItsInput(producer);
  });
  tensor::populateReassociativeReshapeFoldingPatterns(patterns);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
  return applyPatternsGreedily(kernel, std::move(patterns));
}

/// Returns, instead of a reshape of a computed tensor, the tensor itself; per result,
/// the reshapes the host applies after the launch (innermost first; empty when none).
SmallVector<SmallVector<Operation *>> returnUnreshaped(func::FuncOp kernel) {
  auto returned = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  SmallVector<SmallVector<Operation *>> hostReshapes;
  for (OpOperand &operand : returned->getOpOperands()) {
    SmallVector<Operation *> chain = reshapesOfComputed(operand.get());
    if (!chain.empty())
      operand.set(chain.front()->getOperand(0));
    hostReshapes.push_back(std::move(chain));
  }
  kernel.setFunctionType(
      FunctionType::get(kernel.getContext(), kernel.getArgumentTypes(),
                        returned.getOperandTypes()));
  return hostReshapes;
}

/// Relaunches `launch` for the kernel's new result types; the host reshapes each
/// result back to what the launch returned before.
void relaunch(LaunchOp launch, func::FuncOp kernel,
              ArrayRef<SmallVector<Operation *>> hostReshapes) {
  OpBuilder builder(launch);
  auto newLaunch = LaunchOp::create(builder, launch.getLoc(), kernel.getResultTypes(),
                                    launch.getCallee(), launch.getArgs(), launch.getDims(),
                                    launch.getInitialValuesAttr());
  for (auto [oldResult, newResult, chain] :
       llvm::zip(launch.getResults(), newLaunch.getResults(), hostReshapes)) {
    Value value = newResult;
    for (Operation *reshape : chain) {
      IRMapping mapping;
      mapping.map(reshape->getOperand(0), value);
      value = builder.clone(*reshape, mapping)->getResult(0);
    }
    oldResult.replaceAllUsesWith(value);
  }
  launch.erase();
}

struct ExpandLoopsThroughReshapesPass
    : mlir::dyno::impl::DynoExpandLoopsThroughReshapesBase<ExpandLoopsThroughReshapesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (ModuleOp kernels : llvm::to_vector(module.getOps<ModuleOp>())) {
      for (func::FuncOp kernel : kernels.getOps<func::FuncOp>()) {
        if (kernel.isExternal() || !hasStaticShapes(kernel) || hasScanScatterOrSort(kernel) ||
            fitsOneIterationSpace(kernel))
          continue;
        // Dynamic result sizes (`dims`) follow the old result types; left alone.
        SmallVector<LaunchOp> launches = launchesOf(module, kernel);
        if (launches.empty())
          continue;
        auto original = cast<func::FuncOp>(kernel->clone());
        SmallVector<SmallVector<Operation *>> hostReshapes;
        bool kept = succeeded(expandThroughReshapes(kernel));
        if (kept) {
          hostReshapes = returnUnreshaped(kernel);
          kept = fitsOneIterationSpace(kernel);
        }
        if (!kept) {
          kernel.getBody().takeBody(original.getBody());
          kernel.setFunctionType(original.getFunctionType());
          original.erase();
          continue;
        }
        for (LaunchOp launch : launches)
          relaunch(launch, kernel, hostReshapes);
        // The host's reshapes were cloned; the kernel's own are dead now.
        SmallVector<Operation *> reshapes;
        for (Operation &op : kernel.getBody().front().without_terminator())
          if (isReshape(&op))
            reshapes.push_back(&op);
        for (Operation *reshape : llvm::reverse(reshapes))
          if (reshape->use_empty())
            reshape->erase();
        original.erase();
      }
    }
  }
};

} // namespace
