//===- MarkDistinctKernelBuffers.cpp - Kernel buffers do not overlap -*- C++ -*-===//
//
// Gives every load and store through a CPU kernel's buffers (its pointer arguments and
// its own allocations) an LLVM alias scope of its own buffer, disjoint from the others'
// (the wrapper's calling convention: results are fresh buffers, inputs are never
// written; an allocation is fresh memory). See Passes.td.
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

/// A kernel's buffer: a pointer argument of the kernel (its number, no operation) or
/// one of its allocations (no number, the allocating call).
using Buffer = std::pair<unsigned, Operation *>;
static constexpr unsigned kAllocation = ~0u;

/// Whether `op` allocates fresh memory (a `malloc` the memref lowering made).
static bool isAllocation(Operation *op) {
  auto call = dyn_cast_or_null<LLVM::CallOp>(op);
  std::optional<StringRef> callee = call ? call.getCallee() : std::nullopt;
  return callee && (*callee == "malloc" || *callee == "aligned_alloc");
}

/// The allocation `integer` is computed from by the arithmetic that aligns its address
/// (ptrtoint, then add/sub/urem/and with integers that lead to no other pointer).
static Operation *allocationBehindInteger(Value integer, unsigned depth = 8) {
  Operation *op = integer.getDefiningOp();
  if (!op || depth == 0)
    return nullptr;
  if (auto cast = dyn_cast<LLVM::PtrToIntOp>(op))
    return isAllocation(cast.getArg().getDefiningOp()) ? cast.getArg().getDefiningOp()
                                                         : nullptr;
  if (!isa<LLVM::AddOp, LLVM::SubOp, LLVM::URemOp, LLVM::AndOp>(op))
    return nullptr;
  Operation *found = nullptr;
  for (Value operand : op->getOperands()) {
    if (Operation *allocation = allocationBehindInteger(operand, depth - 1)) {
      if (found && allocation != found)
        return nullptr;
      found = allocation;
    }
  }
  return found;
}

/// The pointer argument of `func` that `address` (getelementptrs stripped) is.
static std::optional<unsigned> argumentBehind(Value address, LLVM::LLVMFuncOp func) {
  auto argument = dyn_cast<BlockArgument>(address);
  if (!argument || argument.getOwner() != &func.getBody().front())
    return std::nullopt;
  return argument.getArgNumber();
}

/// The allocation `address` (getelementptrs stripped) is: its result, or that result
/// aligned by `inttoptr` arithmetic.
static Operation *allocationBehind(Value address) {
  if (isAllocation(address.getDefiningOp()))
    return address.getDefiningOp();
  if (auto cast = address.getDefiningOp<LLVM::IntToPtrOp>())
    return allocationBehindInteger(cast.getArg());
  return nullptr;
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
      auto domain = LLVM::AliasScopeDomainAttr::get(
          context, StringAttr::get(context, func.getName() + " buffers"));
      // Buffers in a fixed order: pointer arguments, then allocations as they appear.
      llvm::MapVector<Buffer, Attribute> scopes;
      for (BlockArgument argument : func.getBody().front().getArguments())
        if (isa<LLVM::LLVMPointerType>(argument.getType()))
          scopes[Buffer(argument.getArgNumber(), nullptr)] = LLVM::AliasScopeAttr::get(
                  domain,
                  StringAttr::get(context, "argument " +
                                               std::to_string(argument.getArgNumber())));
      unsigned allocations = 0;
      func.walk([&](Operation *op) {
        if (isAllocation(op))
          scopes[Buffer(kAllocation, op)] = LLVM::AliasScopeAttr::get(
              domain, StringAttr::get(context, "allocation " + std::to_string(allocations++)));
      });
      if (scopes.size() < 2)
        return;
      auto mark = [&](LLVM::AliasAnalysisOpInterface access, Value address) {
        while (auto gep = address.getDefiningOp<LLVM::GEPOp>())
          address = gep.getBase();
        std::optional<Buffer> buffer;
        if (std::optional<unsigned> number = argumentBehind(address, func))
          buffer = Buffer(*number, nullptr);
        else if (Operation *allocation = allocationBehind(address))
          buffer = Buffer(kAllocation, allocation);
        if (!buffer || !scopes.count(*buffer))
          return;
        SmallVector<Attribute> others;
        for (auto &[other, scope] : scopes)
          if (other != *buffer)
            others.push_back(scope);
        access.setAliasScopes(ArrayAttr::get(context, {scopes[*buffer]}));
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
