//===- StridedCopiesAsLoops.cpp - memref.copy of strided views as loops -*- C++ -*-===//
//
// Rewrites a memref.copy whose source or target is not contiguous into linalg.copy, so
// that it becomes loops LLVM vectorizes instead of a call to the runner library's
// element-by-element memrefCopy. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOSTRIDEDCOPIESASLOOPS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

/// What the LLVM lowering copies with llvm.memcpy: an identity layout (dynamic sizes
/// included) or a static strided view that is contiguous anyway.
static bool isContiguous(MemRefType type) {
  return type.getLayout().isIdentity() || memref::isStaticShapeAndContiguousRowMajor(type);
}

namespace {
struct StridedCopiesAsLoopsPass
    : public dyno::impl::DynoStridedCopiesAsLoopsBase<StridedCopiesAsLoopsPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      // Contiguous copies become llvm.memcpy, which is what they should be.
      if (source && target && !(isContiguous(source) && isContiguous(target)))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
