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
                                     Type elementType, bool opRounding) {
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
               Value cast;
               if (widens) {
                 cast = arith::ExtFOp::create(b, l, elementType, args[0]);
               } else {
                 auto trunc = arith::TruncFOp::create(b, l, elementType, args[0]);
                 if (opRounding)
                   trunc->setAttr(kOpRoundingAttr, b.getUnitAttr());
                 cast = trunc;
               }
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

Value mlir::dyno::broadcastRowBiasSource(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0 || generic.getNumLoops() != 2)
    return {};
  MLIRContext *context = generic.getContext();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[0] != AffineMap::get(2, 0, {getAffineDimExpr(1, context)}, context) ||
      !maps[1].isIdentity())
    return {};
  // The body yields the element, or widens it (after elementwise fusion has folded the
  // vector's own widening in).
  Block *body = generic.getBody();
  Value yielded = body->getTerminator()->getOperand(0);
  if (auto ext = yielded.getDefiningOp<arith::ExtFOp>();
      ext && body->getOperations().size() == 2 && ext.getIn() == body->getArgument(0))
    return generic.getDpsInputs()[0];
  if (body->getOperations().size() != 1 || yielded != body->getArgument(0))
    return {};
  return generic.getDpsInputs()[0];
}
