//===- Dyno.cpp - C API: Dyno's registrations, a module's symbol uses -*- C++ -*-===//
#include "dyno-c/Dyno.h"

#include "dyno/InitAll.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <vector>

void dynoRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::dyno::registerAllDialects(*unwrap(registry));
}

void dynoRegisterPasses(void) {
  static bool registered = [] {
    mlir::dyno::registerDynoPasses();
    mlir::dyno::registerDynoCpuTargetPasses();
    mlir::dyno::registerDynoTritonTargetPasses();
    mlir::dyno::registerDynoPipelines();
    return true;
  }();
  (void)registered;
}

void dynoWalkSymbolUses(MlirModule module, DynoSymbolCallback callback, void *userData) {
  for (mlir::Operation &op : unwrap(module).getBody()->getOperations()) {
    auto name = op.getAttrOfType<mlir::StringAttr>(mlir::SymbolTable::getSymbolAttrName());
    if (!name)
      continue;
    intptr_t size = 0;
    op.walk([&](mlir::Operation *) { ++size; });
    llvm::SetVector<mlir::StringAttr> uses;
    if (std::optional<mlir::SymbolTable::UseRange> found = mlir::SymbolTable::getSymbolUses(&op))
      for (const mlir::SymbolTable::SymbolUse &use : *found)
        if (use.getSymbolRef().getRootReference() != name)
          uses.insert(use.getSymbolRef().getRootReference());
    std::vector<MlirStringRef> references;
    for (mlir::StringAttr use : uses)
      references.push_back(wrap(use.getValue()));
    auto function = llvm::dyn_cast<mlir::FunctionOpInterface>(op);
    callback(wrap(name.getValue()), size, function && function.isExternal(),
             static_cast<intptr_t>(references.size()), references.data(), userData);
  }
}
