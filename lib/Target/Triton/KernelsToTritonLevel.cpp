//===- KernelsToTritonLevel.cpp - Kernels to Triton block programs -*- C++ -*-===//
//
// Lowers each linalg kernel to a `tl` block program (see Passes.td). The iteration space
// analysis (IterationSpace.h) places every loop on an X or R slot; this file emits the
// program: index blocks per slot, masked loads at offsets computed from indexing maps
// and masked stores; GenericBodies.cpp emits each generic's body on blocks and
// Reductions.cpp emits reductions.
//
//===----------------------------------------------------------------------===//
#include "BlockConfigs.h"
#include "KernelEmitter.h"

#include "dyno/Target/Triton/Passes.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "dyno-convert-kernels-to-triton-level"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOCONVERTKERNELSTOTRITONLEVEL
#include "dyno/Target/Triton/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

namespace mlir::dyno::tl {

SmallVector<Value> KernelEmitter::decompose(OpBuilder &b, Value linear,
                                            ArrayRef<Value> extents) {
  SmallVector<Value> indices;
  SmallVector<Value> strides(extents.size());
  Value stride;
  for (int64_t i = static_cast<int64_t>(extents.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride = stride ? productOf({stride, extents[i]}) : extents[i];
  }
  for (auto [i, extent] : llvm::enumerate(extents)) {
    if (matchPattern(extent, m_One())) {
      indices.push_back(index(b, 0));
      continue;
    }
    Value value = linear;
    if (strides[i] && !matchPattern(strides[i], m_One()))
      value = indexOp<arith::DivSIOp>(b, value, strides[i]);
    if (i != 0)
      value = indexOp<arith::RemSIOp>(b, value, extent);
    indices.push_back(value);
  }
  return indices;
}

Value KernelEmitter::rowMajorLinearIndex(ArrayRef<Value> positions,
                                         ArrayRef<int64_t> strides) {
  if (!xLinearIndex || positions.size() != xSlotPositions.size() ||
      !llvm::equal(positions, xSlotPositions))
    return Value();
  int64_t expected = 1;
  for (int64_t i = static_cast<int64_t>(positions.size()) - 1; i >= 0; --i) {
    std::optional<int64_t> extent = getConstantIntValue(xExtents[i]);
    if (!extent)
      return Value();
    if (*extent == 1)
      continue; // its position is 0 whatever the stride
    if (strides[i] != expected)
      return Value();
    expected *= *extent;
  }
  return xLinearIndex;
}

Value KernelEmitter::productOf(ArrayRef<Value> values) {
  OpBuilder &b = *hoistBuilder;
  int64_t constant = 1;
  Value product;
  for (Value value : values) {
    if (std::optional<int64_t> known = getConstantIntValue(value)) {
      constant *= *known;
      continue;
    }
    product = product ? arith::MulIOp::create(b, loc, product, value).getResult() : value;
  }
  if (!product)
    return index(b, constant);
  return constant == 1 ? product
                       : arith::MulIOp::create(b, loc, product, index(b, constant)).getResult();
}

Value KernelEmitter::sizeOf(Value tensor, int64_t dim) {
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (!type || dim < 0 || dim >= type.getRank())
    return {}; // (a tensor.dim past the rank: the caller diagnoses it)
  if (!type.isDynamicDim(dim))
    return index(*hoistBuilder, type.getDimSize(dim));
  // An argument's or a returned tensor's sizes are arguments.
  if (std::optional<Value> size = sizeArgumentOf(oldKernel, sizeArguments, tensor, dim))
    return *size;
  if (auto empty = tensor.getDefiningOp<tensor::EmptyOp>()) {
    FailureOr<Value> size = hoist(empty.getDynamicSize(dim));
    return succeeded(size) ? *size : Value();
  }
  if (auto dps = tensor.getDefiningOp<DestinationStyleOpInterface>())
    return sizeOf(dps.getTiedOpOperand(cast<OpResult>(tensor))->get(), dim);
  if (auto expand = tensor.getDefiningOp<tensor::ExpandShapeOp>()) {
    FailureOr<Value> size = hoistIndex(expand.getMixedOutputShape()[dim]);
    return succeeded(size) ? *size : Value();
  }
  if (auto slice = tensor.getDefiningOp<tensor::ExtractSliceOp>()) {
    // Result dimension `dim` is the dim-th source dimension the slice keeps.
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    int64_t kept = -1;
    for (int64_t sourceDim = 0; sourceDim < static_cast<int64_t>(dropped.size()); ++sourceDim)
      if (!dropped.test(sourceDim) && ++kept == dim) {
        FailureOr<Value> size = hoistIndex(slice.getMixedSizes()[sourceDim]);
        return succeeded(size) ? *size : Value();
      }
    return {};
  }
  if (auto collapse = tensor.getDefiningOp<tensor::CollapseShapeOp>()) {
    SmallVector<Value> parts;
    for (int64_t sourceDim : collapse.getReassociationIndices()[dim]) {
      Value part = sizeOf(collapse.getSrc(), sourceDim);
      if (!part)
        return {};
      parts.push_back(part);
    }
    return productOf(parts);
  }
  return {};
}

FailureOr<Value> KernelEmitter::slotExtent(unsigned slot) {
  int64_t extent = slot < space.numXSlots() ? space.xSlotExtents()[slot]
                                            : space.rSlotExtents()[slot - space.numXSlots()];
  if (!ShapedType::isDynamic(extent))
    return index(*hoistBuilder, extent);
  linalg::GenericOp anchor = space.anchor();
  unsigned loop = space.anchorLoop(slot);
  SmallVector<OpOperand *> operands;
  for (OpOperand &init : anchor.getDpsInitsMutable())
    operands.push_back(&init);
  for (OpOperand *input : anchor.getDpsInputOperands())
    operands.push_back(input);
  // Anchor results first: a returned one has its sizes as arguments, which the runtime
  // also reads for the grid. Then any operand the size can be read from.
  for (OpResult result : anchor->getResults())
    for (auto [dim, expr] : llvm::enumerate(anchor.getIndexingMapMatchingResult(result).getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == loop)
        if (Value size = sizeOf(result, dim); size && isa<BlockArgument>(size))
          return size;
  for (OpOperand *operand : operands) {
    if (!isa<RankedTensorType>(operand->get().getType()))
      continue;
    for (auto [dim, expr] : llvm::enumerate(anchor.getMatchingIndexingMap(operand).getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == loop)
        if (Value size = sizeOf(operand->get(), dim))
          return size;
  }
  return anchor.emitOpError("has a dynamic loop ")
             << loop << " whose size the Triton target cannot read from its operands",
         failure();
}

Value KernelEmitter::returnedSizeOnSlot(unsigned slot) {
  auto returned = cast<func::ReturnOp>(oldKernel.getBody().front().getTerminator());
  for (OpOperand &operand : returned->getOpOperands()) {
    auto generic = operand.get().getDefiningOp<linalg::GenericOp>();
    if (!generic || !llvm::is_contained(space.generics(), generic))
      continue;
    auto type = cast<RankedTensorType>(operand.get().getType());
    AffineMap map = generic.getIndexingMapMatchingResult(cast<OpResult>(operand.get()));
    for (auto [dim, expr] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(expr);
          d && type.isDynamicDim(dim) && space.slot(generic, d.getPosition()) == slot)
        return sizeArguments.lookup(
            {oldKernel.getNumArguments() + operand.getOperandNumber(), dim});
  }
  return {};
}

SmallVector<Value> KernelEmitter::rowMajorStrides(unsigned position) {
  auto type = cast<RankedTensorType>(positionTypes[position]);
  SmallVector<Value> strides(type.getRank());
  Value stride = index(*hoistBuilder, 1);
  for (int64_t i = type.getRank() - 1; i >= 0; --i) {
    strides[i] = stride;
    Value size = type.isDynamicDim(i) ? sizeArguments.lookup({position, i})
                                      : index(*hoistBuilder, type.getDimSize(i));
    stride = productOf({stride, size});
  }
  return strides;
}

unsigned KernelEmitter::support(Value value) {
  if (!isa<RankedTensorType>(value.getType()))
    return 0;
  auto it = supportCache.find(value);
  if (it != supportCache.end())
    return it->second;
  unsigned all = rank == 2 ? 3u : 1u;
  unsigned bits = 0;
  Operation *def = value.getDefiningOp();
  if (!def || isa<scf::ForOp>(def)) {
    bits = all; // loop accumulators are full blocks
  } else if (auto range = dyn_cast<tl::RangeOp>(def)) {
    bits = 1u << range.getDim();
  } else if (auto full = dyn_cast<tl::FullOp>(def)) {
    for (auto [i, size] : llvm::enumerate(full.getShape()))
      if (cast<StringAttr>(size).getValue() != "1")
        bits |= 1u << i;
  } else if (auto loaded = dyn_cast<tl::LoadOp>(def)) {
    bits = support(loaded.getOffsets());
  } else if (auto reduce = dyn_cast<tl::ReduceOp>(def)) {
    bits = support(reduce.getInput()) & ~(1u << reduce.getAxis());
  } else if (!isa<tl::SplatOp>(def)) {
    for (Value operand : def->getOperands())
      bits |= support(operand);
  }
  supportCache[value] = bits;
  return bits;
}

Value KernelEmitter::maskFor(Region &region, unsigned bits) {
  Value mask;
  if (bits & 1u)
    mask = region.xmask;
  if ((bits & 2u) && region.rmask)
    mask = mask ? arith::AndIOp::create(region.builder, loc, mask, region.rmask).getResult()
                : region.rmask;
  return mask;
}

FailureOr<Value> KernelEmitter::hoist(Value scalar) {
  if (Value known = hoisted.lookupOrNull(scalar))
    return known;
  if (auto argument = dyn_cast<BlockArgument>(scalar);
      argument && argument.getOwner() == &oldKernel.getBody().front()) {
    Value passed = pointers[argument.getArgNumber()]; // a scalar (e.g. a symbolic size)
    hoisted.map(scalar, passed);
    return passed;
  }
  if (auto dim = scalar.getDefiningOp<tensor::DimOp>()) {
    std::optional<int64_t> position = dim.getConstantIndex();
    if (Value size = position ? sizeOf(dim.getSource(), *position) : Value()) {
      hoisted.map(scalar, size);
      return size;
    }
  }
  Operation *def = scalar.getDefiningOp();
  if (!def || def->getNumRegions() || def->getNumResults() != 1 ||
      isa<RankedTensorType>(scalar.getType()) ||
      !isa<arith::ArithDialect, math::MathDialect>(def->getDialect()))
    return (def ? def->emitOpError() : oldKernel.emitOpError())
               << "computes a scalar the Triton target cannot compute at kernel entry",
           failure();
  for (Value operand : def->getOperands())
    if (failed(hoist(operand)))
      return failure();
  Operation *clone = hoistBuilder->clone(*def, hoisted);
  hoistBuilder->setInsertionPointAfter(clone);
  return clone->getResult(0);
}

FailureOr<Value> KernelEmitter::hoistIndex(OpFoldResult index) {
  if (auto attribute = dyn_cast<Attribute>(index))
    return this->index(*hoistBuilder, cast<IntegerAttr>(attribute).getInt());
  FailureOr<Value> hoisted = hoist(cast<Value>(index));
  if (failed(hoisted) || hoisted->getType().isIndex())
    return hoisted;
  return arith::IndexCastOp::create(*hoistBuilder, loc, hoistBuilder->getIndexType(), *hoisted)
      .getResult();
}

FailureOr<Value> KernelEmitter::evalIndex(AffineExpr expr, linalg::GenericOp op,
                                          Region &region) {
  return evalAffine(expr, region.builder, [&](AffineExpr leaf) -> FailureOr<Value> {
    auto dim = dyn_cast<AffineDimExpr>(leaf);
    if (!dim)
      return op.emitOpError("has an indexing map with symbols"), failure();
    unsigned slot = space.slot(op, dim.getPosition());
    if (slot == IterationSpace::kUnitSlot)
      return index(region.builder, 0);
    Value slotIndex = region.slotIndex[slot];
    if (!slotIndex)
      return op.emitOpError("reads along the reduced extent outside a row region"), failure();
    return slotIndex;
  });
}

FailureOr<Value> KernelEmitter::evalAffine(
    AffineExpr expr, OpBuilder &b, function_ref<FailureOr<Value>(AffineExpr)> leaf) {
  if (isa<AffineDimExpr, AffineSymbolExpr>(expr))
    return leaf(expr);
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return index(b, constant.getValue());
  auto binary = cast<AffineBinaryOpExpr>(expr);
  FailureOr<Value> lhs = evalAffine(binary.getLHS(), b, leaf);
  FailureOr<Value> rhs = evalAffine(binary.getRHS(), b, leaf);
  if (failed(lhs) || failed(rhs))
    return failure();
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return indexOp<arith::AddIOp>(b, *lhs, *rhs);
  case AffineExprKind::Mul:
    return indexOp<arith::MulIOp>(b, *lhs, *rhs);
  case AffineExprKind::FloorDiv:
    return indexOp<arith::FloorDivSIOp>(b, *lhs, *rhs);
  case AffineExprKind::Mod: {
    // Affine mod is non-negative (the divisor is a positive constant).
    Value remainder = indexOp<arith::RemSIOp>(b, *lhs, *rhs);
    Value shifted = indexOp<arith::AddIOp>(b, remainder, *rhs);
    return indexOp<arith::RemSIOp>(b, shifted, *rhs);
  }
  default: { // CeilDiv: -floordiv(-a, b)
    Value negated = indexOp<arith::SubIOp>(b, index(b, 0), *lhs);
    Value quotient = indexOp<arith::FloorDivSIOp>(b, negated, *rhs);
    return indexOp<arith::SubIOp>(b, index(b, 0), quotient);
  }
  }
}

FailureOr<Value> KernelEmitter::offsetsOf(const MemoryOperand &memory, AffineMap map,
                                          linalg::GenericOp op, Region &region,
                                          Value *inBounds) {
  OpBuilder &b = region.builder;
  SmallVector<Value> positions;
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    FailureOr<Value> position = evalIndex(expr, op, region);
    if (failed(position))
      return failure();
    if (memory.padValue) {
      if (!inBounds)
        return op.emitOpError("writes to a padded tensor"), failure();
      int64_t low = memory.padLow[dim];
      if (!memory.padScale.empty() && memory.padScale[dim] != 1) // a strided slice
        position = indexOp<arith::MulIOp>(b, *position, index(b, memory.padScale[dim]));
      position = indexOp<arith::SubIOp>(b, *position, index(b, low));
      // A scalar position (a dimension of extent 1) is compared as a block.
      position = toBlock(b, *position);
      Value above = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, *position,
                                          toBlock(b, index(b, 0)));
      Value below = lessThan(b, *position, memory.unpaddedSizes[dim]);
      Value inside = arith::AndIOp::create(b, loc, above, below);
      *inBounds = *inBounds ? arith::AndIOp::create(b, loc, *inBounds, inside).getResult()
                            : inside;
    }
    positions.push_back(*position);
  }
  return offsetOf(b, memory, positions);
}

FailureOr<Value> KernelEmitter::offsetOf(OpBuilder &b, const MemoryOperand &memory,
                                         ArrayRef<Value> positions) {
  SmallVector<Value> argumentStrides;
  auto argumentStride = [&](int64_t dim, int64_t scale) {
    if (argumentStrides.empty())
      argumentStrides = rowMajorStrides(memory.argument);
    return productOf({argumentStrides[dim], index(*hoistBuilder, scale)});
  };
  Value offsets;
  if (memory.isDynamic()) { // a row-major argument (or a slice of one) of dynamic sizes
    SmallVector<Value> strides;
    for (auto [i, dim] : llvm::enumerate(memory.strideDims))
      strides.push_back(dim < 0 ? index(*hoistBuilder, 0)
                                : argumentStride(dim, memory.strideScale(i)));
    offsets = linearOffset(b, positions, strides);
  } else {
    offsets = linearOffset(b, memory.offset, positions, memory.strides);
  }
  // Offsets known at run time (dynamic slices): one scalar at kernel entry.
  Value shift;
  for (const MemoryOperand::OffsetTerm &term : memory.offsetTerms) {
    FailureOr<Value> offset = hoistIndex(term.offset);
    if (failed(offset))
      return failure();
    Value stride = !ShapedType::isDynamic(term.staticStride)
                       ? index(*hoistBuilder, term.staticStride)
                       : argumentStride(term.argumentDim, term.scale);
    Value product = productOf({*offset, stride});
    shift = shift ? arith::AddIOp::create(*hoistBuilder, loc, shift, product).getResult()
                  : product;
  }
  return shift ? indexOp<arith::AddIOp>(b, offsets, shift) : offsets;
}

Value KernelEmitter::linearOffset(OpBuilder &b, ArrayRef<Value> positions,
                                  ArrayRef<Value> strides) {
  Value offsets;
  for (auto [position, stride] : llvm::zip(positions, strides)) {
    Value term = matchPattern(stride, m_One()) ? position
                                               : indexOp<arith::MulIOp>(b, position, stride);
    offsets = offsets ? indexOp<arith::AddIOp>(b, offsets, term) : term;
  }
  return offsets ? offsets : index(b, 0);
}

Value KernelEmitter::linearOffset(OpBuilder &b, int64_t base, ArrayRef<Value> positions,
                                  ArrayRef<int64_t> strides) {
  Value offsets = base ? index(b, base) : Value();
  // The program's own slot positions into a row-major buffer of the iteration space's
  // shape: sum(position * stride) is the linear index they were decomposed from, in
  // every lane the mask keeps.
  if (Value linear = rowMajorLinearIndex(positions, strides))
    return offsets ? indexOp<arith::AddIOp>(b, offsets, linear) : linear;
  for (auto [position, stride] : llvm::zip(positions, strides)) {
    assert(!ShapedType::isDynamic(stride) && "dynamic strides take the Value overload");
    Value term = stride == 1 ? position : indexOp<arith::MulIOp>(b, position, index(b, stride));
    offsets = offsets ? indexOp<arith::AddIOp>(b, offsets, term) : term;
  }
  return offsets ? offsets : index(b, 0);
}

FailureOr<Value> KernelEmitter::load(Value pointer, Value offsets, Region &region) {
  Type element = cast<tl::PtrType>(pointer.getType()).getElementType();
  bool isBlock = isa<RankedTensorType>(offsets.getType());
  Value mask = isBlock ? maskFor(region, support(offsets)) : Value();
  return tl::LoadOp::create(region.builder, loc, isBlock ? Type(blockType(element)) : element,
                            pointer, offsets, mask)
      .getResult();
}

FailureOr<Value> KernelEmitter::operandValue(linalg::GenericOp op, OpOperand &operand,
                                             Region &region) {
  if (!isa<RankedTensorType>(operand.get().getType()))
    return hoist(operand.get()); // a scalar operand
  FailureOr<TensorSource> source = traceTensor(operand.get());
  if (failed(source))
    return failure();
  if (source->kind != TensorSource::Memory)
    return valueOf(operand.get(), region);
  Value inBounds;
  FailureOr<Value> offsets = offsetsOf(source->memory, op.getMatchingIndexingMap(&operand),
                                       op, region, &inBounds);
  if (failed(offsets))
    return failure();
  if (!inBounds)
    return load(pointers[source->memory.argument], *offsets, region);
  // A padded operand: lanes outside the tensor read nothing and take the pad value.
  OpBuilder &b = region.builder;
  Value offsetBlock = toBlock(b, *offsets);
  Value mask = maskFor(region, support(offsetBlock));
  Value guard = toBlock(b, inBounds);
  mask = mask ? arith::AndIOp::create(b, loc, mask, guard).getResult() : guard;
  Type element = cast<tl::PtrType>(pointers[source->memory.argument].getType()).getElementType();
  Value loaded = tl::LoadOp::create(b, loc, blockType(element),
                                    pointers[source->memory.argument], offsetBlock, mask);
  FailureOr<Value> padValue = hoist(source->memory.padValue);
  if (failed(padValue))
    return failure();
  return arith::SelectOp::create(b, loc, guard, loaded, toBlock(b, *padValue)).getResult();
}

FailureOr<Value> KernelEmitter::valueOf(Value tensor, Region &region) {
  FailureOr<TensorSource> source = traceTensor(tensor);
  if (failed(source))
    return failure();
  if (source->kind == TensorSource::ScalarFill)
    return hoist(source->scalar);
  if (source->kind == TensorSource::Memory)
    return oldKernel.emitOpError("reads a kernel argument without an indexing map"), failure();
  linalg::GenericOp producer = source->producer;
  Value result = producer->getResult(source->resultNumber); // `tensor` may be a reshape
  if (producer.getNumReductionLoops()) {
    if (!outer->blocks.count(result) && failed(emitReduction(producer)))
      return failure();
    return outer->blocks.lookup(result);
  }
  bool row = isRowOp(producer);
  if (row && !region.row)
    return producer.emitOpError("is a row-wise op used outside a row region"), failure();
  Region &home = row ? region : *outer;
  if (!home.blocks.count(result) && failed(emitGeneric(producer, home)))
    return failure();
  return home.blocks.lookup(result);
}

LogicalResult KernelEmitter::store(unsigned resultNumber, Region &region) {
  Value tensor = cast<func::ReturnOp>(oldKernel.getBody().front().getTerminator())
                     .getOperand(resultNumber);
  auto op = tensor.getDefiningOp<linalg::GenericOp>();
  if (!op || !llvm::is_contained(space.generics(), op))
    return oldKernel.emitOpError("returns result ")
               << resultNumber << ", which no op of the kernel computes (the Triton target "
               << "does not copy arguments)", failure();
  FailureOr<Value> value;
  if (scalarFillValue(op))
    value = emitGeneric(op, region).succeeded() ? region.blocks.lookup(tensor) : Value();
  else
    value = valueOf(tensor, region);
  if (failed(value) || !*value)
    return failure();
  auto resultType = cast<RankedTensorType>(tensor.getType());
  ArrayRef<int64_t> shape = resultType.getShape();
  MemoryOperand output;
  output.argument = oldKernel.getNumArguments() + resultNumber;
  output.strideDims = llvm::to_vector(llvm::seq<int64_t>(0, shape.size()));
  output.strides.assign(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    output.strides[i] = ShapedType::isDynamic(output.strides[i + 1]) ||
                                ShapedType::isDynamic(shape[i + 1])
                            ? ShapedType::kDynamic
                            : output.strides[i + 1] * shape[i + 1];
  FailureOr<Value> offsets = offsetsOf(
      output, op.getIndexingMapMatchingResult(cast<OpResult>(tensor)), op, region);
  if (failed(offsets))
    return failure();
  Value pointer = pointers[oldKernel.getNumArguments() + resultNumber];
  if (!isa<RankedTensorType>(offsets->getType()) && isa<RankedTensorType>(value->getType())) {
    // One element (e.g. a full reduction) computed by a block whose first lane holds it:
    // the pointer becomes a block too, and the mask keeps the other lanes from storing.
    SmallVector<std::string> shape;
    unsigned bits = support(*value);
    for (unsigned dim = 0; dim < rank; ++dim)
      shape.push_back((bits >> dim) & 1u ? (dim == 0 ? "XBLOCK" : "RBLOCK") : "1");
    offsets = tl::FullOp::create(region.builder, loc, blockType(region.builder.getIndexType()),
                                 *offsets,
                                 region.builder.getStrArrayAttr(SmallVector<StringRef>(
                                     shape.begin(), shape.end())))
                  .getResult();
    supportCache[*offsets] = bits;
  }
  Value mask = isa<RankedTensorType>(offsets->getType())
                   ? maskFor(region, support(*offsets))
                   : Value();
  tl::StoreOp::create(region.builder, loc, pointer, *offsets, *value, mask);
  return success();
}

LogicalResult KernelEmitter::emit() {
  MLIRContext *context = oldKernel.getContext();
  OpBuilder moduleBuilder(oldKernel);
  SmallVector<Type> argumentTypes;
  int64_t largest = 0;
  bool dynamicShapes = false;
  // Tensors become pointers, scalars stay; then one index per dynamic size of every
  // tensor argument and result, in order (the ABI dyno.launch documents).
  positionTypes.assign(oldKernel.getArgumentTypes().begin(), oldKernel.getArgumentTypes().end());
  positionTypes.append(oldKernel.getResultTypes().begin(), oldKernel.getResultTypes().end());
  for (auto [position, type] : llvm::enumerate(positionTypes)) {
    if (isa<IntegerType, IndexType>(type) && position < oldKernel.getNumArguments()) {
      argumentTypes.push_back(type);
      continue;
    }
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!ranked)
      return oldKernel.emitOpError("has an argument of type ")
                 << type << ", which the Triton target does not pass", failure();
    if (ranked.hasStaticShape())
      largest = std::max(largest, ranked.getNumElements());
    dynamicShapes |= !ranked.hasStaticShape();
    argumentTypes.push_back(tl::PtrType::get(context, ranked.getElementType()));
  }
  SmallVector<LaunchSize> dynamicSizes = launchSizes(positionTypes);
  unsigned firstSize = argumentTypes.size();
  argumentTypes.append(dynamicSizes.size(), IndexType::get(context));

  newKernel = func::FuncOp::create(moduleBuilder, loc, oldKernel.getName(),
                                   FunctionType::get(context, argumentTypes, {}));
  Block *entry = newKernel.addEntryBlock();
  pointers.assign(entry->getArguments().begin(), entry->getArguments().begin() + firstSize);
  for (auto [i, size] : llvm::enumerate(dynamicSizes))
    sizeArguments[{size.position, size.dim}] = entry->getArgument(firstSize + i);

  OpBuilder entryBuilder = OpBuilder::atBlockBegin(entry);
  hoistBuilder.emplace(entryBuilder);
  // Index computations go after the hoisted scalars: a marker op keeps the boundary.
  auto returnOp = func::ReturnOp::create(entryBuilder, loc);
  hoistBuilder->setInsertionPoint(returnOp);
  // The index space's extents: constants, or sizes read at kernel entry.
  for (unsigned slot = 0; slot < space.numXSlots() + space.numRSlots(); ++slot) {
    FailureOr<Value> extent = slotExtent(slot);
    if (failed(extent))
      return failure();
    (slot < space.numXSlots() ? xExtents : rExtents).push_back(*extent);
  }
  xNumel = productOf(xExtents);
  rNumel = productOf(rExtents);
  // The grid: the static part of xnumel, times the size arguments it multiplies.
  int64_t staticXNumel = 1;
  SmallVector<int64_t> xNumelArguments;
  for (auto [slot, extent] : llvm::enumerate(xExtents)) {
    if (std::optional<int64_t> known = getConstantIntValue(extent)) {
      staticXNumel *= *known;
      continue;
    }
    Value passed = extent;
    if (auto cast = passed.getDefiningOp<arith::IndexCastOp>()) // an i64 scalar argument
      passed = cast.getIn();
    if (!isa<BlockArgument>(passed))
      passed = returnedSizeOnSlot(slot);
    if (!passed)
      return space.anchor().emitOpError("has a dynamic row extent computed in the kernel; "
                                        "the Triton target needs it as an argument"),
             failure();
    xNumelArguments.push_back(cast<BlockArgument>(passed).getArgNumber());
  }

  Builder attrs(context);
  newKernel->setAttr(tl::kXNumelAttr, attrs.getI64IntegerAttr(staticXNumel));
  if (!xNumelArguments.empty())
    newKernel->setAttr(tl::kXNumelArgsAttr, attrs.getDenseI64ArrayAttr(xNumelArguments));
  int64_t rNumelEstimate =
      ShapedType::isDynamic(space.rNumel()) ? 1024 : space.rNumel();
  int64_t xNumelEstimate = xNumelArguments.empty() ? staticXNumel : int64_t(1) << 20;
  newKernel->setAttr(tl::kRNumelAttr, attrs.getI64IntegerAttr(
                                          ShapedType::isDynamic(space.rNumel()) ? -1 : space.rNumel()));
  newKernel->setAttr(tl::kIndexBitsAttr,
                     attrs.getI64IntegerAttr(dynamicShapes || largest >= (int64_t(1) << 31)
                                                 ? 64
                                                 : 32));
  newKernel->setAttr(tl::kConfigsAttr,
                     blockConfigs(attrs, space.hasReduction(), persistent, xNumelEstimate,
                                  rNumelEstimate));

  outer = std::make_unique<Region>(OpBuilder(returnOp));
  OpBuilder &b = outer->builder;

  Value pid = tl::ProgramIdOp::create(b, loc, 0);
  Value xblock = tl::BlockSizeOp::create(b, loc, "XBLOCK");
  Value xindex = tl::RangeOp::create(b, loc, blockType(b.getIndexType()), "XBLOCK", 0);
  xindex = indexOp<arith::AddIOp>(b, indexOp<arith::MulIOp>(b, pid, xblock), xindex);
  outer->xmask = lessThan(b, xindex, xNumel);
  outer->slotIndex = decompose(b, xindex, xExtents);
  xLinearIndex = xindex;
  xSlotPositions.assign(outer->slotIndex.begin(), outer->slotIndex.end());
  outer->slotIndex.resize(space.numXSlots() + space.numRSlots());
  // Scalars go before the program's index arithmetic.
  hoistBuilder->setInsertionPoint(pid.getDefiningOp());
  if (space.hasReduction() && persistent)
    persistentRow = makeRowRegion(outer->builder, Value());

  for (linalg::GenericOp op : space.generics())
    if (op.getNumReductionLoops() && !outer->blocks.count(op->getResult(0)) &&
        failed(emitReduction(op)))
      return failure();

  SmallVector<unsigned> rowResults;
  for (unsigned i = 0, e = oldKernel.getNumResults(); i < e; ++i) {
    auto op = cast<func::ReturnOp>(oldKernel.getBody().front().getTerminator())
                  .getOperand(i)
                  .getDefiningOp<linalg::GenericOp>();
    if (op && isRowOp(op)) {
      rowResults.push_back(i);
      continue;
    }
    if (failed(store(i, *outer)))
      return failure();
  }
  if (!rowResults.empty()) {
    if (persistent) {
      for (unsigned i : rowResults)
        if (failed(store(i, *persistentRow)))
          return failure();
    } else {
      OpBuilder &ob = outer->builder;
      Value step = tl::BlockSizeOp::create(ob, loc, "RBLOCK");
      auto loop = scf::ForOp::create(ob, loc, index(ob, 0), rNumel, step);
      ob.setInsertionPoint(loop);
      std::unique_ptr<Region> row =
          makeRowRegion(OpBuilder(loop.getBody()->getTerminator()), loop.getInductionVar());
      for (unsigned i : rowResults)
        if (failed(store(i, *row)))
          return failure();
      ob.setInsertionPointAfter(loop);
    }
  }
  return success();
}

} // namespace mlir::dyno::tl

using mlir::dyno::tl::KernelEmitter;

namespace {

struct ConvertKernelsToTritonLevelPass
    : mlir::dyno::impl::DynoConvertKernelsToTritonLevelBase<ConvertKernelsToTritonLevelPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<func::FuncOp> kernels(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp kernel : kernels) {
      if (kernel.isExternal() || kernel->hasAttr(tl::kConfigsAttr))
        continue;
      FailureOr<IterationSpace> space = IterationSpace::build(kernel);
      if (failed(space))
        return signalPassFailure();
      KernelEmitter emitter(kernel, *space, persistentRNumel);
      if (failed(emitter.emit()))
        return signalPassFailure();
      kernel.erase();
    }
  }
};

} // namespace
