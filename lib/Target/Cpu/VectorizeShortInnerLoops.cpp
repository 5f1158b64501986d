//===- VectorizeShortInnerLoops.cpp - Short loops left to the vectorizer -*- C++ -*-===//
//
// Marks short contiguous innermost loops `llvm.loop.unroll.disable`, so that LLVM's
// loop vectorizer, not full unrolling and the SLP vectorizer, handles them. See
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#define DEBUG_TYPE "dyno-vectorize-short-inner-loops"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOVECTORIZESHORTINNERLOOPS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

/// Whether an access of `memref` at `indices` is contiguous along `iv` or does not
/// depend on it: `iv` only as the last index, of a dimension of stride 1.
static bool contiguousIn(Value memref, ValueRange indices, Value iv) {
  for (auto [position, index] : llvm::enumerate(indices))
    if (index == iv && position + 1 != indices.size())
      return false;
  if (indices.empty() || indices.back() != iv)
    return true;
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) && strides.back() == 1;
}

/// Whether `loop`'s body is straight-line code whose memory accesses are contiguous
/// along its induction variable (or do not depend on it), with at least one store.
static bool isContiguousInnerLoop(scf::ForOp loop) {
  if (!loop.getInitArgs().empty())
    return false;
  Value iv = loop.getInductionVar();
  bool stores = false;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0)
      return false; // a nested loop or branch: not the innermost straight-line loop
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (!contiguousIn(load.getMemRef(), load.getIndices(), iv))
        return false;
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (!contiguousIn(store.getMemRef(), store.getIndices(), iv))
        return false;
      stores = true;
    } else if (!isMemoryEffectFree(&op)) {
      return false; // calls, allocations, other memory accesses
    } else if (llvm::is_contained(op.getOperands(), iv)) {
      return false; // an index computed from the loop's (a strided or gathered access)
    }
  }
  return stores;
}

namespace {
struct VectorizeShortInnerLoopsPass
    : mlir::dyno::impl::DynoVectorizeShortInnerLoopsBase<VectorizeShortInnerLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto unroll = LLVM::LoopUnrollAttr::get(context, BoolAttr::get(context, true), {}, {},
                                            {}, {}, {}, {});
    auto annotation = LLVM::LoopAnnotationAttr::get(context, {}, {}, {}, unroll, {}, {}, {},
                                                    {}, {}, {}, {}, {}, {}, {}, {});
    getOperation().walk([&](scf::ForOp loop) {
      std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
      std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
      std::optional<int64_t> step = getConstantIntValue(loop.getStep());
      if (!lower || !upper || step != 1)
        return;
      int64_t extent = *upper - *lower;
      if (extent < minExtent || extent >= maxExtent || !isContiguousInnerLoop(loop))
        return;
      // Under the name of llvm.br's own attribute: scf-to-cf gives the loop's attributes
      // to its latch branch, and cf-to-llvm keeps them (as `llvm.loop_annotation` the
      // annotation would stay a discardable attribute that the translation ignores).
      loop->setAttr(LLVM::BrOp::getLoopAnnotationAttrName(
                        OperationName(LLVM::BrOp::getOperationName(), context)),
                    annotation);
    });
  }
};
} // namespace
