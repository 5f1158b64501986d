//===- WidenBoolMemrefs.cpp - Booleans stored as bytes ----------*- C++ -*-===//
//
// Converts memref<...xi1> to memref<...xi8> so that bool tensors have PyTorch's layout
// and LLVM never has to store an i1. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "dyno-widen-bool-memrefs"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOWIDENBOOLMEMREFS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

static bool isBool(Type type) { return type.isInteger(1); }

namespace {
class BoolToByteConverter : public TypeConverter {
public:
  BoolToByteConverter() {
    addConversion([](Type type) { return type; });
    addConversion([](MemRefType type) -> Type {
      if (!isBool(type.getElementType()))
        return type;
      return MemRefType::get(type.getShape(), IntegerType::get(type.getContext(), 8),
                             type.getLayout(), type.getMemorySpace());
    });
  }
};

struct LoadOpConversion : OpConversionPattern<memref::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(memref::LoadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isBool(op.getType()))
      return failure();
    Value byte = memref::LoadOp::create(rewriter, op.getLoc(), adaptor.getMemref(),
                                        adaptor.getIndices());
    rewriter.replaceOpWithNewOp<arith::TruncIOp>(op, op.getType(), byte);
    return success();
  }
};

struct StoreOpConversion : OpConversionPattern<memref::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(memref::StoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isBool(op.getValueToStore().getType()))
      return failure();
    Value byte = arith::ExtUIOp::create(rewriter, op.getLoc(), rewriter.getI8Type(),
                                        adaptor.getValue());
    rewriter.replaceOpWithNewOp<memref::StoreOp>(op, byte, adaptor.getMemref(),
                                                 adaptor.getIndices());
    return success();
  }
};

struct GlobalOpConversion : OpConversionPattern<memref::GlobalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(memref::GlobalOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    Attribute initial = op.getInitialValueAttr();
    if (auto dense = dyn_cast_if_present<DenseIntElementsAttr>(initial)) {
      auto tensorType = RankedTensorType::get(type.getShape(), type.getElementType());
      initial = dense.mapValues(type.getElementType(),
                                [](const APInt &bit) { return bit.zext(8); });
      initial = cast<DenseElementsAttr>(initial).reshape(tensorType);
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.setType(type);
      if (initial)
        op.setInitialValueAttr(initial);
    });
    return success();
  }
};

/// Memref ops that only carry the element type along (allocations, views, copies):
/// recreated with converted operand and result types.
struct TypeOnlyConversion : ConversionPattern {
  TypeOnlyConversion(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isa<memref::MemRefDialect>(op->getDialect()) ||
        isa<memref::LoadOp, memref::StoreOp, memref::GlobalOp>(op) ||
        op->getNumRegions() != 0)
      return failure();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), resultTypes)))
      return failure();
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs(), op->getSuccessors());
    Operation *replacement = rewriter.create(state);
    rewriter.replaceOp(op, replacement->getResults());
    return success();
  }
};

struct WidenBoolMemrefsPass
    : mlir::dyno::impl::DynoWidenBoolMemrefsBase<WidenBoolMemrefsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    BoolToByteConverter converter;
    ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal([&](Operation *op) {
      if (auto func = dyn_cast<func::FuncOp>(op))
        return converter.isSignatureLegal(func.getFunctionType()) &&
               converter.isLegal(&func.getBody());
      if (auto global = dyn_cast<memref::GlobalOp>(op))
        return converter.isLegal(global.getType());
      return converter.isLegal(op);
    });

    RewritePatternSet patterns(context);
    patterns.add<LoadOpConversion, StoreOpConversion, GlobalOpConversion,
                 TypeOnlyConversion>(converter, context);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversions(converter, patterns);
    if (failed(applyFullConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
