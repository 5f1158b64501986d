//===- DynoSymbolUses.cpp - A module's symbols and their uses ---*- C++ -*-===//
//
// Loaded as dyno._mlir_libs._dynoSymbolUses: per symbol a module's body defines, its
// size and the symbols it uses, read from the IR by SymbolTable (Dyno's C API,
// dynoWalkSymbolUses), not from its printed text. The CPU JIT splits a graph's kernels
// into parts to compile at once by it (targets/cpu/jit.py, _split_for_threads). Apart
// from _dynoParallelJit, which holds the code generator: this one loads in the user's
// process.
//
//===----------------------------------------------------------------------===//
#include "dyno-c/Dyno.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

namespace nb = nanobind;

namespace {

/// Per symbol `module`'s body defines, by name: (its operations, whether it is a
/// function declaration, the symbols it uses).
nb::dict symbolUses(MlirModule module) {
  nb::dict symbols;
  dynoWalkSymbolUses(
      module,
      [](MlirStringRef name, intptr_t numOperations, bool isDeclaration, intptr_t numUses,
         const MlirStringRef *uses, void *userData) {
        nb::list used;
        for (intptr_t i = 0; i < numUses; ++i)
          used.append(nb::str(uses[i].data, uses[i].length));
        (*static_cast<nb::dict *>(userData))[nb::str(name.data, name.length)] =
            nb::make_tuple(numOperations, isDeclaration, used);
      },
      &symbols);
  return symbols;
}

} // namespace

NB_MODULE(_dynoSymbolUses, m) {
  m.doc() = "A module's symbols, their sizes and uses, read from the IR";
  m.def("symbol_uses", &symbolUses, nb::arg("module"),
        "Per symbol the module's body defines, by name: (its operations, counting "
        "nested ones; whether it is a function declaration; the symbols it uses).");
}
