//===- KernelIdentity.cpp - What makes two kernels the same kernel -*- C++ -*-===//
//
// See KernelIdentity.h.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/KernelIdentity.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

using namespace mlir;

namespace {

std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  op->print(stream, OpPrintingFlags().printGenericOpForm().useLocalScope());
  return text;
}

/// The symbols `op` (and what it nests) refers to, by their root reference.
SmallVector<StringAttr> referencedSymbols(Operation *op) {
  SmallVector<StringAttr> names;
  if (std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(op))
    for (const SymbolTable::SymbolUse &use : *uses)
      names.push_back(use.getSymbolRef().getRootReference());
  return names;
}

} // namespace

std::string mlir::dyno::printedUpToName(Operation *symbol) {
  std::string text = printed(symbol);
  StringRef name = SymbolTable::getSymbolName(symbol).getValue();
  // The generic form prints the op's own properties, its name among them, before any
  // region: the first `sym_name` is its own.
  std::string own = (Twine("sym_name = \"") + name + "\"").str();
  size_t at = text.find(own);
  if (at != std::string::npos)
    text.replace(at, own.size(), "sym_name = \"KERNEL\"");
  return text;
}

mlir::dyno::KernelKeys::KernelKeys(ModuleOp kernels) : symbols(kernels) {
  for (Operation &op : kernels.getBody()->getOperations()) {
    auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (!name)
      continue;
    SmallVector<StringAttr> &uses = references[name];
    for (StringAttr use : referencedSymbols(&op))
      if (use != name && !llvm::is_contained(uses, use)) {
        uses.push_back(use);
        referencedByOthers.insert(use);
      }
  }
}

const std::string &mlir::dyno::KernelKeys::printingOf(Operation *symbol) {
  auto found = printings.find(symbol);
  if (found == printings.end())
    found = printings.try_emplace(symbol, printed(symbol)).first;
  return found->second;
}

std::optional<std::string> mlir::dyno::KernelKeys::keyOf(Operation *kernel) {
  StringAttr name = SymbolTable::getSymbolName(kernel);
  if (referencedByOthers.contains(name)) // called by another symbol: not alone
    return std::nullopt;
  std::string text = printedUpToName(kernel);
  if (StringRef(text).contains("dense_resource<"))
    return std::nullopt;
  // What it refers to, and what those refer to.
  llvm::SetVector<StringAttr> uses;
  SmallVector<StringAttr> pending = {name};
  while (!pending.empty()) {
    for (StringAttr use : references.lookup(pending.pop_back_val())) {
      if (use == name || !uses.insert(use))
        continue;
      Operation *used = symbols.lookup(use);
      if (!used)
        return std::nullopt;
      auto function = dyn_cast<FunctionOpInterface>(used);
      if (function && !function.isExternal())
        return std::nullopt;
      pending.push_back(use);
    }
  }
  SmallVector<StringAttr> sorted(uses.begin(), uses.end());
  llvm::sort(sorted, [](StringAttr a, StringAttr b) { return a.getValue() < b.getValue(); });
  llvm::SHA256 hash;
  hash.update(text);
  for (StringAttr use : sorted) {
    const std::string &usedText = printingOf(symbols.lookup(use));
    if (StringRef(usedText).contains("dense_resource<"))
      return std::nullopt;
    hash.update(StringRef("\0", 1));
    hash.update(usedText);
  }
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(ArrayRef<uint8_t>(digest).take_front(16), /*LowerCase=*/true);
}
