//===- MarkDistinctKernelBuffers.cpp - Kernel buffers do not overlap -*- C++ -*-===//
//
// Gives every load and store through a CPU kernel's pointer arguments an LLVM alias
// scope of its own argument, disjoint from the others' (the wrapper's calling
// convention: results are fresh buffers, inputs are never written). See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#define DEBUG_TYPE "dyno-mark-distinct-kernel-buffers"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOMARKDISTINCTKERNELBUFFERS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

/// The pointer argument of `func` that `address` is computed from by getelementptrs, if
/// it is one.
static std::optional<unsigned> argumentBehind(Value address, LLVM::LLVMFuncOp func) {
  while (auto gep = address.getDefiningOp<LLVM::GEPOp>())
    address = gep.getBase();
  auto argument = dyn_cast<BlockArgument>(address);
  if (!argument || argument.getOwner() != &func.getBody().front())
    return std::nullopt;
  return argument.getArgNumber();
}

namespace {
struct MarkDistinctKernelBuffersPass
    : mlir::dyno::impl::DynoMarkDistinctKernelBuffersBase<MarkDistinctKernelBuffersPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      // Kernels only: what the wrapper calls (external linkage, public).
      if (func.isExternal() || func.isPrivate() ||
          func.getLinkage() != LLVM::Linkage::External)
        return;
      SmallVector<unsigned> pointers;
      for (BlockArgument argument : func.getBody().front().getArguments())
        if (isa<LLVM::LLVMPointerType>(argument.getType()))
          pointers.push_back(argument.getArgNumber());
      if (pointers.size() < 2)
        return;
      auto domain = LLVM::AliasScopeDomainAttr::get(
          context, StringAttr::get(context, func.getName() + " buffers"));
      DenseMap<unsigned, Attribute> scopes;
      for (unsigned number : pointers)
        scopes[number] = LLVM::AliasScopeAttr::get(
            domain, StringAttr::get(context, "argument " + std::to_string(number)));
      auto mark = [&](LLVM::AliasAnalysisOpInterface access, Value address) {
        std::optional<unsigned> number = argumentBehind(address, func);
        if (!number)
          return;
        SmallVector<Attribute> others;
        for (unsigned other : pointers)
          if (other != *number)
            others.push_back(scopes[other]);
        access.setAliasScopes(ArrayAttr::get(context, {scopes[*number]}));
        access.setNoAliasScopes(ArrayAttr::get(context, others));
      };
      func.walk([&](Operation *op) {
        if (auto load = dyn_cast<LLVM::LoadOp>(op))
          mark(load, load.getAddr());
        else if (auto store = dyn_cast<LLVM::StoreOp>(op))
          mark(store, store.getAddr());
      });
    });
  }
};
} // namespace
