//===- HoistKernelConstants.cpp - Constant tensors become arguments -*- C++ -*-===//
//
// A Triton program reads tensors from memory through pointers; it has no way to hold a
// constant tensor of distinct elements (torch-mlir writes the gather indices of an
// `as_strided` as one). Each such constant moves to the host schedule, which
// materializes it once, and reaches the kernel as an argument like any other tensor.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Triton/Passes.h"
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/KernelOutlining.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOHOISTKERNELCONSTANTS
#include "dyno/Target/Triton/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

namespace {

/// The elements of a non-splat constant tensor as an inline `dense<...>` attribute
/// (which the host wrapper reads as a buffer); a `dense_resource` blob is copied out.
FailureOr<DenseElementsAttr> inlineElements(arith::ConstantOp constant) {
  auto type = cast<RankedTensorType>(constant.getType());
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
    return dense;
  auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return constant.emitOpError("holds a tensor whose elements are not available to copy "
                                "to the host"),
           failure();
  ArrayRef<char> data = blob->getData();
  if (type.getElementType().isInteger(1)) { // one byte per element, unlike dense<> bits
    if (static_cast<int64_t>(data.size()) != type.getNumElements())
      return constant.emitOpError("holds a bool tensor of the wrong byte size"), failure();
    SmallVector<bool> values(data.begin(), data.end());
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, data, splat))
    return constant.emitOpError("holds a tensor whose data does not match its type"),
           failure();
  return DenseElementsAttr::getFromRawBuffer(type, data);
}

bool isHoistable(arith::ConstantOp constant) {
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  if (!type || !type.hasStaticShape())
    return false;
  // Splats stay: dyno-split-kernels-for-triton turns them into fills, read as scalars.
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
    return !dense.isSplat();
  return isa<DenseResourceElementsAttr>(constant.getValue());
}

struct HoistKernelConstantsPass
    : mlir::dyno::impl::DynoHoistKernelConstantsBase<HoistKernelConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (ModuleOp kernels : module.getOps<ModuleOp>()) {
      for (func::FuncOp kernel : kernels.getOps<func::FuncOp>()) {
        if (kernel.isExternal())
          continue;
        SmallVector<arith::ConstantOp> constants;
        kernel.walk([&](arith::ConstantOp constant) {
          if (isHoistable(constant))
            constants.push_back(constant);
        });
        if (constants.empty())
          continue;
        SmallVector<LaunchOp> launches = launchesOf(module, kernel);
        if (launches.empty())
          continue; // nothing calls it; the lowering reports the constant if it stays
        SmallVector<DenseElementsAttr> values;
        for (arith::ConstantOp constant : constants) {
          FailureOr<DenseElementsAttr> value = inlineElements(constant);
          if (failed(value))
            return signalPassFailure();
          values.push_back(*value);
        }
        // The kernel takes each constant as a new last argument ...
        MLIRContext *ctx = kernel.getContext();
        for (arith::ConstantOp constant : constants) {
          unsigned index = kernel.getNumArguments();
          if (failed(kernel.insertArgument(index, constant.getType(),
                                           DictionaryAttr::get(ctx), constant.getLoc())))
            return signalPassFailure();
          kernel.setArgAttr(index, "bufferization.writable", BoolAttr::get(ctx, false));
          constant.replaceAllUsesWith(kernel.getArgument(index));
          constant.erase();
        }
        // ... which each launch materializes on the host, just before it.
        for (LaunchOp launch : launches) {
          OpBuilder builder(launch);
          SmallVector<Value> args(launch.getArgs());
          for (DenseElementsAttr value : values)
            args.push_back(arith::ConstantOp::create(builder, launch.getLoc(), value));
          auto hoisted = LaunchOp::create(builder, launch.getLoc(), launch.getResultTypes(),
                                          launch.getCallee(), args, launch.getDims(),
                                          launch.getInitialValuesAttr());
          launch.replaceAllUsesWith(hoisted.getResults());
          launch.erase();
        }
      }
    }
  }
};

} // namespace
