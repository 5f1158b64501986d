//===- PassSizesAsArguments.cpp - Dynamic buffers as pointer + sizes -*- C++ -*-===//
//
// Rewrites the signatures of kernels with dynamically shaped buffers so that the
// bare-pointer calling convention applies: pointers plus trailing index sizes. See
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"
#include "dyno/Dialect/Dyno/IR/LaunchAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dyno-pass-sizes-as-arguments"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOPASSSIZESASARGUMENTS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

static bool needsSizes(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && !memref.hasStaticShape();
}

/// Rebuilds the contiguous buffer `type` from its base pointer and its dynamic sizes
/// (in order), with row-major strides.
static Value rebuildBuffer(OpBuilder &builder, Location loc, MemRefType type, Value base,
                           ValueRange dynamicSizes) {
  SmallVector<OpFoldResult> sizes;
  unsigned next = 0;
  for (int64_t size : type.getShape())
    sizes.push_back(ShapedType::isDynamic(size) ? OpFoldResult(dynamicSizes[next++])
                                                : builder.getIndexAttr(size));
  // Strides stay static while every inner size is, as the identity layout says.
  SmallVector<OpFoldResult> strides(type.getRank());
  OpFoldResult stride = builder.getIndexAttr(1);
  for (int64_t i = type.getRank() - 1; i >= 0; --i) {
    strides[i] = stride;
    if (i == 0)
      break;
    auto staticStride = getConstantIntValue(stride);
    auto staticSize = getConstantIntValue(sizes[i]);
    if (staticStride && staticSize) {
      stride = builder.getIndexAttr(*staticStride * *staticSize);
      continue;
    }
    if (staticStride == 1 || staticSize == 1) {
      stride = staticStride == 1 ? sizes[i] : stride;
      continue;
    }
    Value strideValue = getValueOrCreateConstantIndexOp(builder, loc, stride);
    Value sizeValue = getValueOrCreateConstantIndexOp(builder, loc, sizes[i]);
    stride = arith::MulIOp::create(builder, loc, strideValue, sizeValue).getResult();
  }
  return memref::ReinterpretCastOp::create(builder, loc, type, base,
                                           builder.getIndexAttr(0), sizes, strides);
}

static LogicalResult passSizesAsArguments(func::FuncOp func) {
  FunctionType type = func.getFunctionType();
  if (func.isExternal() || !func.isPublic() || llvm::none_of(type.getInputs(), needsSizes))
    return success();
  if (type.getNumResults() != 0)
    return func.emitError("dyno-pass-sizes-as-arguments: kernel returns values; expected "
                          "out-parameters (run buffer-results-to-out-params first)");
  Block &entry = func.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  Location loc = func.getLoc();
  IndexType index = builder.getIndexType();
  // The size arguments, in the order of the launch ABI (LaunchAbi.h).
  DenseMap<unsigned, SmallVector<Value>> sizesOf;
  for (dyno::LaunchSize size : dyno::launchSizes(type.getInputs()))
    sizesOf[size.position].push_back(
        entry.addArgument(index, entry.getArgument(size.position).getLoc()));
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    BlockArgument argument = entry.getArgument(i);
    if (!needsSizes(argument.getType()))
      continue;
    auto memref = cast<MemRefType>(argument.getType());
    if (!memref.getLayout().isIdentity())
      return func.emitError("dyno-pass-sizes-as-arguments: argument #")
             << i << " has a non-contiguous layout " << memref;
    SmallVector<Value> &sizes = sizesOf[i];
    auto baseType = MemRefType::get({}, memref.getElementType(), MemRefLayoutAttrInterface{},
                                    memref.getMemorySpace());
    argument.setType(baseType);
    Value rebuilt = rebuildBuffer(builder, loc, memref, argument, sizes);
    argument.replaceAllUsesExcept(rebuilt, rebuilt.getDefiningOp());
  }
  func.setFunctionType(FunctionType::get(func.getContext(), entry.getArgumentTypes(), {}));
  return success();
}

namespace {
struct PassSizesAsArgumentsPass
    : mlir::dyno::impl::DynoPassSizesAsArgumentsBase<PassSizesAsArgumentsPass> {
  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>())
      if (failed(passSizesAsArguments(func)))
        return signalPassFailure();
  }
};
} // namespace
