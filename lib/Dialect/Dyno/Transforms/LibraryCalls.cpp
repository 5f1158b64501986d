//===- LibraryCalls.cpp - Contractions as library calls --------*- C++ -*-===//
//
// Part of kernel formation (dyno-form-kernels): matmuls, batched matmuls and 2-D
// convolutions (plain, grouped and depthwise) become dyno.contraction where a library
// (cuBLAS/cuDNN, oneDNN) computes exactly the same thing.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/LibraryCalls.h"
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/LowPrecisionFloats.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::dyno;

/// Library calls take any sizes (the runtime passes shapes along), but one float type.
static bool hasSameFloatOperands(Operation *op) {
  Type elementType;
  for (Type type : op->getOperandTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !isa<FloatType>(tensor.getElementType()))
      return false;
    if (elementType && elementType != tensor.getElementType())
      return false;
    elementType = tensor.getElementType();
  }
  return true;
}

static bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// The per-channel bias that seeds a convolution's `init` (how torch-mlir adds a
/// convolution's bias): a broadcast of a vector along the channel dimension of an NCHW
/// tensor, or of a [groups, channels per group] matrix along dims 1 and 2 of a grouped
/// convolution's [n, g, f/g, h, w] tensor. A linalg.broadcast, or a linalg.generic
/// that yields the element (widened from a low precision or not: bf16 biases). Returns
/// the vector (or matrix); null otherwise.
static Value matchChannelBias(Value init) {
  auto initType = cast<RankedTensorType>(init.getType());
  int64_t channelDims = initType.getRank() - 3;
  if (auto broadcast = init.getDefiningOp<linalg::BroadcastOp>()) {
    auto inputType = cast<RankedTensorType>(broadcast.getInput().getType());
    SmallVector<int64_t> others = {0, channelDims + 1, channelDims + 2};
    if (inputType.getRank() == channelDims && broadcast.getDimensions() == ArrayRef(others))
      return broadcast.getInput();
    return {};
  }
  auto generic = init.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0)
    return {};
  Value input = generic.getDpsInputs()[0];
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  if (!inputType || inputType.getRank() != channelDims)
    return {};
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  MLIRContext *ctx = generic.getContext();
  SmallVector<AffineExpr> channels;
  for (int64_t dim = 1; dim <= channelDims; ++dim)
    channels.push_back(getAffineDimExpr(dim, ctx));
  if (maps[0] != AffineMap::get(initType.getRank(), 0, channels, ctx) ||
      !maps[1].isIdentity())
    return {};
  Block *body = generic.getBody();
  Value yielded = body->getTerminator()->getOperand(0);
  if (auto ext = yielded.getDefiningOp<arith::ExtFOp>())
    yielded = body->getOperations().size() == 2 ? ext.getIn() : Value();
  return yielded == body->getArgument(0) ? input : Value();
}

/// `value` with the dims of each group of `reassociation` merged: the source of an
/// expand_shape that split them so, or a new tensor.collapse_shape.
static Value collapsed(OpBuilder &builder, Location loc, Value value,
                       ArrayRef<ReassociationIndices> reassociation) {
  if (auto expand = value.getDefiningOp<tensor::ExpandShapeOp>())
    if (expand.getReassociationIndices() == reassociation)
      return expand.getSrc();
  return tensor::CollapseShapeOp::create(builder, loc, value, reassociation);
}

/// The zero padding of a convolution's input (rank 4, or 5 for a grouped convolution;
/// the last two dims are spatial): a tensor.pad of zeros, the same before and after, of
/// the spatial dims only. Returns the unpadded source and sets `padding`; otherwise
/// `input` itself with no padding.
static Value withoutSpatialPadding(Value input, SmallVector<int64_t> &padding) {
  padding = {0, 0};
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad)
    return input;
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  Value padValue = pad.getConstantPaddingValue();
  size_t rank = low.size();
  if (!padValue || !matchPattern(padValue, m_AnyZeroFloat()) || low != high ||
      llvm::any_of(low.drop_back(2), [](int64_t size) { return size != 0; }) ||
      llvm::any_of(low.take_back(2), ShapedType::isDynamic))
    return input;
  padding = {low[rank - 2], low[rank - 1]};
  return pad.getSource();
}

/// A bias broadcast (the vector read through `biasMap`, an identity output) whose body
/// rounds a float32 vector through the low precision, `extf(truncf(x))`: autocast's
/// cast of a float32 bias, which dyno-fuse-elementwise folded into the broadcast.
/// Returns the rounded vector computed on its own (a small kernel), for a low-precision
/// library call to take as its accumulator (it rounds nothing else); null otherwise.
static Value roundedBiasVector(Value init, AffineMap biasMap, Type lowPrecision,
                               OpBuilder &builder) {
  auto generic = init.getDefiningOp<linalg::GenericOp>();
  if (!lowPrecision || !generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumResults() != 1 || generic.getNumReductionLoops() != 0)
    return {};
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[0] != biasMap || !maps[1].isIdentity())
    return {};
  Block *body = generic.getBody();
  auto ext = body->getTerminator()->getOperand(0).getDefiningOp<arith::ExtFOp>();
  auto trunc = ext ? ext.getIn().getDefiningOp<arith::TruncFOp>() : nullptr;
  if (!trunc || body->getOperations().size() != 3 ||
      trunc.getIn() != body->getArgument(0) || trunc.getType() != lowPrecision)
    return {};
  return castTensorElements(builder, generic.getLoc(), generic.getDpsInputs()[0],
                            lowPrecision);
}

/// A bf16/f16 contraction as torch-mlir writes it: its inputs in the low precision and
/// an f32 accumulator. Returns the low-precision
/// type and, in `inputs`, the low-precision tensors; the library computes the same
/// (f32 accumulation, one rounding at the end).
static Type matchLowPrecisionContraction(linalg::LinalgOp op, SmallVector<Value> &inputs) {
  Type lowPrecision;
  for (Value source : op.getDpsInputs()) {
    // Operands that dyno-widen-low-precision-floats narrowed (only where the product is
    // rounded anyway), or torch-mlir's own: never a product the program reads in f32.
    if (!isLowPrecisionFloat(getElementTypeOrSelf(source.getType())))
      return {};
    Type element = getElementTypeOrSelf(source.getType());
    if (lowPrecision && element != lowPrecision)
      return {};
    lowPrecision = element;
    inputs.push_back(source);
  }
  if (!getElementTypeOrSelf(op->getResult(0).getType()).isF32())
    return {};
  return lowPrecision;
}

/// The truncf that `generic` yields when it maps its one input elementwise (no
/// reduction, an identity output map, the input's map the identity or, with
/// `transposed`, any permutation); null otherwise.
static arith::TruncFOp yieldedTruncation(linalg::GenericOp generic, bool transposed = false) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0)
    return {};
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!maps[1].isIdentity() || !(transposed ? maps[0].isPermutation() : maps[0].isIdentity()))
    return {};
  return dyn_cast_or_null<arith::TruncFOp>(
      generic.getBody()->getTerminator()->getOperand(0).getDefiningOp());
}

/// Whether `generic` only rounds its one input back to the type it came in:
/// `truncf(extf(x))` elementwise.
static bool isRoundTrip(linalg::GenericOp generic) {
  arith::TruncFOp trunc = yieldedTruncation(generic);
  auto ext = trunc ? trunc.getIn().getDefiningOp<arith::ExtFOp>() : nullptr;
  Value input = generic.getBody()->getArgument(0);
  return ext && ext.getIn() == input && trunc.getType() == input.getType();
}

/// Whether `generic` only rounds its one input to a narrower float: `truncf(x)`
/// elementwise, maybe written transposed.
static bool isRounding(linalg::GenericOp generic) {
  arith::TruncFOp trunc = yieldedTruncation(generic, /*transposed=*/true);
  return trunc && trunc.getIn() == generic.getBody()->getArgument(0) &&
         generic.getBody()->getOperations().size() == 2;
}

/// Replaces the f32 `wide` by the library's low-precision result `narrow`: a
/// linalg.generic that reads it widens each element in its body, and reshapes and slices
/// are applied to `narrow` (host views of the library's result), so no kernel of its own writes an f32 copy (a consumer that only
/// rounds it back reads `narrow` itself); any other user reads one widened tensor.
static void readWidened(Value wide, Value narrow, OpBuilder &builder) {
  Type narrowElement = getElementTypeOrSelf(narrow.getType());
  Value widened;
  for (OpOperand &use : llvm::make_early_inc_range(wide.getUses())) {
    Operation *user = use.getOwner();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractSliceOp>(user) &&
        use.getOperandNumber() == 0) {
      OpBuilder reshapeBuilder(user);
      Operation *reshape = reshapeBuilder.clone(*user);
      reshape->setOperand(0, narrow);
      reshape->getResult(0).setType(
          cast<RankedTensorType>(user->getResult(0).getType()).clone(narrowElement));
      readWidened(user->getResult(0), reshape->getResult(0), reshapeBuilder);
      if (user->use_empty())
        user->erase();
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (generic && generic.isDpsInput(&use)) {
      BlockArgument argument = generic.getMatchingBlockArgument(&use);
      use.set(narrow);
      argument.setType(narrowElement);
      OpBuilder bodyBuilder = OpBuilder::atBlockBegin(generic.getBody());
      Value element = arith::ExtFOp::create(bodyBuilder, generic.getLoc(),
                                            builder.getF32Type(), argument);
      argument.replaceAllUsesExcept(element, element.getDefiningOp());
      if (isRoundTrip(generic)) {
        generic.getResult(0).replaceAllUsesWith(narrow);
        generic.erase();
      }
      continue;
    }
    if (!widened) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfterValue(narrow);
      widened = castTensorElements(builder, wide.getLoc(), narrow, builder.getF32Type());
    }
    use.set(widened);
  }
}

/// `convolved + bias[c]` over a convolution's [n, c, h, w] result, in `element` (the
/// convolution's accumulator type: a bf16 result and bias are widened in the body):
/// the bias a library convolution left out, added by the kernels that read its result.
/// `rounding` (optional): the result's only reader, which only rounds it to bf16/f16
/// (as eager's add is rounded), maybe transposing it (the channels-last kernel after a
/// convolution): the add takes its place, rounds in its own body and writes in its
/// order, one kernel and no f32 tensor (ViT's patch embedding).
static Value addChannelBias(OpBuilder &builder, Location loc, Value convolved, Value bias,
                            Type element, linalg::GenericOp rounding) {
  MLIRContext *context = builder.getContext();
  AffineMap read = AffineMap::getMultiDimIdentityMap(4, context);
  Value init;
  if (rounding) {
    read = rounding.getIndexingMapsArray()[0];
    init = rounding.getDpsInits()[0];
  } else {
    init = tensor::EmptyOp::create(builder, loc,
                                   tensor::getMixedSizes(builder, loc, convolved), element);
  }
  AffineMap channel = AffineMap::get(4, 0, {read.getResult(1)}, context);
  AffineMap write = AffineMap::getMultiDimIdentityMap(4, context);
  Type resultElement = getElementTypeOrSelf(init.getType());
  SmallVector<utils::IteratorType> parallel(4, utils::IteratorType::parallel);
  auto sum = linalg::GenericOp::create(
      builder, loc, TypeRange{init.getType()}, ValueRange{convolved, bias}, ValueRange{init},
      ArrayRef<AffineMap>{read, channel, write}, parallel,
      [&](OpBuilder &body, Location bodyLoc, ValueRange values) {
        auto widened = [&](Value value) -> Value {
          return value.getType() == element
                     ? value
                     : arith::ExtFOp::create(body, bodyLoc, element, value).getResult();
        };
        Value added = arith::AddFOp::create(body, bodyLoc, widened(values[0]),
                                            widened(values[1]));
        if (resultElement != element)
          added = arith::TruncFOp::create(body, bodyLoc, resultElement, added);
        linalg::YieldOp::create(body, bodyLoc, added);
      });
  return sum.getResult(0);
}

bool mlir::dyno::isLibraryContraction(Operation *op) {
  return isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp,
             linalg::Conv2DNgchwGfchwOp, linalg::DepthwiseConv2DNchwChwOp>(op);
}

void mlir::dyno::formLibraryCalls(func::FuncOp func, bool convolutionBiasInLibrary) {
  SmallVector<Operation *> candidates;
  func.walk([&](Operation *op) {
    if (isLibraryContraction(op))
      candidates.push_back(op);
  });
  for (Operation *op : candidates) {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    OpBuilder builder(op);
    Value init = linalgOp.getDpsInits()[0];
    Type resultType = op->getResult(0).getType();
    SmallVector<Value> args;
    Type lowPrecision = matchLowPrecisionContraction(linalgOp, args);
    if (lowPrecision)
      resultType = cast<RankedTensorType>(resultType).clone(lowPrecision);
    else if (hasSameFloatOperands(op))
      args = llvm::to_vector(linalgOp.getDpsInputs());
    else
      continue;
    // A low-precision call adds an accumulator (a bias) in its own precision.
    auto accumulator = [&](Value value) -> Value {
      if (!lowPrecision)
        return value;
      // addmm's bias, repeated on every row (dyno-widen-low-precision-floats).
      if (Value row = broadcastRowBiasSource(value))
        value = row;
      Value source = getElementTypeOrSelf(value.getType()) == lowPrecision
                         ? value
                         : widenedLowPrecisionSource(value);
      return source && getElementTypeOrSelf(source.getType()) == lowPrecision ? source
                                                                              : Value();
    };
    ContractionOp contractionOp;
    // What replaces the op's result (the call's, unless set below), and whether its
    // readers widen it (a low-precision result).
    Value result;
    bool readersWiden = bool(lowPrecision);
    // Generic-form IR spells out the default indexing maps; only those mean A @ B.
    if (auto matmul = dyn_cast<linalg::MatmulOp>(op)) {
      if (matmul.getIndexingMapsArray() !=
          linalg::MatmulOp::getDefaultIndexingMaps(op->getContext()))
        continue;
      if (!isZeroFill(init)) {
        MLIRContext *context = op->getContext();
        AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(1, context)}, context);
        Value rounded = roundedBiasVector(init, row, lowPrecision, builder);
        // An f32 addmm's bias (dyno-row-bias-into-matmuls): the vector, not its rows.
        Value vector = lowPrecision ? Value() : broadcastRowBiasSource(init);
        if (vector && getElementTypeOrSelf(vector.getType()) == getElementTypeOrSelf(init.getType()))
          rounded = vector;
        if (!(init = rounded ? rounded : accumulator(init)))
          continue;
        args.push_back(init);
      }
      contractionOp = ContractionOp::create(builder, op->getLoc(), resultType, "matmul", args,
                                  nullptr, nullptr, nullptr, nullptr, nullptr);
    } else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op)) {
      if (bmm.getIndexingMapsArray() !=
          linalg::BatchMatmulOp::getDefaultIndexingMaps(op->getContext()))
        continue;
      if (!isZeroFill(init)) {
        if (!(init = accumulator(init)))
          continue;
        args.push_back(init);
      }
      contractionOp = ContractionOp::create(builder, op->getLoc(), resultType, "batch_matmul", args,
                                  nullptr, nullptr, nullptr, nullptr, nullptr);
    } else {
      // conv2d's operands: X[n, c, h, w], W[f, c/groups, kh, kw]. A grouped
      // convolution's [n, g, c/g, h, w] input and [g, f/g, c/g, kh, kw] filter merge
      // their group dims; a depthwise one's [c, kh, kw] filter gains a unit dim.
      Location loc = op->getLoc();
      SmallVector<int64_t> padding;
      Value input = withoutSpatialPadding(args[0], padding);
      Value filter = args[1];
      auto inputType = cast<RankedTensorType>(input.getType());
      auto resultShape = cast<RankedTensorType>(resultType);
      int64_t groups = 1;
      bool grouped = isa<linalg::Conv2DNgchwGfchwOp>(op);
      if (grouped || isa<linalg::DepthwiseConv2DNchwChwOp>(op)) {
        groups = inputType.getDimSize(1);
        if (ShapedType::isDynamic(groups) ||
            (grouped && ShapedType::isDynamic(resultShape.getDimSize(2))))
          continue;
      }
      MLIRContext *context = op->getContext();
      SmallVector<AffineExpr> channelExprs = {getAffineDimExpr(1, context)};
      if (grouped)
        channelExprs.push_back(getAffineDimExpr(2, context));
      AffineMap channel = AffineMap::get(grouped ? 5 : 4, 0, channelExprs, context);
      Value bias = roundedBiasVector(init, channel, lowPrecision, builder);
      if (!bias && !isZeroFill(init)) {
        if (!(bias = matchChannelBias(init)))
          continue;
        if (grouped)
          bias = collapsed(builder, loc, bias, {{0, 1}});
        Type biasElement = getElementTypeOrSelf(bias.getType());
        if (lowPrecision ? !(bias = accumulator(bias))
                         : biasElement != getElementTypeOrSelf(inputType))
          continue;
      } else if (bias && grouped) {
        bias = collapsed(builder, loc, bias, {{0, 1}});
      }
      if (grouped) {
        input = collapsed(builder, loc, input, {{0}, {1, 2}, {3}, {4}});
        filter = collapsed(builder, loc, filter, {{0, 1}, {2}, {3}, {4}});
      } else if (isa<linalg::DepthwiseConv2DNchwChwOp>(op)) {
        auto filterType = cast<RankedTensorType>(filter.getType());
        auto collapse = filter.getDefiningOp<tensor::CollapseShapeOp>();
        SmallVector<ReassociationIndices> unitOutputChannels = {{0, 1}, {2}, {3}};
        if (collapse && collapse.getReassociationIndices() == unitOutputChannels)
          filter = collapse.getSrc();
        else
          filter = tensor::ExpandShapeOp::create(
              builder, loc,
              RankedTensorType::get({filterType.getDimSize(0), 1, filterType.getDimSize(1),
                                     filterType.getDimSize(2)},
                                    filterType.getElementType()),
              filter, unitOutputChannels);
      }
      args = {input, filter};
      bool biasAfterCall = bias && !convolutionBiasInLibrary;
      if (bias && !biasAfterCall)
        args.push_back(bias);
      Type callType = resultShape;
      if (grouped)
        callType = RankedTensorType::get(
            {resultShape.getDimSize(0), resultShape.getDimSize(1) * resultShape.getDimSize(2),
             resultShape.getDimSize(3), resultShape.getDimSize(4)},
            resultShape.getElementType());
      auto attribute = [&](StringRef name) {
        return builder.getDenseI64ArrayAttr(llvm::to_vector(
            op->getAttrOfType<DenseIntElementsAttr>(name).getValues<int64_t>()));
      };
      contractionOp = ContractionOp::create(builder, loc, callType, "conv2d", args,
                                            attribute("strides"),
                                            builder.getDenseI64ArrayAttr(padding),
                                            attribute("dilations"),
                                            builder.getI64IntegerAttr(groups), nullptr);
      Value wide = op->getResult(0);
      result = contractionOp.getResult();
      if (biasAfterCall) {
        Type element = getElementTypeOrSelf(wide.getType());
        // Its only reader rounds it (elementwise truncf): the add rounds instead.
        auto rounding = wide.hasOneUse()
                            ? dyn_cast<linalg::GenericOp>(*wide.getUsers().begin())
                            : linalg::GenericOp();
        if (grouped || !rounding || !isRounding(rounding))
          rounding = {};
        // Where the reader is: its init may be made after the convolution.
        OpBuilder sumBuilder(rounding ? rounding.getOperation() : op);
        result = addChannelBias(sumBuilder, loc, result, bias, element, rounding);
        if (rounding) {
          rounding.getResult(0).replaceAllUsesWith(result);
          rounding.erase();
          op->erase();
          continue;
        }
      }
      if (grouped)
        result = tensor::ExpandShapeOp::create(
            builder, loc,
            cast<RankedTensorType>(wide.getType())
                .clone(getElementTypeOrSelf(result.getType())),
            result, {{0}, {1, 2}, {3}, {4}});
      // The sum is in the convolution's own (accumulator) type.
      readersWiden = lowPrecision && !biasAfterCall;
    }
    if (!result)
      result = contractionOp.getResult();
    if (readersWiden)
      readWidened(op->getResult(0), result, builder);
    else
      op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }
}

SmallVector<NamedAttribute> mlir::dyno::namedOpAttributes(Operation *op) {
  SmallVector<NamedAttribute> attributes;
  for (NamedAttribute attribute : op->getAttrs())
    if (attribute.getName() != "operandSegmentSizes")
      attributes.push_back(attribute);
  return attributes;
}

void mlir::dyno::accumulateIntoRowBias(linalg::MatmulOp matmul, RewriterBase &rewriter,
                                       bool float32) {
  auto fill = matmul.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
      !matmul->hasOneUse())
    return;
  Type operandElement = getElementTypeOrSelf(matmul.getDpsInputs()[0].getType());
  bool lowPrecision = isLowPrecisionFloat(operandElement);
  if (!(lowPrecision || (float32 && operandElement.isF32())) ||
      llvm::any_of(matmul.getDpsInputs(), [&](Value input) {
        return getElementTypeOrSelf(input.getType()) != operandElement;
      }))
    return;
  auto add = dyn_cast<linalg::GenericOp>(*matmul->user_begin());
  if (!add || add.getNumDpsInputs() != 2 || add.getNumResults() != 1 ||
      add.getNumReductionLoops() != 0 || add.getNumLoops() != 2)
    return;
  MLIRContext *context = matmul.getContext();
  AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(1, context)}, context);
  SmallVector<AffineMap> maps = add.getIndexingMapsArray();
  unsigned product = add.getDpsInputs()[0] == matmul.getResult(0) ? 0 : 1;
  if (add.getDpsInputs()[product] != matmul.getResult(0) || !maps[product].isIdentity() ||
      maps[1 - product] != row || !maps[2].isIdentity())
    return;
  Block *body = add.getBody();
  auto sum = dyn_cast<arith::AddFOp>(body->front());
  if (body->getOperations().size() != 2 || !sum ||
      body->getTerminator()->getOperand(0) != sum.getResult() ||
      !llvm::is_contained(sum->getOperands(), body->getArgument(0)) ||
      !llvm::is_contained(sum->getOperands(), body->getArgument(1)))
    return;
  Value bias = add.getDpsInputs()[1 - product];
  Value init = fill.getDpsInits()[0];
  // The bias in the operands' precision: a low-precision vector widened, or (f32) the
  // accumulator's own type.
  Value source = lowPrecision ? widenedLowPrecisionSource(bias) : bias;
  if (!source || getElementTypeOrSelf(source.getType()) != operandElement ||
      getElementTypeOrSelf(bias.getType()) != getElementTypeOrSelf(init.getType()) ||
      getElementTypeOrSelf(add.getResult(0).getType()) !=
          getElementTypeOrSelf(init.getType()))
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(matmul);
  Location loc = matmul.getLoc();
  auto broadcast = linalg::GenericOp::create(
      rewriter, loc, init.getType(), bias, init,
      SmallVector<AffineMap>{row, rewriter.getMultiDimIdentityMap(2)},
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [](OpBuilder &b, Location l, ValueRange args) { linalg::YieldOp::create(b, l, args[0]); });
  auto accumulated = linalg::MatmulOp::create(
      rewriter, loc, matmul->getResultTypes(), matmul.getDpsInputs(),
      ValueRange{broadcast.getResult(0)}, namedOpAttributes(matmul));
  rewriter.replaceOp(add, accumulated->getResults());
  rewriter.eraseOp(matmul);
}
