//===- PreferVectorWidth.cpp - How wide LLVM vectorizes kernel loops -*- C++ -*-===//
//
// Marks every defined llvm.func with LLVM's `prefer-vector-width` attribute, which bounds
// the vectors its loop and SLP vectorizers choose. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#define DEBUG_TYPE "dyno-prefer-vector-width"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOPREFERVECTORWIDTH
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
struct PreferVectorWidthPass
    : mlir::dyno::impl::DynoPreferVectorWidthBase<PreferVectorWidthPass> {
  using Base::Base;
  void runOnOperation() override {
    if (width == 0)
      return; // the CPU's own preference
    if (width < 128 || (width & (width - 1))) {
      getOperation().emitError("dyno-prefer-vector-width: width must be a power of two of "
                               "at least 128 bits, got ")
          << static_cast<uint64_t>(width.getValue());
      return signalPassFailure();
    }
    MLIRContext *context = &getContext();
    auto key = StringAttr::get(context, "prefer-vector-width");
    auto entry = ArrayAttr::get(
        context, {key, StringAttr::get(context, std::to_string(width.getValue()))});
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (func.isExternal())
        return;
      SmallVector<Attribute> passthrough;
      if (ArrayAttr existing = func.getPassthroughAttr())
        for (Attribute attribute : existing) {
          auto pair = dyn_cast<ArrayAttr>(attribute);
          if (!pair || pair.empty() || pair[0] != key)
            passthrough.push_back(attribute);
        }
      passthrough.push_back(entry);
      func.setPassthroughAttr(ArrayAttr::get(context, passthrough));
    });
  }
};
} // namespace
