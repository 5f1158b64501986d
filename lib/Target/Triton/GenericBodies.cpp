//===- GenericBodies.cpp - Generic bodies in Triton block programs -*- C++ -*-===//
//
// Part of the `dyno-convert-kernels-to-triton-level` pass (see KernelEmitter.h): a
// generic's body on blocks: its scalar arith and math ops elementwise, its index ops,
// affine applies and gathers (tensor.extract) as offsets and loads, its index checks
// (dyno.check) as device assertions, and its per-element loops (scf.while) as
// block-level loops.
//
//===----------------------------------------------------------------------===//
#include "KernelEmitter.h"

#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::dyno;

namespace mlir::dyno::tl {

FailureOr<Value> KernelEmitter::bodyValue(linalg::GenericOp op, IRMapping &mapping,
                                          Value value) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  if (!op->isAncestor(value.getParentRegion()->getParentOp()))
    return hoist(value); // a scalar of the kernel body, e.g. a constant
  return op.emitOpError("uses a value the Triton lowering did not compute"), failure();
}

Value KernelEmitter::cloneElementwise(OpBuilder &b, Operation *op, ArrayRef<Value> operands) {
  bool anyBlock = llvm::any_of(
      operands, [](Value operand) { return isa<RankedTensorType>(operand.getType()); });
  OperationState state(op->getLoc(), op->getName());
  state.addAttributes(op->getAttrs());
  for (Value operand : operands)
    state.addOperands(anyBlock ? toBlock(b, operand) : operand);
  for (Type type : op->getResultTypes())
    state.addTypes(anyBlock ? Type(blockType(type)) : type);
  return b.create(state)->getResult(0);
}

LogicalResult KernelEmitter::emitBody(linalg::GenericOp op, Region &region,
                                      ArrayRef<Operation *> skip,
                                      IRMapping &mapping) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (!op.payloadUsesValueFromOperand(&operand))
      continue;
    if (op.isDpsInit(&operand) && op.getNumReductionLoops())
      continue; // the accumulator: handled by emitReduction
    FailureOr<Value> value = operandValue(op, operand, region);
    if (failed(value))
      return failure();
    mapping.map(op.getMatchingBlockArgument(&operand), *value);
  }
  return emitOps(op, *op.getBody(), region, skip, mapping);
}

LogicalResult KernelEmitter::emitOps(linalg::GenericOp op, Block &block, Region &region,
                                     ArrayRef<Operation *> skip, IRMapping &mapping) {
  OpBuilder &b = region.builder;
  auto lookup = [&](Value value) { return bodyValue(op, mapping, value); };
  for (Operation &inner : block.without_terminator()) {
    if (llvm::is_contained(skip, &inner) || isa<cf::AssertOp>(inner))
      continue; // ATen's index bounds checks have no Triton equivalent here
    if (auto dim = dyn_cast<tensor::DimOp>(inner)) {
      // A size read in the body (an expand's broadcast check): a kernel-entry scalar.
      FailureOr<Value> size = hoist(dim.getResult());
      if (failed(size))
        return failure();
      mapping.map(dim.getResult(), *size);
      continue;
    }
    if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
      FailureOr<Value> position = evalIndex(getAffineDimExpr(indexOp.getDim(), op.getContext()),
                                            op, region);
      if (failed(position))
        return failure();
      mapping.map(indexOp.getResult(), *position);
      continue;
    }
    if (auto apply = dyn_cast<affine::AffineApplyOp>(inner)) {
      SmallVector<Value> operands;
      for (Value operand : apply.getMapOperands()) {
        FailureOr<Value> value = lookup(operand);
        if (failed(value))
          return failure();
        operands.push_back(*value);
      }
      AffineMap map = apply.getAffineMap();
      FailureOr<Value> result =
          evalAffine(map.getResult(0), b, [&](AffineExpr leaf) -> FailureOr<Value> {
            if (auto dim = dyn_cast<AffineDimExpr>(leaf))
              return operands[dim.getPosition()];
            return operands[map.getNumDims() + cast<AffineSymbolExpr>(leaf).getPosition()];
          });
      if (failed(result))
        return failure();
      mapping.map(apply.getResult(), *result);
      continue;
    }
    if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
      FailureOr<TensorSource> source = traceTensor(extract.getTensor());
      if (failed(source))
        return failure();
      if (source->kind != TensorSource::Memory)
        return extract.emitOpError("gathers from a tensor that is not a kernel argument"),
               failure();
      SmallVector<Value> positions;
      for (Value position : extract.getIndices()) {
        FailureOr<Value> at = lookup(position);
        if (failed(at))
          return failure();
        positions.push_back(*at);
      }
      FailureOr<Value> offsets = offsetOf(b, source->memory, positions);
      if (failed(offsets))
        return failure();
      FailureOr<Value> loaded = load(pointers[source->memory.argument], *offsets, region);
      if (failed(loaded))
        return failure();
      mapping.map(extract.getResult(), *loaded);
      continue;
    }
    if (auto loop = dyn_cast<scf::WhileOp>(inner)) {
      if (failed(emitWhile(op, loop, region, mapping)))
        return failure();
      continue;
    }
    if (auto check = dyn_cast<dyno::CheckOp>(inner)) {
      // Asserted on the lanes in the iteration space only: masked lanes hold no index.
      FailureOr<Value> condition = lookup(check.getCondition());
      FailureOr<Value> value = lookup(check.getValue());
      if (failed(condition) || failed(value))
        return failure();
      Value mask = isa<RankedTensorType>(condition->getType())
                       ? maskFor(region, support(*condition))
                       : Value();
      tl::AssertOp::create(b, check.getLoc(), *condition, mask, check.getMessage());
      mapping.map(check.getResult(), *value);
      continue;
    }
    if (inner.getNumRegions() ||
        !isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return inner.emitOpError("is not supported by the Triton target"), failure();
    if (inner.getNumResults() != 1)
      return inner.emitOpError("has several results, which the Triton target does not "
                               "support"), failure();
    SmallVector<Value> operands;
    for (Value operand : inner.getOperands()) {
      FailureOr<Value> value = lookup(operand);
      if (failed(value))
        return failure();
      operands.push_back(*value);
    }
    mapping.map(inner.getResult(0), cloneElementwise(b, &inner, operands));
  }
  return success();
}

/// A per-element loop (an scf.while in an elementwise body) becomes a block-level
/// scf.while that runs while any lane's condition holds (tl.any); a lane whose condition
/// fails keeps its values (arith.select), so each lane ends with the values its own loop
/// ends with. The condition must forward the loop's values unchanged (as Dyno's own
/// lowerings emit them), so that re-evaluating it on a stopped lane stops it again.
LogicalResult KernelEmitter::emitWhile(linalg::GenericOp op, scf::WhileOp loop,
                                       Region &region, IRMapping &mapping) {
  OpBuilder &b = region.builder;
  scf::ConditionOp condition = loop.getConditionOp();
  if (condition.getArgs() != ValueRange(loop.getBeforeArguments()))
    return loop.emitOpError("forwards other values than its own to its body; the Triton "
                            "target runs per-element loops that forward their values"),
           failure();
  // Loop-carried values keep one type in Triton: each starts as a block of the shape
  // all of them span together (a row's values in a kernel with a reduction are
  // [XBLOCK, 1]; scalars and splats become blocks of that shape, narrower blocks are
  // widened by a select), so that no value grows in the first iteration.
  SmallVector<Value> starts;
  unsigned bits = 0;
  for (Value init : loop.getInits()) {
    FailureOr<Value> value = bodyValue(op, mapping, init);
    if (failed(value))
      return failure();
    Value start = *value;
    if (auto splat = start.getDefiningOp<tl::SplatOp>())
      start = splat.getValue();
    bits |= support(start);
    starts.push_back(start);
  }
  if (bits == 0)
    bits = 1u; // only scalars: one lane per element all the same
  SmallVector<StringRef> shape;
  for (unsigned dim = 0; dim < rank; ++dim)
    shape.push_back((bits >> dim) & 1u ? (dim == 0 ? "XBLOCK" : "RBLOCK") : "1");
  auto full = [&](Value scalar) -> Value {
    Value block = tl::FullOp::create(b, loc, blockType(scalar.getType()), scalar,
                                     b.getStrArrayAttr(shape));
    supportCache[block] = bits;
    return block;
  };
  SmallVector<Value> inits;
  for (Value start : starts) {
    if (!isa<RankedTensorType>(start.getType())) {
      start = full(start);
    } else if (support(start) != bits) {
      Type element = cast<RankedTensorType>(start.getType()).getElementType();
      Value everywhere = full(arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
      Value zero = full(arith::ConstantOp::create(b, loc, b.getZeroAttr(element)));
      start = arith::SelectOp::create(b, loc, everywhere, start, zero);
      supportCache[start] = bits;
    }
    inits.push_back(start);
  }
  SmallVector<Type> types = llvm::to_vector(TypeRange(ValueRange(inits)));
  SmallVector<Type> forwarded(types);
  forwarded.push_back(blockType(b.getI1Type()));
  SmallVector<Location> locations(forwarded.size(), loc);
  auto blockLoop = scf::WhileOp::create(b, loc, forwarded, inits);
  OpBuilder::InsertionGuard guard(b);

  // Before: each lane's condition (masked to the lanes in range), and whether any holds.
  Block *before = b.createBlock(&blockLoop.getBefore(), {}, types,
                                ArrayRef<Location>(locations).drop_back());
  for (BlockArgument argument : before->getArguments())
    supportCache[argument] = bits;
  IRMapping beforeMapping = mapping;
  for (auto [old, now] : llvm::zip(loop.getBeforeArguments(), before->getArguments()))
    beforeMapping.map(old, now);
  if (failed(emitOps(op, *loop.getBeforeBody(), region, {}, beforeMapping)))
    return failure();
  FailureOr<Value> keep = bodyValue(op, beforeMapping, condition.getCondition());
  if (failed(keep))
    return failure();
  Value lanes = toBlock(b, *keep);
  if (Value inRange = maskFor(region, bits))
    lanes = arith::AndIOp::create(b, loc, lanes, toBlock(b, inRange));
  SmallVector<Value> passed(before->getArguments());
  passed.push_back(lanes);
  scf::ConditionOp::create(b, loc, tl::AnyOp::create(b, loc, lanes), passed);

  // After: the body, kept only in the lanes whose condition held.
  Block *after = b.createBlock(&blockLoop.getAfter(), {}, forwarded, locations);
  for (BlockArgument argument : after->getArguments())
    supportCache[argument] = bits;
  IRMapping afterMapping = mapping;
  for (auto [old, now] : llvm::zip(loop.getAfterArguments(), after->getArguments()))
    afterMapping.map(old, now);
  if (failed(emitOps(op, *loop.getAfterBody(), region, {}, afterMapping)))
    return failure();
  Value running = after->getArguments().back();
  SmallVector<Value> next;
  auto yield = cast<scf::YieldOp>(loop.getAfterBody()->getTerminator());
  for (auto [value, current] : llvm::zip(yield.getOperands(), after->getArguments())) {
    FailureOr<Value> computed = bodyValue(op, afterMapping, value);
    if (failed(computed))
      return failure();
    next.push_back(arith::SelectOp::create(b, loc, running, toBlock(b, *computed), current));
  }
  scf::YieldOp::create(b, loc, next);
  for (auto [old, now] : llvm::zip(loop.getResults(), blockLoop.getResults())) {
    supportCache[now] = bits;
    mapping.map(old, now);
  }
  return success();
}

LogicalResult KernelEmitter::emitGeneric(linalg::GenericOp op, Region &region) {
  IRMapping mapping;
  if (failed(emitBody(op, region, {}, mapping)))
    return failure();
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  for (auto [result, yielded] : llvm::zip(op->getResults(), yield.getOperands())) {
    FailureOr<Value> value = bodyValue(op, mapping, yielded);
    if (failed(value))
      return failure();
    region.blocks[result] = *value;
  }
  return success();
}

} // namespace mlir::dyno::tl
