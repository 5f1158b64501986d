//===- KeyKernels.cpp - Each launched kernel's key, for sharing it -*- C++ -*-===//
//
// Sets `dyno.kernel_key` on each kernel a `dyno.launch` calls that can be shared across
// graphs (KernelIdentity.h). See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/KernelIdentity.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOKEYKERNELS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {

struct KeyKernelsPass : mlir::dyno::impl::DynoKeyKernelsBase<KeyKernelsPass> {
  void runOnOperation() override {
    ModuleOp root = getOperation();
    for (auto kernels : root.getOps<ModuleOp>()) {
      if (kernels.getSymName() != dyno::kKernelsModuleName)
        continue;
      // Launches name their kernel as @kernels::@name.
      llvm::SetVector<StringAttr> launched;
      root.walk([&](dyno::LaunchOp launch) {
        SymbolRefAttr callee = launch.getCalleeAttr();
        if (callee.getRootReference() == kernels.getSymNameAttr() &&
            callee.getNestedReferences().size() == 1)
          launched.insert(callee.getLeafReference());
      });
      dyno::KernelKeys keys(kernels);
      for (StringAttr name : launched) {
        Operation *kernel = keys.lookup(name);
        if (!kernel) {
          root.emitError("a dyno.launch calls @kernels::@") << name.getValue()
                                                            << ", which is not there";
          return signalPassFailure();
        }
        kernel->removeAttr(dyno::kKernelKeyAttrName);
        if (std::optional<std::string> key = keys.keyOf(kernel))
          kernel->setAttr(dyno::kKernelKeyAttrName, StringAttr::get(&getContext(), *key));
      }
    }
  }
};

} // namespace
