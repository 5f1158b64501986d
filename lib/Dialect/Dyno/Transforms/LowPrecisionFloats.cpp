//===- LowPrecisionFloats.cpp - bf16/f16 tensors and their f32 forms -*- C++ -*-===//
#include "dyno/Dialect/Dyno/Transforms/LowPrecisionFloats.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

bool mlir::dyno::isLowPrecisionFloat(Type type) {
  return isa<BFloat16Type, Float16Type>(type);
}

Value mlir::dyno::castTensorElements(OpBuilder &builder, Location loc, Value source,
                                     Type elementType) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  bool widens = elementType.getIntOrFloatBitWidth() >
                sourceType.getElementType().getIntOrFloatBitWidth();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, source);
  Value empty = tensor::EmptyOp::create(builder, loc, sizes, elementType);
  SmallVector<AffineMap> maps(2, builder.getMultiDimIdentityMap(sourceType.getRank()));
  SmallVector<utils::IteratorType> iterators(sourceType.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, loc, empty.getType(), source, empty, maps, iterators,
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value cast =
                   widens ? arith::ExtFOp::create(b, l, elementType, args[0]).getResult()
                          : arith::TruncFOp::create(b, l, elementType, args[0]).getResult();
               linalg::YieldOp::create(b, l, cast);
             })
      .getResult(0);
}

Value mlir::dyno::widenedLowPrecisionSource(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block *body = generic.getBody();
  if (body->getOperations().size() != 2)
    return {};
  auto ext = dyn_cast<arith::ExtFOp>(body->front());
  if (!ext || ext.getIn() != body->getArgument(0) ||
      body->getTerminator()->getOperand(0) != ext.getResult())
    return {};
  Value source = generic.getDpsInputs()[0];
  if (!isLowPrecisionFloat(getElementTypeOrSelf(source.getType())))
    return {};
  return source;
}
