//===- ReductionKinds.cpp - Reductions the Triton target computes -*- C++ -*-===//
#include "ReductionKinds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::dyno;

std::optional<ReductionKind> mlir::dyno::reductionKindOf(Operation *combiner, Type element) {
  Builder b(combiner->getContext());
  auto floatConstant = [&](double value) -> TypedAttr { return b.getFloatAttr(element, value); };
  auto intConstant = [&](APInt value) -> TypedAttr { return b.getIntegerAttr(element, value); };
  unsigned width = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  double inf = std::numeric_limits<double>::infinity();
  return llvm::TypeSwitch<Operation *, std::optional<ReductionKind>>(combiner)
      .Case<arith::AddFOp>([&](auto) { return ReductionKind{"sum", floatConstant(0.0)}; })
      .Case<arith::MulFOp>([&](auto) { return ReductionKind{"prod", floatConstant(1.0)}; })
      .Case<arith::MaximumFOp>([&](auto) { return ReductionKind{"max", floatConstant(-inf)}; })
      .Case<arith::MinimumFOp>([&](auto) { return ReductionKind{"min", floatConstant(inf)}; })
      .Case<arith::MaxNumFOp>([&](auto) { return ReductionKind{"maxnum", floatConstant(-inf)}; })
      .Case<arith::MinNumFOp>([&](auto) { return ReductionKind{"minnum", floatConstant(inf)}; })
      .Case<arith::AddIOp>([&](auto) { return ReductionKind{"sum", intConstant(APInt(width, 0))}; })
      .Case<arith::MulIOp>([&](auto) { return ReductionKind{"prod", intConstant(APInt(width, 1))}; })
      .Case<arith::MaxSIOp>([&](auto) {
        return ReductionKind{"maxsi", intConstant(APInt::getSignedMinValue(width))};
      })
      .Case<arith::MinSIOp>([&](auto) {
        return ReductionKind{"minsi", intConstant(APInt::getSignedMaxValue(width))};
      })
      .Case<arith::MaxUIOp>([&](auto) { return ReductionKind{"maxui", intConstant(APInt(width, 0))}; })
      .Case<arith::MinUIOp>([&](auto) {
        return ReductionKind{"minui", intConstant(APInt::getAllOnes(width))};
      })
      .Case<arith::AndIOp>([&](auto) { return ReductionKind{"and", intConstant(APInt::getAllOnes(width))}; })
      .Case<arith::OrIOp>([&](auto) { return ReductionKind{"or", intConstant(APInt(width, 0))}; })
      .Case<arith::XOrIOp>([&](auto) { return ReductionKind{"xor", intConstant(APInt(width, 0))}; })
      .Default([](Operation *) { return std::nullopt; });
}

