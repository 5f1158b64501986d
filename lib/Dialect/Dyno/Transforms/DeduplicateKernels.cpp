//===- DeduplicateKernels.cpp - One kernel for kernels equal up to names -*- C++ -*-===//
//
// Kernels of `module @kernels` that are the same function under different names (the
// layers of a model repeat their kernels) become one: every launch calls the first, and
// the others go, so each distinct kernel is lowered, compiled and loaded once. See
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/KernelIdentity.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#define DEBUG_TYPE "dyno-deduplicate-kernels"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNODEDUPLICATEKERNELS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {

/// A kernel's attributes other than its name (its type, argument attributes,
/// visibility, linkage, passthrough...), sorted as the dictionary keeps them.
SmallVector<NamedAttribute> attributesButName(Operation *kernel) {
  SmallVector<NamedAttribute> attributes;
  for (NamedAttribute attribute : kernel->getAttrs())
    if (attribute.getName() != SymbolTable::getSymbolAttrName())
      attributes.push_back(attribute);
  return attributes;
}

/// A hash that kernels equal up to their names share: of their printing up to the name
/// (KernelIdentity.h, what kernels are keyed by across graphs too).
llvm::hash_code hashKernel(FunctionOpInterface kernel) {
  return llvm::hash_value(dyno::printedUpToName(kernel));
}

bool sameKernel(FunctionOpInterface lhs, FunctionOpInterface rhs) {
  if (lhs->getName() != rhs->getName() || attributesButName(lhs) != attributesButName(rhs))
    return false;
  return OperationEquivalence::isRegionEquivalentTo(&lhs.getFunctionBody(),
                                                    &rhs.getFunctionBody(),
                                                    OperationEquivalence::IgnoreLocations);
}

struct DeduplicateKernelsPass
    : mlir::dyno::impl::DynoDeduplicateKernelsBase<DeduplicateKernelsPass> {
  void runOnOperation() override {
    ModuleOp root = getOperation();
    for (auto kernels : root.getOps<ModuleOp>()) {
      if (kernels.getSymName() != dyno::kKernelsModuleName)
        continue;
      // Kernel name -> the first kernel equal to it, in the module's order.
      llvm::StringMap<StringAttr> replacement;
      DenseMap<llvm::hash_code, SmallVector<FunctionOpInterface>> seen;
      SmallVector<Operation *> duplicates;
      for (auto kernel : kernels.getOps<FunctionOpInterface>()) {
        if (kernel.isExternal())
          continue; // a declaration (a libm or runtime function the kernels call)
        SmallVector<FunctionOpInterface> &candidates = seen[hashKernel(kernel)];
        auto same = llvm::find_if(candidates, [&](FunctionOpInterface first) {
          return sameKernel(first, kernel);
        });
        if (same == candidates.end()) {
          candidates.push_back(kernel);
          continue;
        }
        replacement[kernel.getName()] = (*same).getNameAttr();
        duplicates.push_back(kernel);
      }
      if (duplicates.empty())
        continue;
      // Launches name their kernel as @kernels::@name.
      root.walk([&](dyno::LaunchOp launch) {
        SymbolRefAttr callee = launch.getCalleeAttr();
        if (callee.getRootReference() != kernels.getSymNameAttr() ||
            callee.getNestedReferences().size() != 1)
          return;
        auto found = replacement.find(callee.getLeafReference().getValue());
        if (found == replacement.end())
          return;
        launch.setCalleeAttr(SymbolRefAttr::get(
            callee.getRootReference(), {FlatSymbolRefAttr::get(found->second)}));
      });
      for (Operation *duplicate : duplicates) {
        if (!SymbolTable::symbolKnownUseEmpty(duplicate, root)) {
          duplicate->emitError("kernel is still referenced after deduplication");
          return signalPassFailure();
        }
        duplicate->erase();
      }
    }
  }
};

} // namespace
