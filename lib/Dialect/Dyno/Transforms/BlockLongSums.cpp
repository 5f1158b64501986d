//===- BlockLongSums.cpp - Long float sums as sums of blocks ------*- C++ -*-===//
//
// A float sum accumulated element after element loses about one bit per doubling of its
// length, and more on data with a large mean (the accumulator's rounding stops being
// random once it is thousands of times the addends). Eager sums in cascades. This pass
// bounds the number of additions any accumulator sees: a sum over more than a block of
// elements becomes partial sums over blocks, then the sum of the partials (itself
// blocked again when long). See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/LowPrecisionFloats.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "dyno-block-long-sums"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOBLOCKLONGSUMS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {

/// Elements one accumulator may sum when the innermost loop is the reduction (the CPU
/// target vectorizes it into 8-64 lanes, a Triton program into RBLOCK lanes), and when
/// it is not (a column sum: every addition goes to one accumulator).
constexpr int64_t kLaneBlock = 4096;
constexpr int64_t kScalarBlock = 256;
/// The blocks of an f32 sum, whose partials are added in f64 (partialElementType): 32
/// values per AVX-512 lane in f32, or 64 in one accumulator, about as many additions as
/// eager's cascade makes in an accumulator before it combines them.
constexpr int64_t kWidenedLaneBlock = 512;
constexpr int64_t kWidenedScalarBlock = 64;
/// Times a row of symbolic length is blocked (its partials' sum once more).
constexpr int kDynamicLevels = 2;

/// The additions `out_i = out_i + v_i` of `op`'s body, one per init, when every result
/// of `op` is such a float sum (`v_i` cannot read `out_i`: `out_i` has one use).
SmallVector<arith::AddFOp> floatSums(linalg::GenericOp op) {
  SmallVector<arith::AddFOp> sums;
  Block *body = op.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument out = op.getMatchingBlockArgument(&init);
    Value yielded = yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs());
    auto add = yielded.getDefiningOp<arith::AddFOp>();
    if (!add || add->getBlock() != body || !out.hasOneUse() ||
        !llvm::is_contained(add->getOperands(), out) ||
        !isa<FloatType>(out.getType()))
      return {};
    sums.push_back(add);
  }
  return sums;
}

/// The value `op` reads at loop `loop` as the slice [offset, offset + size) of every
/// input dimension that loop indexes.
SmallVector<Value> slicedInputs(OpBuilder &b, linalg::GenericOp op, unsigned loop,
                                OpFoldResult offset, OpFoldResult size) {
  SmallVector<Value> inputs;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = cast<RankedTensorType>(input->get().getType());
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
    bool sliced = false;
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      sizes.push_back(tensor::getMixedSize(b, op.getLoc(), input->get(), dim));
      if (cast<AffineDimExpr>(expr).getPosition() != loop)
        continue;
      offsets[dim] = offset;
      sizes[dim] = size;
      sliced = true;
    }
    inputs.push_back(sliced ? tensor::ExtractSliceOp::create(b, op.getLoc(), input->get(),
                                                             offsets, sizes, strides)
                                  .getResult()
                            : input->get());
  }
  return inputs;
}

/// The type a blocked sum of `element`s adds its partials in: f64 for f32 sums. Blocks
/// bound the additions an accumulator sees, but f32 partials of 4096-element blocks
/// still added 256 values per lane in sequence and were then summed in f32: 4M values
/// in [-1, 1] summed to 4.0e-6 relative error where eager's cascade has 6.0e-7, 16M
/// values near 100 to 1.0e-6 against 3.2e-8 (issue 52). The partials themselves stay
/// f32 over short blocks (kWidenedLaneBlock): accumulating every element in f64 halved
/// the lanes and cost long rows 1.24-1.74x their time. Their sum is f64, rounded once.
Type partialElementType(Type element) {
  return element.isF32() ? Float64Type::get(element.getContext()) : element;
}

/// Clones `op`'s body into the block being built, with each `linalg.index` replaced by
/// `index(dim)`, and returns the yielded values.
SmallVector<Value> cloneBody(OpBuilder &b, linalg::GenericOp op, ValueRange arguments,
                             function_ref<Value(OpBuilder &, int64_t)> index) {
  IRMapping mapping;
  mapping.map(op.getBody()->getArguments(), arguments);
  for (Operation &inner : op.getBody()->without_terminator()) {
    if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(indexOp.getResult(), index(b, indexOp.getDim()));
      continue;
    }
    b.clone(inner, mapping);
  }
  SmallVector<Value> yielded;
  for (Value value : op.getBody()->getTerminator()->getOperands())
    yielded.push_back(mapping.lookupOrDefault(value));
  return yielded;
}

/// The loops of an op with loop `split` divided into (split, split + 1).
unsigned splitLoop(unsigned loop, unsigned split) { return loop <= split ? loop : loop + 1; }

/// The index of original loop `loop` inside an op whose loop `split` became (p, c) of
/// `chunk`: p * chunk + c for `split`, the renumbered loop's index otherwise.
Value blockedIndex(OpBuilder &b, Location loc, int64_t loop, unsigned split, int64_t chunk) {
  if (loop != split)
    return linalg::IndexOp::create(b, loc, splitLoop(loop, split));
  Value p = linalg::IndexOp::create(b, loc, split);
  Value c = linalg::IndexOp::create(b, loc, split + 1);
  Value scale = arith::ConstantIndexOp::create(b, loc, chunk);
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, p, scale), c);
}

/// An operand (of `type`, read through `map`) of an op whose loop `split` becomes
/// (split, split + 1), of `partials` x `chunk`: its map over the new loops, and the
/// shape and reassociation that expand the dimension the loop indexes (the same rank
/// when none does).
struct BlockedOperand {
  AffineMap map;
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
};

BlockedOperand blockedOperand(RankedTensorType type, AffineMap map, unsigned split,
                              int64_t partials, int64_t chunk) {
  MLIRContext *ctx = map.getContext();
  BlockedOperand blocked;
  SmallVector<AffineExpr> results;
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    int64_t next = blocked.shape.size();
    if (loop == split) {
      blocked.groups.push_back({next, next + 1});
      blocked.shape.append({partials, chunk});
      results.append({getAffineDimExpr(split, ctx), getAffineDimExpr(split + 1, ctx)});
      continue;
    }
    blocked.groups.push_back({next});
    blocked.shape.push_back(type.getDimSize(dim));
    results.push_back(getAffineDimExpr(splitLoop(loop, split), ctx));
  }
  blocked.map = AffineMap::get(map.getNumDims() + 1, 0, results, ctx);
  return blocked;
}

/// `value` (read by a blocked sum whole, its dimension `dim` split into `partials` x
/// `chunk`) in the blocks' shape: the source of a collapse_shape that already is, or an
/// all-parallel producer recomputed in the blocks' iteration space, its other users
/// reading the result collapsed back. Null when neither applies.
Value blockShaped(OpBuilder &b, Value value, unsigned dim, int64_t partials, int64_t chunk,
                  RankedTensorType blockedType, ArrayRef<ReassociationIndices> groups,
                  SmallVectorImpl<linalg::GenericOp> &worklist) {
  if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>())
    if (collapse.getSrcType() == blockedType &&
        collapse.getReassociationIndices() == SmallVector<ReassociationIndices>(groups))
      return collapse.getSrc();
  auto producer = value.getDefiningOp<linalg::GenericOp>();
  if (!producer || producer->getNumResults() != 1 || !producer.hasPureTensorSemantics() ||
      producer.getNumLoops() != producer.getNumParallelLoops() ||
      !producer.getMatchingIndexingMap(producer.getDpsInitOperand(0)).isIdentity() ||
      producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)))
    return Value();
  for (OpOperand *input : producer.getDpsInputOperands())
    if (!producer.getMatchingIndexingMap(input).isProjectedPermutation() ||
        !cast<RankedTensorType>(input->get().getType()).hasStaticShape())
      return Value();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(producer);
  Location loc = producer.getLoc();
  unsigned numLoops = producer.getNumLoops();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : producer.getDpsInputOperands()) {
    auto type = cast<RankedTensorType>(input->get().getType());
    BlockedOperand operand =
        blockedOperand(type, producer.getMatchingIndexingMap(input), dim, partials, chunk);
    Value blocked = input->get();
    if (operand.shape.size() != static_cast<size_t>(type.getRank()))
      blocked = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(operand.shape, type.getElementType()), blocked,
          operand.groups);
    inputs.push_back(blocked);
    maps.push_back(operand.map);
  }
  maps.push_back(b.getMultiDimIdentityMap(numLoops + 1));
  Value empty = tensor::EmptyOp::create(b, loc, blockedType.getShape(),
                                        blockedType.getElementType());
  SmallVector<utils::IteratorType> iterators(numLoops + 1, utils::IteratorType::parallel);
  auto blockedOp = linalg::GenericOp::create(
      b, loc, TypeRange{blockedType}, inputs, ValueRange{empty}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange arguments) {
        SmallVector<Value> yielded =
            cloneBody(nb, producer, arguments, [&](OpBuilder &ib, int64_t loop) {
              return blockedIndex(ib, nl, loop, dim, chunk);
            });
        linalg::YieldOp::create(nb, nl, yielded);
      });
  Value blocked = blockedOp.getResult(0);
  Value collapsed = tensor::CollapseShapeOp::create(b, loc, producer.getResult(0).getType(),
                                                    blocked, groups);
  producer.getResult(0).replaceAllUsesWith(collapsed);
  llvm::erase(worklist, producer);
  producer.erase();
  return blocked;
}

/// Blocks one long float sum. On success, `op` is replaced and the ops that may still
/// sum too many elements (the partials' sum, the tail) are appended to `worklist`.
LogicalResult block(linalg::GenericOp op, SmallVectorImpl<linalg::GenericOp> &worklist,
                    bool expandProducers, bool dynamicExtents,
                    DenseMap<Operation *, int> &dynamicLevels) {
  if (op.getNumReductionLoops() == 0 || !op.hasPureTensorSemantics() ||
      op.getNumDpsInits() == 0)
    return failure();
  SmallVector<arith::AddFOp> sums = floatSums(op);
  if (sums.empty())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = op.getNumLoops();
  for (OpOperand &operand : op->getOpOperands())
    if (!op.getMatchingIndexingMap(&operand).isProjectedPermutation())
      return failure();
  // Every result holds every parallel loop, in the same order: partials extend it.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (OpOperand &init : op.getDpsInitsMutable())
    if (op.getMatchingIndexingMap(&init) != outMap)
      return failure();
  if (outMap.getNumResults() != op.getNumParallelLoops())
    return failure();

  int64_t total = 1;
  SmallVector<unsigned> reductions;
  for (unsigned loop = 0; loop < numLoops; ++loop)
    if (iterators[loop] == utils::IteratorType::reduction) {
      reductions.push_back(loop);
      total = ShapedType::isDynamic(ranges[loop]) || ShapedType::isDynamic(total)
                  ? ShapedType::kDynamic
                  : total * ranges[loop];
    }
  bool lanes = iterators.back() == utils::IteratorType::reduction;
  int64_t blockSize = lanes ? kLaneBlock : kScalarBlock;
  // A row of symbolic length (one innermost reduction loop) is blocked whatever its
  // length turns out to be (a short one has no blocks, only the tail), twice at most:
  // the partials' sum of the partials' sum adds n / (512 * 4096) values. Other dynamic
  // reductions stay as they are.
  bool dynamic = ShapedType::isDynamic(total);
  if (dynamic && (!dynamicExtents || reductions.size() != 1 ||
                  reductions.front() != numLoops - 1 ||
                  dynamicLevels.lookup(op) >= kDynamicLevels))
    return failure();
  if (!dynamic && total <= 2 * blockSize)
    return failure();
  // Sums of at most two blocks are left alone (above); an f32 sum, whose partials are
  // added in f64, is cut in shorter blocks.
  if (llvm::any_of(op.getDpsInits(), [](Value init) {
        Type element = cast<RankedTensorType>(init.getType()).getElementType();
        return partialElementType(element) != element;
      }))
    blockSize = lanes ? kWidenedLaneBlock : kWidenedScalarBlock;
  // The innermost reduction loops that fit in a block, and the loop to split: `split`
  // into `partials` x `chunk` (+ a tail), chunk x inner <= block.
  int64_t inner = 1;
  unsigned split = reductions.back();
  if (!dynamic) {
    split = reductions.front();
    for (unsigned loop : llvm::reverse(reductions)) {
      if (inner * ranges[loop] > blockSize) {
        split = loop;
        break;
      }
      inner *= ranges[loop];
    }
  }
  int64_t chunk = std::max<int64_t>(1, blockSize / inner);
  // Static: the number of blocks, the elements they hold and the tail's; dynamic: the
  // same as values (kDynamic here), computed from the loop's extent.
  int64_t partials = dynamic ? ShapedType::kDynamic : ranges[split] / chunk;
  int64_t main = dynamic ? ShapedType::kDynamic : partials * chunk;
  int64_t tail = dynamic ? ShapedType::kDynamic : ranges[split] - main;
  // Reduction loops outside `split` become parallel in the partial sums too.
  SmallVector<unsigned> outer;
  for (unsigned loop : reductions)
    if (loop < split)
      outer.push_back(loop);

  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  SmallVector<OpFoldResult> extents;
  for (Range range : cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc))
    extents.push_back(range.size);
  OpFoldResult mainSize = b.getIndexAttr(main), tailSize = b.getIndexAttr(tail);
  OpFoldResult partialCount = b.getIndexAttr(partials);
  if (dynamic) {
    Value extent = getValueOrCreateConstantIndexOp(b, loc, extents[split]);
    Value chunkSize = arith::ConstantIndexOp::create(b, loc, chunk);
    Value count = arith::DivUIOp::create(b, loc, extent, chunkSize);
    Value covered = arith::MulIOp::create(b, loc, count, chunkSize);
    partialCount = count;
    mainSize = covered;
    tailSize = arith::SubIOp::create(b, loc, extent, covered).getResult();
  }
  // Stage 1 loops: the original ones with `split` as (p, c): p parallel, c reduction.
  auto newLoop = [&](unsigned loop) { return splitLoop(loop, split); };
  SmallVector<Value> inputs = slicedInputs(b, op, split, b.getIndexAttr(0), mainSize);
  SmallVector<AffineMap> maps;
  for (auto [position, input] : llvm::enumerate(op.getDpsInputOperands())) {
    auto type = cast<RankedTensorType>(inputs[position].getType());
    AffineMap map = op.getMatchingIndexingMap(input);
    auto [blockedMap, groups, shape] = blockedOperand(type, map, split, partials, chunk);
    if (shape.size() != static_cast<size_t>(type.getRank())) {
      auto blockedType = RankedTensorType::get(shape, type.getElementType());
      // Read whole (no tail): its producer may compute it in the blocks' shape.
      Value blocked;
      if (expandProducers && tail == 0) {
        unsigned dim = 0;
        for (auto [inputDim, expr] : llvm::enumerate(map.getResults()))
          if (cast<AffineDimExpr>(expr).getPosition() == split)
            dim = inputDim;
        auto slice = inputs[position].getDefiningOp<tensor::ExtractSliceOp>();
        if (slice && slice.getSource() == input->get()) {
          blocked = blockShaped(b, input->get(), dim, partials, chunk, blockedType, groups,
                                worklist);
          if (blocked && slice->use_empty())
            slice->erase();
        }
      }
      inputs[position] = blocked ? blocked
                                 : tensor::ExpandShapeOp::create(b, loc, blockedType,
                                                                 inputs[position], groups)
                                       .getResult();
    }
    maps.push_back(blockedMap);
  }
  // Partials: [result dims..., outer reduction loops..., p], from -0.0 (the identity).
  SmallVector<AffineExpr> partialResults;
  SmallVector<OpFoldResult> partialShape;
  for (AffineExpr expr : outMap.getResults()) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    partialResults.push_back(getAffineDimExpr(newLoop(loop), ctx));
    partialShape.push_back(extents[loop]);
  }
  for (unsigned loop : outer) {
    partialResults.push_back(getAffineDimExpr(loop, ctx));
    partialShape.push_back(extents[loop]);
  }
  partialResults.push_back(getAffineDimExpr(split, ctx));
  partialShape.push_back(partialCount);
  SmallVector<Value> partialInits;
  for (Value init : op.getDpsInits()) {
    Type element = cast<RankedTensorType>(init.getType()).getElementType();
    Value empty = tensor::EmptyOp::create(b, loc, partialShape, element);
    Value zero = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(element, APFloat::getZero(
                                            cast<FloatType>(element).getFloatSemantics(),
                                            /*Negative=*/true)));
    partialInits.push_back(
        linalg::FillOp::create(b, loc, zero, empty)->getResult(0));
    maps.push_back(AffineMap::get(numLoops + 1, 0, partialResults, ctx));
  }
  SmallVector<utils::IteratorType> stage1Iterators;
  for (unsigned loop = 0; loop < numLoops; ++loop) {
    bool parallel = iterators[loop] == utils::IteratorType::parallel ||
                    llvm::is_contained(outer, loop) || loop == split;
    stage1Iterators.push_back(parallel ? utils::IteratorType::parallel
                                       : utils::IteratorType::reduction);
    if (loop == split)
      stage1Iterators.push_back(utils::IteratorType::reduction);
  }
  auto stage1 = linalg::GenericOp::create(
      b, loc, ValueRange(partialInits).getTypes(), inputs, partialInits, maps,
      stage1Iterators, [&](OpBuilder &nb, Location nl, ValueRange arguments) {
        SmallVector<Value> yielded = cloneBody(
            nb, op, arguments,
            [&](OpBuilder &ib, int64_t dim) { return blockedIndex(ib, nl, dim, split, chunk); });
        linalg::YieldOp::create(nb, nl, yielded);
      });

  // The tail [main, extent) of the split loop, summed into the original inits.
  SmallVector<Value> inits(op.getDpsInits());
  if (dynamic || tail > 0) {
    Value tailStart = getValueOrCreateConstantIndexOp(b, loc, mainSize);
    auto tailOp = linalg::GenericOp::create(
        b, loc, op->getResultTypes(), slicedInputs(b, op, split, mainSize, tailSize), inits,
        op.getIndexingMapsArray(), iterators,
        [&](OpBuilder &nb, Location nl, ValueRange arguments) {
          SmallVector<Value> yielded =
              cloneBody(nb, op, arguments, [&](OpBuilder &ib, int64_t dim) -> Value {
                Value index = linalg::IndexOp::create(ib, nl, dim);
                if (dim != split)
                  return index;
                return arith::AddIOp::create(ib, nl, index, tailStart);
              });
          linalg::YieldOp::create(nb, nl, yielded);
        });
    inits.assign(tailOp->result_begin(), tailOp->result_end());
    if (!dynamic) // a dynamic tail is shorter than a block
      worklist.push_back(tailOp);
  }

  // Stage 2: the partials summed into the inits (or the tail's sums), f32 ones in f64
  // (partialElementType), then rounded to the sums' own type once.
  SmallVector<Type> resultTypes(op->getResultTypes());
  for (Value &init : inits) {
    Type element = cast<RankedTensorType>(init.getType()).getElementType();
    if (partialElementType(element) != element)
      init = dyno::castTensorElements(b, loc, init, partialElementType(element));
  }
  unsigned rank = outMap.getNumResults();
  unsigned stage2Loops = partialShape.size();
  SmallVector<AffineMap> stage2Maps(sums.size(), b.getMultiDimIdentityMap(stage2Loops));
  SmallVector<AffineExpr> kept;
  for (unsigned dim = 0; dim < rank; ++dim)
    kept.push_back(getAffineDimExpr(dim, ctx));
  stage2Maps.append(sums.size(), AffineMap::get(stage2Loops, 0, kept, ctx));
  SmallVector<utils::IteratorType> stage2Iterators(rank, utils::IteratorType::parallel);
  stage2Iterators.append(stage2Loops - rank, utils::IteratorType::reduction);
  auto stage2 = linalg::GenericOp::create(
      b, loc, ValueRange(inits).getTypes(), stage1->getResults(), inits, stage2Maps,
      stage2Iterators, [&](OpBuilder &nb, Location nl, ValueRange arguments) {
        SmallVector<Value> yielded;
        for (auto [index, sum] : llvm::enumerate(sums)) {
          Value accumulator = arguments[sums.size() + index];
          Value partial = arguments[index];
          if (partial.getType() != accumulator.getType())
            partial = arith::ExtFOp::create(nb, nl, accumulator.getType(), partial);
          yielded.push_back(
              arith::AddFOp::create(nb, nl, accumulator, partial, sum.getFastmathAttr()));
        }
        linalg::YieldOp::create(nb, nl, yielded);
      });
  if (dynamic)
    dynamicLevels[stage2] = dynamicLevels.lookup(op) + 1;
  dynamicLevels.erase(op);
  SmallVector<Value> results;
  for (auto [sum, type] : llvm::zip(stage2->getResults(), resultTypes))
    results.push_back(sum.getType() == type
                          ? sum
                          : dyno::castTensorElements(b, loc, sum,
                                               cast<RankedTensorType>(type).getElementType()));
  op->replaceAllUsesWith(results);
  op.erase();
  worklist.push_back(stage2);
  return success();
}

struct BlockLongSumsPass
    : mlir::dyno::impl::DynoBlockLongSumsBase<BlockLongSumsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> worklist;
    DenseMap<Operation *, int> dynamicLevels; // blockings above a dynamic partials' sum
    getOperation().walk([&](linalg::GenericOp op) { worklist.push_back(op); });
    while (!worklist.empty()) {
      linalg::GenericOp op = worklist.pop_back_val();
      (void)block(op, worklist, expandProducers, dynamicExtents, dynamicLevels);
    }
  }
};

} // namespace
