//===- Bf16AsI16.cpp - bf16 moved, selected and compared as bits -*- C++ -*-===//
//
// In the kernels' LLVM dialect: bf16 loads and stores become i16 ones, bf16 selects i16
// selects, and bf16 comparisons compare the exactly widened f32 values. LLVM's vectorizer
// then forms no memory operation on bfloat vectors: on x86 CPUs with AVX512-BF16 (Cooper
// Lake, Sapphire Rapids, Zen 4) X86's backend asserts on some masked loads and stores of
// <N x bfloat> (issue 52), and bfloat values it carries through f32 come back through
// vcvtneps2bf16, which flushes subnormals. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/LowPrecisionFloats.h"
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#define DEBUG_TYPE "dyno-bf16-as-i16"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOBF16ASI16
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

namespace {
bool isBf16(Type type) { return getElementTypeOrSelf(type).isBF16(); }

/// The bits of `x` (bf16, scalar or vector) as i16.
Value bitsOf(OpBuilder &builder, Location loc, Value x) {
  return LLVM::BitcastOp::create(builder, loc,
                                 withElement(x.getType(), builder.getI16Type()), x);
}

/// `x` (bf16) as the f32 of the same value: its bits as the upper half of an f32's,
/// exact for subnormals and NaNs too.
Value widenExactly(OpBuilder &builder, Location loc, Value x) {
  Type i32Type = withElement(x.getType(), builder.getI32Type());
  Value wide = LLVM::ZExtOp::create(builder, loc, i32Type, bitsOf(builder, loc, x),
                                    /*nonNeg=*/UnitAttr());
  APInt sixteen(32, 16);
  Attribute shift = builder.getIntegerAttr(builder.getI32Type(), sixteen);
  if (auto vector = dyn_cast<VectorType>(i32Type))
    shift = DenseElementsAttr::get(vector, sixteen);
  Value shifted = LLVM::ShlOp::create(
      builder, loc, wide, LLVM::ConstantOp::create(builder, loc, i32Type, shift));
  return LLVM::BitcastOp::create(builder, loc,
                                 withElement(x.getType(), builder.getF32Type()), shifted);
}

struct Bf16AsI16Pass : mlir::dyno::impl::DynoBf16AsI16Base<Bf16AsI16Pass> {
  void runOnOperation() override {
    SmallVector<Operation *> rewritten;
    getOperation()->walk([&](Operation *op) {
      if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
        if (isBf16(store.getValue().getType()))
          rewritten.push_back(op);
      } else if (isa<LLVM::LoadOp, LLVM::SelectOp>(op)) {
        if (isBf16(op->getResult(0).getType()))
          rewritten.push_back(op);
      } else if (isa<LLVM::FCmpOp>(op) && isBf16(op->getOperand(0).getType())) {
        rewritten.push_back(op);
      }
    });
    for (Operation *op : rewritten) {
      OpBuilder builder(op);
      Location loc = op->getLoc();
      if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
        // The same load (alignment, volatility, alias scopes...) of the bits.
        Type type = load.getType();
        Operation *bits = builder.clone(*op);
        bits->getResult(0).setType(withElement(type, builder.getI16Type()));
        load.getResult().replaceAllUsesWith(
            LLVM::BitcastOp::create(builder, loc, type, bits->getResult(0)));
        load.erase();
      } else if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
        store.getValueMutable().assign(bitsOf(builder, loc, store.getValue()));
      } else if (auto select = dyn_cast<LLVM::SelectOp>(op)) {
        // (Fast-math flags are for floating-point selects only.)
        Value bits = LLVM::SelectOp::create(builder, loc, select.getCondition(),
                                            bitsOf(builder, loc, select.getTrueValue()),
                                            bitsOf(builder, loc, select.getFalseValue()));
        select.getResult().replaceAllUsesWith(
            LLVM::BitcastOp::create(builder, loc, select.getType(), bits));
        select.erase();
      } else {
        auto compare = cast<LLVM::FCmpOp>(op);
        Value lhs = widenExactly(builder, loc, compare.getLhs());
        Value rhs = widenExactly(builder, loc, compare.getRhs());
        compare.getLhsMutable().assign(lhs);
        compare.getRhsMutable().assign(rhs);
      }
    }
  }
};
} // namespace
