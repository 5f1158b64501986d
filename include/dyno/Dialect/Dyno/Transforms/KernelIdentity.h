//===- KernelIdentity.h - What makes two kernels the same kernel -*- C++ -*-===//
//
// Kernel identity, computed in one place. Within a graph, dyno-deduplicate-kernels
// merges kernels equal up to their names; across graphs and processes, the key that
// dyno-key-kernels puts on each launched kernel (`dyno.kernel_key`) is what the CPU JIT
// shares compiled kernels by (and names them by in the libraries the compile cache
// stores), and what the Triton runtime shares launchers by (the launch table's "key").
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_KERNELIDENTITY_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_KERNELIDENTITY_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <string>

namespace mlir::dyno {

/// The attribute dyno-key-kernels sets on a launched kernel that can be shared.
inline constexpr llvm::StringLiteral kKernelKeyAttrName = "dyno.kernel_key";

/// `symbol` (an operation defining a symbol) printed in generic form, without locations,
/// its own name replaced by a neutral one: kernels equal up to their names print alike.
std::string printedUpToName(Operation *symbol);

/// The keys of the kernels of `kernels` (a module of kernels and what they call). A
/// kernel's key is a SHA-256 (32 hex digits) of its printing up to its name and of the
/// printings of the symbols it refers to, transitively (the globals and declarations it
/// uses). A kernel has none where it cannot be shared: another symbol refers to it, it
/// calls a function defined in `kernels` (named per graph), it refers to a symbol
/// `kernels` lacks, or it or a symbol it uses holds a `dense_resource` constant (whose
/// bytes live in the top-level module's resources, not in the printing).
class KernelKeys {
public:
  explicit KernelKeys(ModuleOp kernels);
  std::optional<std::string> keyOf(Operation *kernel);
  /// The module's symbol named `name` (null if none).
  Operation *lookup(StringAttr name) { return symbols.lookup(name); }

private:
  const std::string &printingOf(Operation *symbol);

  SymbolTable symbols;
  /// Per symbol of the module, the symbols it refers to (but itself).
  DenseMap<StringAttr, SmallVector<StringAttr>> references;
  DenseSet<StringAttr> referencedByOthers;
  DenseMap<Operation *, std::string> printings;
};

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_KERNELIDENTITY_H
