//===- IterationSpace.cpp - A kernel's Triton iteration space ---*- C++ -*-===//
#include "IterationSpace.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dyno;

/// Row-major strides; dynamic (ShapedType::kDynamic) outside a dynamic dimension.
static SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = ShapedType::isDynamic(strides[i + 1]) || ShapedType::isDynamic(shape[i + 1])
                     ? ShapedType::kDynamic
                     : strides[i + 1] * shape[i + 1];
  return strides;
}

bool MemoryOperand::isDynamic() const {
  return llvm::any_of(strides, ShapedType::isDynamic);
}

Value mlir::dyno::scalarFillValue(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops())
    return {};
  Block *body = op.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Value value = yield.getOperand(0);
  // A generalized linalg.fill: the scalar is the op's one (non-tensor) input.
  if (op.getNumDpsInputs() == 1 && !isa<ShapedType>(op.getDpsInputs()[0].getType()) &&
      value == body->getArgument(0) && body->getOperations().size() == 1)
    return op.getDpsInputs()[0];
  if (op.getNumDpsInputs() != 0)
    return {};
  if (isa<BlockArgument>(value) && cast<BlockArgument>(value).getOwner() == body)
    return {};
  if (Operation *def = value.getDefiningOp(); def && def->getBlock() == body) {
    if (!isa<arith::ConstantOp>(def) || body->getOperations().size() != 2)
      return {};
    return value;
  }
  return body->getOperations().size() == 1 ? value : Value();
}

std::optional<int64_t> mlir::dyno::iotaDimension(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumDpsInputs() != 0 || op.getNumReductionLoops() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  Value value = cast<linalg::YieldOp>(op.getBody()->getTerminator()).getOperand(0);
  auto cast = value.getDefiningOp<arith::IndexCastOp>();
  auto index = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
  if (!index || !isa<IntegerType>(cast.getType()))
    return std::nullopt;
  return index.getDim();
}

/// A static slice of a padded kernel argument (the windows of a max pool over its
/// -inf padding): the view's position j reads the unpadded position
/// j * padScale - padLow, masked where it falls outside. A dimension the slice drops
/// reads one position, which must be inside the unpadded tensor.
static FailureOr<TensorSource> slicePadded(tensor::ExtractSliceOp slice,
                                           TensorSource source) {
  if (ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
      ShapedType::isDynamicShape(slice.getStaticSizes()) ||
      ShapedType::isDynamicShape(slice.getStaticStrides()) || source.memory.isDynamic())
    return slice.emitOpError("is not a static slice of a padded kernel argument, which "
                             "the Triton target needs"), failure();
  MemoryOperand memory = source.memory;
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  SmallVector<int64_t> strides, low, sizes, scales;
  for (auto [i, offset] : llvm::enumerate(slice.getStaticOffsets())) {
    int64_t scale = memory.padScale.empty() ? 1 : memory.padScale[i];
    // Unpadded position of the view's j: (offset + j * step) * scale - padLow.
    int64_t start = offset * scale - memory.padLow[i];
    if (dropped.test(i)) {
      if (start < 0 || start >= memory.unpaddedSizes[i])
        return slice.emitOpError("reads only the padding of a dimension it drops, which "
                                 "the Triton target does not read"), failure();
      memory.offset += start * memory.strides[i];
      continue;
    }
    strides.push_back(memory.strides[i]);
    low.push_back(-start);
    sizes.push_back(memory.unpaddedSizes[i]);
    scales.push_back(slice.getStaticStrides()[i] * scale);
  }
  memory.strides = strides;
  memory.padLow = low;
  memory.unpaddedSizes = sizes;
  memory.padScale = llvm::all_of(scales, [](int64_t s) { return s == 1; })
                        ? SmallVector<int64_t>() : scales;
  source.memory = memory;
  return source;
}

FailureOr<TensorSource> mlir::dyno::traceTensor(Value tensor) {
  auto shapeOf = [](Value value) { return cast<RankedTensorType>(value.getType()).getShape(); };
  if (auto argument = dyn_cast<BlockArgument>(tensor)) {
    if (!isa<func::FuncOp>(argument.getOwner()->getParentOp()))
      return failure();
    TensorSource source{TensorSource::Memory};
    source.memory.argument = argument.getArgNumber();
    source.memory.strides = rowMajorStrides(shapeOf(tensor));
    source.memory.strideDims = llvm::to_vector(llvm::seq<int64_t>(0, shapeOf(tensor).size()));
    return source;
  }
  Operation *def = tensor.getDefiningOp();
  // A reshape of a computed tensor that only adds or drops unit dimensions.
  auto unitReshape = [&](Value input, ArrayRef<ReassociationIndices> groups,
                         bool expanding) -> std::optional<FailureOr<TensorSource>> {
    FailureOr<TensorSource> source = traceTensor(input);
    if (failed(source) || source->kind != TensorSource::Computed)
      return std::nullopt;
    ArrayRef<int64_t> wide = expanding ? shapeOf(tensor) : shapeOf(input);
    SmallVector<int64_t> resultDims(shapeOf(tensor).size(), -1);
    for (auto [narrowDim, group] : llvm::enumerate(groups)) {
      int64_t kept = -1;
      for (int64_t wideDim : group)
        if (wide[wideDim] != 1) {
          if (kept != -1)
            return FailureOr<TensorSource>(
                (def->emitOpError("reshapes a computed tensor beyond unit dimensions, "
                                  "which the Triton target does not support"), failure()));
          kept = wideDim;
        }
      if (expanding) {
        if (kept != -1)
          resultDims[kept] = source->resultDims[narrowDim];
        else if (!group.empty())
          resultDims[group.front()] = source->resultDims[narrowDim];
      } else {
        resultDims[narrowDim] = kept == -1 ? -1 : source->resultDims[kept];
      }
    }
    source->resultDims = resultDims;
    return FailureOr<TensorSource>(*source);
  };
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
    if (auto traced = unitReshape(expand.getSrc(), expand.getReassociationIndices(), true))
      return *traced;
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
    if (auto traced = unitReshape(collapse.getSrc(), collapse.getReassociationIndices(), false))
      return *traced;

  auto traceView = [&](Value input) -> FailureOr<TensorSource> {
    FailureOr<TensorSource> source = traceTensor(input);
    if (failed(source))
      return failure();
    if (source->kind != TensorSource::Memory || source->memory.padValue)
      return def->emitOpError("is a view of a tensor that is not a kernel argument, "
                              "which the Triton target cannot read"), failure();
    return source;
  };
  auto dynamicView = [&]() {
    return def->emitOpError("is a view with dynamic sizes inside a kernel, which the "
                            "Triton target does not read yet (beyond reshapes that add or "
                            "drop unit dimensions)");
  };
  // A reshape of a dynamically shaped argument that adds or drops unit dimensions: the
  // other dimensions keep their strides.
  auto unitReshapeOfDynamic = [&](Value input, ArrayRef<ReassociationIndices> groups,
                                  bool expanding) -> FailureOr<TensorSource> {
    FailureOr<TensorSource> source = traceView(input);
    if (failed(source))
      return failure();
    ArrayRef<int64_t> wide = expanding ? shapeOf(tensor) : shapeOf(input);
    SmallVector<int64_t> strideDims(shapeOf(tensor).size(), -1);
    SmallVector<int64_t> scales(shapeOf(tensor).size(), 1);
    for (auto [narrowDim, group] : llvm::enumerate(groups)) {
      int64_t kept = -1;
      for (int64_t wideDim : group)
        if (wide[wideDim] != 1) {
          if (kept != -1)
            return dynamicView(), failure();
          kept = wideDim;
        }
      if (expanding) {
        if (kept != -1) {
          strideDims[kept] = source->memory.strideDims[narrowDim];
          scales[kept] = source->memory.strideScale(narrowDim);
        }
      } else if (kept != -1) {
        strideDims[narrowDim] = source->memory.strideDims[kept];
        scales[narrowDim] = source->memory.strideScale(kept);
      }
    }
    source->memory.strideDims = strideDims;
    source->memory.strideScales = scales;
    source->memory.strides.assign(strideDims.size(), ShapedType::kDynamic);
    return source;
  };
  // A slice of a kernel argument whose sizes or offsets are only known at run time
  // (dynamic shapes): its offsets become offset terms, its dimensions keep their
  // source's strides times the slice's (static) strides.
  auto dynamicSlice = [&](tensor::ExtractSliceOp slice) -> FailureOr<TensorSource> {
    FailureOr<TensorSource> source = traceView(slice.getSource());
    if (failed(source))
      return failure();
    if (ShapedType::isDynamicShape(slice.getStaticStrides()))
      return slice.emitOpError("has strides known only at run time, which the Triton "
                               "target does not read"), failure();
    MemoryOperand &memory = source->memory;
    bool dynamicStrides = memory.isDynamic();
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<int64_t> strides, strideDims, scales;
    for (auto [i, offset] : llvm::enumerate(slice.getMixedOffsets())) {
      int64_t sliceStride = slice.getStaticStrides()[i];
      if (dynamicStrides) {
        int64_t argumentDim = memory.strideDims[i];
        int64_t scale = memory.strideScale(i);
        if (argumentDim >= 0 && !isConstantIntValue(offset, 0))
          memory.offsetTerms.push_back({offset, ShapedType::kDynamic, argumentDim, scale});
        if (!dropped.test(i)) {
          strideDims.push_back(argumentDim);
          scales.push_back(scale * sliceStride);
        }
        continue;
      }
      int64_t stride = memory.strides[i];
      if (std::optional<int64_t> constant = getConstantIntValue(offset))
        memory.offset += *constant * stride;
      else
        memory.offsetTerms.push_back({offset, stride, -1, 1});
      if (!dropped.test(i))
        strides.push_back(stride * sliceStride);
    }
    if (dynamicStrides) {
      memory.strideDims = strideDims;
      memory.strideScales = scales;
      memory.strides.assign(strideDims.size(), ShapedType::kDynamic);
    } else {
      memory.strides = strides;
    }
    return source;
  };
  auto isDynamicView = [&](Value input) {
    return !cast<RankedTensorType>(tensor.getType()).hasStaticShape() ||
           !cast<RankedTensorType>(input.getType()).hasStaticShape();
  };
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def); expand && isDynamicView(expand.getSrc()))
    return unitReshapeOfDynamic(expand.getSrc(), expand.getReassociationIndices(), true);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def);
      collapse && isDynamicView(collapse.getSrc()))
    return unitReshapeOfDynamic(collapse.getSrc(), collapse.getReassociationIndices(), false);
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def);
      slice && (isDynamicView(slice.getSource()) ||
                ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
                ShapedType::isDynamicShape(slice.getStaticSizes())))
    return dynamicSlice(slice);
  if (isa<tensor::PadOp>(def)) {
    Value input = def->getOperand(0);
    if (isDynamicView(input))
      return dynamicView(), failure();
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    FailureOr<TensorSource> source = traceView(expand.getSrc());
    if (failed(source))
      return failure();
    // Each source dimension splits into row-major parts of its stride.
    ArrayRef<int64_t> shape = shapeOf(tensor);
    SmallVector<int64_t> strides(shape.size());
    for (auto [sourceDim, group] : llvm::enumerate(expand.getReassociationIndices())) {
      int64_t stride = source->memory.strides[sourceDim];
      for (int64_t dim : llvm::reverse(group)) {
        strides[dim] = stride;
        stride *= shape[dim];
      }
    }
    source->memory.strides = strides;
    return source;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    FailureOr<TensorSource> source = traceView(collapse.getSrc());
    if (failed(source))
      return failure();
    // A group collapses when its dimensions are nested in memory (ignoring size 1).
    ArrayRef<int64_t> shape = shapeOf(collapse.getSrc());
    SmallVector<int64_t> strides;
    for (ReassociationIndices group : collapse.getReassociationIndices()) {
      std::optional<int64_t> inner;
      int64_t expected = 0;
      for (int64_t dim : llvm::reverse(group)) {
        if (shape[dim] == 1)
          continue;
        if (inner && source->memory.strides[dim] != expected)
          return collapse.emitOpError("merges dimensions that are not nested in memory, "
                                      "which the Triton target cannot read"), failure();
        if (!inner)
          inner = source->memory.strides[dim];
        expected = source->memory.strides[dim] * shape[dim];
      }
      strides.push_back(inner.value_or(1));
    }
    source->memory.strides = strides;
    return source;
  }
  if (auto pad = dyn_cast<tensor::PadOp>(def)) {
    FailureOr<TensorSource> source = traceView(pad.getSource());
    if (failed(source))
      return failure();
    Value padValue = pad.getConstantPaddingValue();
    if (!padValue || ShapedType::isDynamicShape(pad.getStaticLow()) ||
        ShapedType::isDynamicShape(pad.getStaticHigh()))
      return pad.emitOpError("is not a static pad with a constant, which the Triton target "
                             "needs"), failure();
    if (!cast<RankedTensorType>(pad.getSource().getType()).hasStaticShape())
      return pad.emitOpError("pads a tensor of dynamic sizes, which the Triton target "
                             "does not read yet"), failure();
    source->memory.padLow.assign(pad.getStaticLow().begin(), pad.getStaticLow().end());
    ArrayRef<int64_t> unpadded = shapeOf(pad.getSource());
    source->memory.unpaddedSizes.assign(unpadded.begin(), unpadded.end());
    source->memory.padValue = padValue;
    return source;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    FailureOr<TensorSource> padded = traceTensor(slice.getSource());
    if (failed(padded))
      return failure();
    if (padded->kind == TensorSource::Memory && padded->memory.padValue)
      return slicePadded(slice, *padded);
    FailureOr<TensorSource> source = traceView(slice.getSource());
    if (failed(source))
      return failure();
    if (ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
        ShapedType::isDynamicShape(slice.getStaticSizes()) ||
        ShapedType::isDynamicShape(slice.getStaticStrides()))
      return slice.emitOpError("is not a static slice of a kernel argument, which the "
                               "Triton target needs"), failure();
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    MemoryOperand memory = source->memory;
    SmallVector<int64_t> strides;
    for (auto [i, offset] : llvm::enumerate(slice.getStaticOffsets())) {
      memory.offset += offset * source->memory.strides[i];
      if (!dropped.test(i))
        strides.push_back(source->memory.strides[i] * slice.getStaticStrides()[i]);
    }
    memory.strides = strides;
    source->memory = memory;
    return source;
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
    if (Value scalar = scalarFillValue(generic)) {
      TensorSource source{TensorSource::ScalarFill};
      source.scalar = scalar;
      return source;
    }
    TensorSource source{TensorSource::Computed};
    source.producer = generic;
    source.resultNumber = cast<OpResult>(tensor).getResultNumber();
    source.resultDims = llvm::to_vector(llvm::seq<int64_t>(0, shapeOf(tensor).size()));
    return source;
  }
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    TensorSource source{TensorSource::ScalarFill};
    source.scalar = fill.getInputs()[0];
    return source;
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(def)) {
    // Uninitialized contents, where any value is a valid refinement: zeros. (torch-mlir's
    // adaptive max pooling reads one as its initial indices; Dyno's decomposition
    // replaces every index that could come from it.)
    OpBuilder builder(empty);
    TensorSource source{TensorSource::ScalarFill};
    source.scalar = arith::ConstantOp::create(
        builder, empty.getLoc(), cast<TypedAttr>(builder.getZeroAttr(
                                     empty.getType().getElementType())));
    return source;
  }
  return def->emitOpError("makes a tensor that the Triton target cannot read in a kernel"),
         failure();
}

namespace {
/// Where a dynamic loop extent comes from: a kernel argument's dimension, or a scalar
/// (an index argument or value giving a `tensor.empty` its size, with dim -1).
using SizeKey = std::pair<Value, int64_t>;

std::optional<SizeKey> sizeKey(Value tensor, int64_t dim) {
  if (isa<BlockArgument>(tensor))
    return SizeKey{tensor, dim};
  if (auto empty = tensor.getDefiningOp<tensor::EmptyOp>()) {
    Value size = empty.getDynamicSize(dim);
    if (auto dimOp = size.getDefiningOp<tensor::DimOp>())
      if (std::optional<int64_t> index = dimOp.getConstantIndex())
        return sizeKey(dimOp.getSource(), *index);
    return SizeKey{size, -1};
  }
  if (auto dps = tensor.getDefiningOp<DestinationStyleOpInterface>())
    return sizeKey(dps.getTiedOpOperand(cast<OpResult>(tensor))->get(), dim);
  return std::nullopt;
}

/// The sources of loop `loop`'s extent among `op`'s operands (all equal at run time).
SmallVector<SizeKey> sizeKeys(linalg::GenericOp op, unsigned loop) {
  SmallVector<SizeKey> keys;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type)
      continue;
    for (auto [dim, expr] : llvm::enumerate(op.getMatchingIndexingMap(&operand).getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(expr);
          d && d.getPosition() == loop && type.isDynamicDim(dim))
        if (std::optional<SizeKey> key = sizeKey(operand.get(), dim))
          keys.push_back(*key);
  }
  return keys;
}

/// Union-find over loops (and slot placeholders), each class with one extent. A dynamic
/// extent also keeps where its size comes from, so that loops that are not linked
/// through data share a slot only when their sizes provably agree.
class LoopClasses {
public:
  unsigned add(int64_t extent, SmallVector<SizeKey> keys = {}) {
    parent.push_back(parent.size());
    extents.push_back(extent);
    sources.push_back(std::move(keys));
    return parent.size() - 1;
  }
  unsigned find(unsigned node) {
    while (parent[node] != node)
      node = parent[node] = parent[parent[node]];
    return node;
  }
  /// Links two loops that run over the same index (a producer's result read by its
  /// consumer): static extents must agree, a dynamic one takes the other's.
  bool unite(unsigned a, unsigned b) {
    a = find(a);
    b = find(b);
    if (a == b)
      return true;
    int64_t ea = extents[a], eb = extents[b];
    if (!ShapedType::isDynamic(ea) && !ShapedType::isDynamic(eb) && ea != eb)
      return false;
    if (ShapedType::isDynamic(ea))
      std::swap(a, b);
    parent[b] = a;
    sources[a].append(sources[b]);
    return true;
  }
  /// Whether loops `a` and `b`, not linked through data, provably have one extent.
  bool provablySame(unsigned a, unsigned b) {
    a = find(a);
    b = find(b);
    if (a == b)
      return true;
    if (!ShapedType::isDynamic(extents[a]) || !ShapedType::isDynamic(extents[b]))
      return extents[a] == extents[b];
    return llvm::any_of(sources[a], [&](const SizeKey &key) {
      return llvm::is_contained(sources[b], key);
    });
  }
  int64_t extent(unsigned node) { return extents[find(node)]; }

private:
  SmallVector<unsigned> parent;
  SmallVector<int64_t> extents;
  SmallVector<SmallVector<SizeKey>> sources;
};
} // namespace

static int64_t product(ArrayRef<int64_t> extents) {
  int64_t numel = 1;
  for (int64_t extent : extents) {
    if (ShapedType::isDynamic(extent))
      return ShapedType::kDynamic;
    numel *= extent;
  }
  return numel;
}

int64_t IterationSpace::xNumel() const { return product(xExtents); }

int64_t IterationSpace::rNumel() const { return product(rExtents); }

unsigned IterationSpace::slot(linalg::GenericOp op, unsigned loop) const {
  return slots.lookup({op.getOperation(), loop});
}

bool IterationSpace::usesRSlots(linalg::GenericOp op) const {
  for (unsigned loop = 0, e = op.getNumLoops(); loop < e; ++loop)
    if (isRSlot(slot(op, loop)))
      return true;
  return false;
}

FailureOr<IterationSpace> IterationSpace::build(func::FuncOp kernel) {
  IterationSpace space;
  Block &body = kernel.getBody().front();
  auto returned = cast<func::ReturnOp>(body.getTerminator());
  for (Operation &op : body) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic)
      continue;
    bool isReturned = llvm::any_of(generic->getResults(), [&](Value result) {
      return llvm::is_contained(returned.getOperands(), result);
    });
    if (!scalarFillValue(generic) || isReturned)
      space.computeOps.push_back(generic);
  }
  if (space.computeOps.empty())
    return kernel.emitOpError("computes nothing the Triton target can store"), failure();

  LoopClasses classes;
  DenseMap<std::pair<Operation *, unsigned>, unsigned> nodes;
  for (linalg::GenericOp op : space.computeOps) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    for (auto [loop, extent] : llvm::enumerate(ranges))
      nodes[{op.getOperation(), loop}] =
          ShapedType::isDynamic(extent) ? classes.add(extent, sizeKeys(op, loop))
                                        : classes.add(extent);
  }
  auto node = [&](linalg::GenericOp op, unsigned loop) { return nodes[{op.getOperation(), loop}]; };

  // Link loops through intermediate tensors.
  for (linalg::GenericOp op : space.computeOps) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!op.payloadUsesValueFromOperand(&operand) ||
          !isa<RankedTensorType>(operand.get().getType()))
        continue;
      FailureOr<TensorSource> source = traceTensor(operand.get());
      if (failed(source))
        return failure();
      if (source->kind != TensorSource::Computed)
        continue;
      linalg::GenericOp producer = source->producer;
      if (!llvm::is_contained(space.computeOps, producer))
        return op.emitOpError("reads a tensor the Triton target does not compute"), failure();
      AffineMap consumerMap = op.getMatchingIndexingMap(&operand);
      AffineMap producerMap =
          producer.getIndexingMapMatchingResult(producer->getResult(source->resultNumber));
      ArrayRef<int64_t> shape = cast<RankedTensorType>(operand.get().getType()).getShape();
      for (unsigned dim = 0; dim < shape.size(); ++dim) {
        if (source->resultDims[dim] < 0)
          continue; // a unit dimension a reshape inserted
        auto producerDim =
            dyn_cast<AffineDimExpr>(producerMap.getResult(source->resultDims[dim]));
        if (!producerDim)
          return producer.emitOpError("writes its result through a non-permutation map, "
                                      "which the Triton target does not support"), failure();
        auto consumerDim = dyn_cast<AffineDimExpr>(consumerMap.getResult(dim));
        if (!consumerDim) {
          if (shape[dim] == 1)
            continue;
          return op.emitOpError("reads an intermediate tensor through an index expression, "
                                "which the Triton target does not support"), failure();
        }
        if (!classes.unite(node(op, consumerDim.getPosition()),
                           node(producer, producerDim.getPosition())))
          return op.emitOpError("links loops of different extents"), failure();
      }
    }
  }

  // The anchor's loops define the slots: the first reduction's parallel loops (X) and
  // reduced loops (R), or, in a kernel without reductions, the largest op's loops (X).
  linalg::GenericOp anchor;
  for (linalg::GenericOp op : space.computeOps)
    if (op.getNumReductionLoops()) {
      anchor = op;
      break;
    }
  if (!anchor) {
    int64_t largest = -1;
    for (linalg::GenericOp op : space.computeOps) {
      int64_t iterations = 1;
      for (int64_t extent : op.getStaticLoopRanges())
        iterations *= ShapedType::isDynamic(extent) ? 64 : extent; // a guess for sizes
      if (iterations >= largest) {
        largest = iterations;
        anchor = op;
      }
    }
  }
  SmallVector<unsigned> xSlotNodes, rSlotNodes;
  SmallVector<int64_t> anchorRanges = anchor.getStaticLoopRanges();
  space.anchorOp = anchor;
  SmallVector<unsigned> xLoops, rLoops;
  for (auto [loop, iterator] : llvm::enumerate(anchor.getIteratorTypesArray())) {
    unsigned slotNode = classes.add(anchorRanges[loop]);
    classes.unite(slotNode, node(anchor, loop));
    // A loop linked to a static one elsewhere has that static extent.
    int64_t extent = classes.extent(slotNode);
    if ((iterator == utils::IteratorType::reduction)) {
      rSlotNodes.push_back(slotNode);
      space.rExtents.push_back(extent);
      rLoops.push_back(loop);
    } else {
      xSlotNodes.push_back(slotNode);
      space.xExtents.push_back(extent);
      xLoops.push_back(loop);
    }
  }
  space.anchorLoops = xLoops;
  space.anchorLoops.append(rLoops);
  SmallVector<unsigned> allSlotNodes(xSlotNodes);
  allSlotNodes.append(rSlotNodes);
  auto slotOfClass = [&](unsigned loopNode) -> std::optional<unsigned> {
    std::optional<unsigned> found;
    for (auto [index, slotNode] : llvm::enumerate(allSlotNodes))
      if (classes.find(slotNode) == classes.find(loopNode)) {
        if (found)
          return std::nullopt;
        found = index;
      }
    return found;
  };
  for (unsigned a = 0; a < allSlotNodes.size(); ++a)
    for (unsigned b = a + 1; b < allSlotNodes.size(); ++b)
      if (classes.find(allSlotNodes[a]) == classes.find(allSlotNodes[b]))
        return anchor.emitOpError("is read transposed by a kernel op; the Triton target "
                                  "cannot order its index space"), failure();

  // Loops not linked to the anchor take the slot at their position, when the op's loops
  // line up with the slots (X then R) and the extents agree.
  for (linalg::GenericOp op : space.computeOps) {
    unsigned numLoops = op.getNumLoops();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    for (unsigned loop = 0; loop < numLoops; ++loop) {
      if (slotOfClass(node(op, loop)))
        continue;
      if (ranges[loop] == 1)
        continue; // a unit loop of its own: index 0
      bool lined = numLoops == allSlotNodes.size() || numLoops == xSlotNodes.size();
      if (!lined || !classes.provablySame(allSlotNodes[loop], node(op, loop)) ||
          !classes.unite(allSlotNodes[loop], node(op, loop)))
        return op.emitOpError("has loop ") << loop << " that the Triton target cannot place "
               << "in the kernel's index space", failure();
    }
  }
  for (linalg::GenericOp op : space.computeOps) {
    SmallVector<bool> used(allSlotNodes.size(), false);
    for (auto [loop, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
      std::optional<unsigned> slot = slotOfClass(node(op, loop));
      if (!slot && classes.extent(node(op, loop)) == 1 &&
          iterator == utils::IteratorType::parallel) {
        space.slots[{op.getOperation(), static_cast<unsigned>(loop)}] = kUnitSlot;
        continue;
      }
      if (!slot || used[*slot])
        return op.emitOpError("has loop ") << loop << " that the Triton target cannot place "
               << "in the kernel's index space", failure();
      used[*slot] = true;
      bool reduced = (iterator == utils::IteratorType::reduction);
      if (op.getNumReductionLoops() && reduced != space.isRSlot(*slot))
        return op.emitOpError("reduces over other dimensions than the kernel's first "
                              "reduction; the Triton target needs one reduced extent per "
                              "kernel"), failure();
      space.slots[{op.getOperation(), static_cast<unsigned>(loop)}] = *slot;
    }
    if (op.getNumReductionLoops() &&
        llvm::count(used, true) != static_cast<long>(allSlotNodes.size()))
      return op.emitOpError("reduces a different index space than the kernel's first "
                            "reduction"), failure();
  }
  return space;
}

namespace {

/// Whether a generic of `kernel` gathers (`tensor.extract` in its body) from a tensor the
/// kernel computes.
bool gathersFromComputed(func::FuncOp kernel) {
  return kernel
      .walk([&](tensor::ExtractOp extract) {
        if (!extract->getParentOfType<linalg::GenericOp>())
          return WalkResult::advance();
        Value source = extract.getTensor();
        while (Operation *def = source.getDefiningOp()) {
          if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractSliceOp,
                   tensor::CastOp>(def))
            return WalkResult::interrupt();
          source = def->getOperand(0);
        }
        return WalkResult::advance();
      })
      .wasInterrupted();
}

} // namespace

bool mlir::dyno::fitsOneIterationSpace(func::FuncOp kernel) {
  ScopedDiagnosticHandler silence(kernel.getContext(), [](Diagnostic &) { return success(); });
  return !gathersFromComputed(kernel) && succeeded(IterationSpace::build(kernel));
}
