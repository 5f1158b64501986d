//===- FuseElementwise.cpp - Elementwise fusion with recompute --*- C++ -*-===//
//
// Upstream linalg's elementwise fusion fuses a producer only into its single user. Dyno
// recomputes cheap all-parallel producers in each consumer instead, which removes the
// intermediate tensors of row-wise pipelines (softmax, layernorm) before kernel formation.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/ElementwiseCosts.h"
#include "dyno/Dialect/Dyno/Transforms/LibraryCalls.h"
#include "dyno/Dialect/Dyno/Transforms/MoveReads.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "dyno-fuse-elementwise"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOFUSEELEMENTWISE
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using mlir::dyno::isLibraryContraction;

/// ATen routines called on whole tensors (attention, LAPACK, FFTs) take strided tensors
/// as eager does; torch.distributed's collectives are handed dense ones.
static bool isStridedLibraryCall(Operation *op) {
  auto call = dyn_cast<dyno::LibraryCallOp>(op);
  return call && !call.isCollective();
}

/// Whether every user of `value` is a library op or library call, looking through
/// reshapes when `throughReshapes`.
static bool onlyLibrariesRead(Value value, bool throughReshapes) {
  return !value.use_empty() && llvm::all_of(value.getUsers(), [&](Operation *user) {
           if (throughReshapes && isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
             return onlyLibrariesRead(user->getResult(0), throughReshapes);
           return isLibraryContraction(user) || isStridedLibraryCall(user);
         });
}

/// A transpose that only library ops and calls read stays a view on the host: a
/// transposed weight, attention's q, k and v as views of the projections. A transpose of
/// a library call's result also when reshapes come between: attention returns its output
/// in q's layout, so its transpose into the output projection's rows is a view too
/// (where it is not, the host's reshape copies it, as a kernel would have). A transpose
/// that a kernel computes is not kept for reshapes into a matmul: the kernel writes the
/// transposed layout directly, where the host would copy it after.
static bool allUsersAreLibraryOps(Operation *op) {
  if (op->getNumOperands() == 0 || op->getNumResults() == 0)
    return false;
  Value source = op->getOperand(0);
  while (auto reshape = source.getDefiningOp())
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(reshape))
      source = reshape->getOperand(0);
    else
      break;
  bool ofLibraryCall = isa<linalg::TransposeOp>(op) &&
                       isa_and_nonnull<dyno::LibraryCallOp>(source.getDefiningOp());
  return onlyLibrariesRead(op->getResult(0), /*throughReshapes=*/ofLibraryCall);
}

/// The ops of `op`'s body that compute its values: index checks kept in kernels
/// (`dyno.check`, dyno-keep-assertions-in-kernels) and the ops only their conditions
/// read are a few compares per gather, and do not make a gather too costly to recompute
/// in each of its readers (as it is where the checks run on the host). Nor do float
/// widenings (a bf16 or f16 value read as f32 is one shift or convert): a bf16 residual
/// add of three tensors is as cheap to recompute as the float32 one.
static unsigned bodySize(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  DenseSet<Operation *> checking;
  for (Operation &inner : llvm::reverse(body)) {
    bool onlyChecks =
        isa<dyno::CheckOp>(inner) ||
        (!inner.use_empty() && isMemoryEffectFree(&inner) &&
         llvm::all_of(inner.getUses(), [&](OpOperand &use) {
           auto check = dyn_cast<dyno::CheckOp>(use.getOwner());
           return (check && use.get() == check.getCondition()) ||
                  (!check && checking.contains(use.getOwner()));
         }));
    if (onlyChecks)
      checking.insert(&inner);
  }
  unsigned widenings = llvm::count_if(body, [&](Operation &inner) {
    return isa<arith::ExtFOp>(inner) && !checking.contains(&inner);
  });
  return body.getOperations().size() - checking.size() - widenings;
}

/// Transcendental functions cost tens of instructions each; a producer using one is
/// computed once (per row block, after tiling) rather than in every consumer.
bool mlir::dyno::hasTranscendental(linalg::GenericOp op) {
  return llvm::any_of(op.getRegion().front(), [](Operation &inner) {
    return isa<math::MathDialect>(inner.getDialect()) &&
           !isa<math::AbsFOp, math::AbsIOp, math::CopySignOp, math::FmaOp>(inner);
  });
}

/// A reduction cannot take in a producer whose inputs leave some of its loops to its
/// init alone (a gather: an embedding lookup reads its table with tensor.extract, so
/// only the token ids are inputs): after fusion no operand would give those loops their
/// sizes, and upstream refuses. The producer's result (the squares of gathered rows in
/// an RMSNorm) was then written in full and read back. Such a reduction first gains an
/// input that only carries the fused operand's shape (a tensor.empty its body never
/// reads), after which the producer fuses. Returns whether a reduction gained one.
static bool addShapeOperandsForFusion(func::FuncOp func, IRRewriter &rewriter,
                                      const linalg::ControlFusionFn &control) {
  SmallVector<OpOperand *> blocked;
  func.walk([&](linalg::GenericOp consumer) {
    if (consumer.getNumReductionLoops() == 0 || !consumer.hasPureTensorSemantics())
      return;
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      // Only a producer the reduction alone reads: fusion keeps a producer's result
      // that others read as a result of the fused op, indexed here by reduced loops.
      if (!producer || !producer->hasOneUse() ||
          producer.getNumParallelLoops() != producer.getNumLoops() ||
          linalg::areElementwiseOpsFusable(operand) || !control(operand))
        continue;
      blocked.push_back(operand);
      return; // one operand per consumer and round: the consumer is rebuilt
    }
  });
  bool changed = false;
  for (OpOperand *operand : blocked) {
    auto consumer = cast<linalg::GenericOp>(operand->getOwner());
    auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
    auto result = cast<OpResult>(operand->get());
    Value init = producer.getDpsInitOperand(result.getResultNumber())->get();
    rewriter.setInsertionPoint(consumer);
    Location loc = consumer.getLoc();
    Value shape = tensor::EmptyOp::create(rewriter, loc, tensor::getMixedSizes(rewriter, loc, init),
                                          getElementTypeOrSelf(init.getType()));
    SmallVector<Value> inputs(consumer.getDpsInputs());
    inputs.push_back(shape);
    SmallVector<AffineMap> maps;
    for (OpOperand *input : consumer.getDpsInputOperands())
      maps.push_back(consumer.getMatchingIndexingMap(input));
    maps.push_back(consumer.getMatchingIndexingMap(operand));
    for (OpOperand &output : consumer.getDpsInitsMutable())
      maps.push_back(consumer.getMatchingIndexingMap(&output));
    auto widened = linalg::GenericOp::create(
        rewriter, loc, consumer.getResultTypes(), inputs, consumer.getDpsInits(), maps,
        consumer.getIteratorTypesArray());
    widened->setDiscardableAttrs(consumer->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(consumer.getRegion(), widened.getRegion(),
                                widened.getRegion().begin());
    widened.getRegion().front().insertArgument(
        consumer.getNumDpsInputs(), getElementTypeOrSelf(shape.getType()), loc);
    // Still refused (another condition than the loop sizes): the consumer stays as it
    // was, so that no pass is left with an input it cannot fuse or drop.
    if (!linalg::areElementwiseOpsFusable(
            &widened->getOpOperand(operand->getOperandNumber()))) {
      rewriter.inlineRegionBefore(widened.getRegion(), consumer.getRegion(),
                                  consumer.getRegion().begin());
      consumer.getRegion().front().eraseArgument(consumer.getNumDpsInputs());
      rewriter.eraseOp(widened);
      rewriter.eraseOp(shape.getDefiningOp());
      continue;
    }
    rewriter.replaceOp(consumer, widened->getResults());
    changed = true;
  }
  return changed;
}

/// A concatenation of K equal pieces along `dim` is a stack: its result, viewed as
/// [..., K, n, ...], is an all-parallel generic that reads every piece at the same
/// (n-sized) position and selects piece k, collapsed back to [..., K * n, ...]. Unlike
/// tensor.concat, the generic fuses with the pieces' producers and (through the
/// collapse) with its consumers: rotary embeddings' `cat((-x2, x1), -1)` computes in
/// the kernel that reads q or k, not in three kernels and a torch.cat between them.
/// Pieces of unequal sizes stay a concat.
static void stackEqualConcatenation(tensor::ConcatOp concat, IRRewriter &rewriter) {
  auto type = concat.getResultType();
  int64_t dim = concat.getDim();
  ValueRange pieces = concat.getInputs();
  auto pieceType = cast<RankedTensorType>(pieces[0].getType());
  // (Pieces of sizes known only at run time, as roll's casts make them, stay a concat:
  // equal types do not mean equal sizes.)
  if (pieces.size() < 2 || !type.hasStaticShape() || !pieceType.hasStaticShape() ||
      pieceType.getDimSize(dim) == 0 ||
      pieceType.getDimSize(dim) * int64_t(pieces.size()) != type.getDimSize(dim) ||
      llvm::any_of(pieces, [&](Value piece) { return piece.getType() != pieceType; }))
    return;
  MLIRContext *ctx = concat.getContext();
  Location loc = concat.getLoc();
  int64_t rank = type.getRank(), count = pieces.size();
  SmallVector<int64_t> stackedShape(pieceType.getShape());
  stackedShape.insert(stackedShape.begin() + dim, count);
  // The piece's position: every loop but the stack's.
  SmallVector<AffineExpr> pieceIndex;
  for (int64_t loop = 0; loop <= rank; ++loop)
    if (loop != dim)
      pieceIndex.push_back(getAffineDimExpr(loop, ctx));
  SmallVector<AffineMap> maps(count, AffineMap::get(rank + 1, 0, pieceIndex, ctx));
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank + 1, ctx));
  rewriter.setInsertionPoint(concat);
  Value init = tensor::EmptyOp::create(rewriter, loc, stackedShape, type.getElementType());
  auto stack = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, pieces, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(rank + 1, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value k = linalg::IndexOp::create(b, loc, dim);
        Value selected = args[count - 1];
        for (int64_t piece = count - 2; piece >= 0; --piece) {
          Value position = arith::ConstantIndexOp::create(b, loc, piece);
          Value isPiece =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k, position);
          selected = arith::SelectOp::create(b, loc, isPiece, args[piece], selected);
        }
        linalg::YieldOp::create(b, loc, selected);
      });
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d <= rank; ++d) {
    if (d == dim + 1)
      groups.back().push_back(d);
    else
      groups.push_back({d});
  }
  rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(concat, type, stack.getResult(0),
                                                       groups);
}

/// `value` without the tensor.casts that refine or erase its static sizes.
static Value stripCasts(Value value) {
  while (auto cast = value.getDefiningOp<tensor::CastOp>())
    value = cast.getSource();
  return value;
}

/// A rotation (torch.roll along one dimension, as torch-mlir decomposes it) is the
/// concatenation of two slices of one tensor x along `dim`, x[a:n] then x[0:a], with
/// every other dimension whole: element i along `dim` is x[(i + a) mod n]. It becomes an
/// all-parallel generic reading x through that map, which fuses into its consumers (and
/// a second roll's rotation into the first) where a concat is a copy of its own: on the
/// Triton target a torch.cat on the host between kernels. n must be static.
static void rotationAsGeneric(tensor::ConcatOp concat, IRRewriter &rewriter) {
  int64_t dim = concat.getDim();
  if (concat.getInputs().size() != 2)
    return;
  // A slice of the source, of the source's rank: through casts, and through the
  // expand_shape that gives a rank-reducing slice its unit dimensions back
  // (linalg-fold-unit-extent-dims makes a roll by 1 so).
  auto sliceOfSource = [](Value piece) -> tensor::ExtractSliceOp {
    piece = stripCasts(piece);
    if (auto expand = piece.getDefiningOp<tensor::ExpandShapeOp>()) {
      auto slice = expand.getSrc().getDefiningOp<tensor::ExtractSliceOp>();
      if (!slice || expand.getResultType().getShape() != slice.getStaticSizes())
        return {};
      return slice;
    }
    auto slice = piece.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || slice.getType().getRank() != slice.getSourceType().getRank())
      return {};
    return slice;
  };
  auto head = sliceOfSource(concat.getInputs()[0]);
  auto tail = sliceOfSource(concat.getInputs()[1]);
  if (!head || !tail || head.getSource() != tail.getSource() || !head.hasUnitStride() ||
      !tail.hasUnitStride())
    return;
  Value source = head.getSource();
  auto sourceType = cast<RankedTensorType>(source.getType());
  int64_t n = sourceType.getDimSize(dim);
  if (ShapedType::isDynamic(n))
    return;
  // Every other dimension whole, in both slices.
  auto isWhole = [&](tensor::ExtractSliceOp slice, int64_t d) {
    std::optional<int64_t> offset = getConstantIntValue(slice.getMixedOffsets()[d]);
    if (!offset || *offset != 0)
      return false;
    OpFoldResult size = slice.getMixedSizes()[d];
    if (std::optional<int64_t> constant = getConstantIntValue(size))
      return *constant == sourceType.getDimSize(d);
    auto dimOp = dyn_cast<Value>(size) ? cast<Value>(size).getDefiningOp<tensor::DimOp>()
                                       : tensor::DimOp();
    return dimOp && dimOp.getSource() == source && dimOp.getConstantIndex() == d;
  };
  for (int64_t d = 0; d < sourceType.getRank(); ++d)
    if (d != dim && (!isWhole(head, d) || !isWhole(tail, d)))
      return;
  std::optional<int64_t> headOffset = getConstantIntValue(head.getMixedOffsets()[dim]);
  std::optional<int64_t> headSize = getConstantIntValue(head.getMixedSizes()[dim]);
  std::optional<int64_t> tailOffset = getConstantIntValue(tail.getMixedOffsets()[dim]);
  std::optional<int64_t> tailSize = getConstantIntValue(tail.getMixedSizes()[dim]);
  if (!headOffset || !headSize || !tailOffset || !tailSize || *tailOffset != 0 ||
      *tailSize != *headOffset || *headOffset + *headSize != n || *headOffset <= 0 ||
      *headSize <= 0)
    return;
  int64_t shift = *headOffset;
  MLIRContext *ctx = concat.getContext();
  Location loc = concat.getLoc();
  int64_t rank = sourceType.getRank();
  SmallVector<AffineExpr> sourceIndex;
  for (int64_t loop = 0; loop < rank; ++loop) {
    AffineExpr index = getAffineDimExpr(loop, ctx);
    sourceIndex.push_back(loop == dim ? (index + shift) % n : index);
  }
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, sourceIndex, ctx),
                                 AffineMap::getMultiDimIdentityMap(rank, ctx)};
  rewriter.setInsertionPoint(concat);
  Value init = tensor::EmptyOp::create(rewriter, loc,
                                       tensor::getMixedSizes(rewriter, loc, source),
                                       sourceType.getElementType());
  auto rotation = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{source}, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        linalg::YieldOp::create(b, loc, args[0]);
      });
  Value result = rotation.getResult(0);
  if (result.getType() != concat.getType())
    result = tensor::CastOp::create(rewriter, loc, concat.getType(), result);
  rewriter.replaceOp(concat, result);
}

/// Whether `op` reads no tensor: no inputs, and no tensor (a gather's table) read
/// inside its body.
static bool readsNoTensor(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 0)
    return false;
  WalkResult walk = op.getRegion().walk([](Operation *inner) {
    return llvm::any_of(inner->getOperandTypes(), llvm::IsaPred<TensorType>)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// The largest body of `producer` that fusion recomputes in several readers: `maxOps`,
/// or 4x that for a producer that reads no tensor (a function of its indices, as masks
/// built from aranges are: recomputed, it saves a store, a load per element and a
/// launch, and costs only integer arithmetic; Swin's shifted-window regions are 10 ops).
static unsigned recomputeLimit(linalg::GenericOp producer, unsigned maxOps) {
  return readsNoTensor(producer) ? 4 * maxOps : maxOps;
}

/// Whether fusion recomputes `op` in each of its readers rather than writing it once:
/// all parallel, no transcendental, a body within the limit.
static bool recomputedInReaders(linalg::GenericOp op, unsigned maxOps) {
  return op.getNumLoops() == op.getNumParallelLoops() && !dyno::hasTranscendental(op) &&
         bodySize(op) <= recomputeLimit(op, maxOps);
}

/// Whether `fusedOperand`, a generic's read of a collapse_shape with several readers,
/// collapses a generic that fusion recomputes in its readers (cheap, all parallel, not
/// transcendental): the reader is then expanded to that generic's shape (as upstream
/// expands a collapse's only reader), so the generic fuses into it. A residual add
/// read through the tokens' collapse by a layer norm's three passes and, directly, by
/// the next residual add was otherwise written and read back: a kernel of its own
/// (Swin's window reversal, computed in its windows' order). Expanding a reader
/// duplicates no work; the collapse stays for readers that are not generics. Not where
/// the expansion would bring back a unit dimension (folded away before fusion): a
/// reduction over a channel and a unit dimension is split into several Triton kernels
/// (wav2vec2's feature extractor's layer norms went from one kernel to three).
static bool readerExpandsToRecomputable(OpOperand *fusedOperand, unsigned maxOps) {
  auto collapse = fusedOperand->get().getDefiningOp<tensor::CollapseShapeOp>();
  auto reader = dyn_cast<linalg::GenericOp>(fusedOperand->getOwner());
  if (!collapse || !reader || !collapse.getSrcType().hasStaticShape() ||
      llvm::is_contained(collapse.getSrcType().getShape(), 1))
    return false;
  auto source = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
  return source && source->getNumResults() == 1 && source.hasPureTensorSemantics() &&
         recomputedInReaders(source, maxOps);
}

namespace {
/// A cheap generic that reads no tensor (a function of its indices alone, as aranges
/// and the masks built from them are), read through several reshapes: each reshape
/// after the first gets a copy of its own. Upstream's reshape propagation moves a
/// reshape only into a producer with one user, so the generic stayed a kernel of its
/// own, its result stored and loaded back (Swin's shifted-window regions, read through
/// two expansions by the attention mask); a copy per reshape is expanded and fused into
/// its reader, where it is recomputed from indices, which costs no memory read.
struct CloneIndexOnlyGenericPerReshape : OpRewritePattern<linalg::GenericOp> {
  CloneIndexOnlyGenericPerReshape(MLIRContext *context, unsigned maxOps)
      : OpRewritePattern(context), maxOps(maxOps) {}

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!readsNoTensor(op) || op->getNumResults() != 1 || !op.hasPureTensorSemantics() ||
        !recomputedInReaders(op, maxOps) || op->hasOneUse())
      return failure();
    OpOperand *reshaped = nullptr;
    for (OpOperand &use : op->getUses())
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(use.getOwner()))
        reshaped = &use;
    if (!reshaped)
      return failure();
    rewriter.setInsertionPoint(op);
    Operation *copy = rewriter.clone(*op);
    rewriter.modifyOpInPlace(reshaped->getOwner(),
                             [&] { reshaped->set(copy->getResult(0)); });
    return success();
  }

  unsigned maxOps;
};

/// A slice of a generic that is cheap to recompute (the policy elementwise fusion
/// uses): the generic computed on the slices of its operands. A transpose that rotary
/// embeddings slice in halves then fuses into what reads the halves.
struct SliceRecomputableGeneric : OpRewritePattern<tensor::ExtractSliceOp> {
  SliceRecomputableGeneric(MLIRContext *ctx, unsigned maxOps)
      : OpRewritePattern(ctx), maxOps(maxOps) {}

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto producer = slice.getSource().getDefiningOp<linalg::GenericOp>();
    if (!producer || producer->getNumResults() != 1 || !producer.hasPureTensorSemantics() ||
        producer.getNumLoops() != producer.getNumParallelLoops() ||
        !slice.hasUnitStride() ||
        slice.getType().getRank() != slice.getSourceType().getRank())
      return failure();
    if (!producer->hasOneUse() &&
        (bodySize(producer) > maxOps || dyno::hasTranscendental(producer)))
      return failure();
    // A gather whose index checks stay in its kernel (dyno.check) checks every index,
    // as eager does, not only those of the slice read.
    if (!producer.getBody()->getOps<dyno::CheckOp>().empty())
      return failure();
    // The operands' slices are computed from the maps as if they were linear: a map
    // with floordiv, mod or a negative coefficient would slice the wrong elements.
    if (llvm::any_of(producer.getIndexingMapsArray(),
                     [](AffineMap map) { return !map.isProjectedPermutation(); }))
      return failure();
    AffineMap outputMap = producer.getMatchingIndexingMap(producer.getDpsInitOperand(0));
    if (!outputMap.isPermutation() ||
        llvm::any_of(slice.getStaticSizes(), [](int64_t size) { return size == 0; }))
      return failure();
    Location loc = producer.getLoc();
    auto linalgOp = cast<linalg::LinalgOp>(producer.getOperation());
    SmallVector<OpFoldResult> shapes = linalgOp.createFlatListOfOperandDims(rewriter, loc);
    AffineMap shapesToLoops = linalgOp.getShapesToLoopsMap();
    if (!shapesToLoops)
      return failure();
    SmallVector<OpFoldResult> bounds = affine::makeComposedFoldedMultiResultAffineApply(
        rewriter, loc, shapesToLoops, shapes);
    SmallVector<OpFoldResult> offsets(bounds.size(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = bounds;
    for (auto [position, result] : llvm::enumerate(outputMap.getResults())) {
      unsigned loop = cast<AffineDimExpr>(result).getPosition();
      offsets[loop] = slice.getMixedOffsets()[position];
      sizes[loop] = slice.getMixedSizes()[position];
    }
    SmallVector<Value> operands = linalg::makeTiledShapes(
        rewriter, loc, linalgOp, producer->getOperands(), offsets, sizes, bounds,
        /*omitPartialTileCheck=*/true);
    Type resultType = operands[producer.getDpsInitOperand(0)->getOperandNumber()].getType();
    auto sliced = cast<linalg::LinalgOp>(
        clone(rewriter, producer.getOperation(), TypeRange{resultType}, operands));
    linalg::offsetIndices(rewriter, sliced, offsets);
    Value result = sliced->getResult(0);
    if (result.getType() != slice.getType()) // a size folded to a constant
      result = tensor::CastOp::create(rewriter, loc, slice.getType(), result);
    rewriter.replaceOp(slice, result);
    return success();
  }

  unsigned maxOps;
};

/// Whether an indexing map of `op` has a mod (a rotation's read, fused into it or not).
static bool readsThroughMod(linalg::GenericOp op) {
  return llvm::any_of(op.getIndexingMapsArray(), [](AffineMap map) {
    return llvm::any_of(map.getResults(), [](AffineExpr result) {
      bool mod = false;
      result.walk([&](AffineExpr expr) { mod |= expr.getKind() == AffineExprKind::Mod; });
      return mod;
    });
  });
}

/// Equal expand_shapes of one tensor are one: a producer read through several (a layer
/// norm's mean, read by the variance and by the normalization, each through the view of
/// Swin's windows) then has one user, and upstream's reshape propagation expands it, so
/// that the whole norm is computed in the windows' order (one Triton index space, not a
/// kernel for the statistics and one for the rest).
struct MergeEqualExpansions : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    for (Operation *user : expand.getSrc().getUsers()) {
      auto other = dyn_cast<tensor::ExpandShapeOp>(user);
      if (!other || other == expand || other->getBlock() != expand->getBlock() ||
          !other->isBeforeInBlock(expand) || other.getType() != expand.getType() ||
          other.getReassociationIndices() != expand.getReassociationIndices() ||
          other.getMixedOutputShape() != expand.getMixedOutputShape())
        continue;
      rewriter.replaceOp(expand, other.getResult());
      return success();
    }
    return failure();
  }
};

/// A generic whose body yields its inits unchanged computes nothing: its results are its
/// inits. (A bounds check whose condition folds to true once its gather fuses in reduces
/// `and(acc, true)` = `acc`; the Triton target recognizes no combiner in it.)
struct FoldGenericYieldingItsInits : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != op->getNumResults())
      return failure();
    auto yield = cast<linalg::YieldOp>(op.getRegion().front().getTerminator());
    for (OpOperand &init : op.getDpsInitsMutable())
      if (yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs()) !=
              op.getMatchingBlockArgument(&init) ||
          init.get().getType() != op->getResult(init.getOperandNumber() -
                                                 op.getNumDpsInputs()).getType())
        return failure();
    rewriter.replaceOp(op, op.getDpsInits());
    return success();
  }
};

struct FuseElementwisePass
    : mlir::dyno::impl::DynoFuseElementwiseBase<FuseElementwisePass> {
  using DynoFuseElementwiseBase::DynoFuseElementwiseBase;

  /// Upstream's verifier of tensor.expand_shape does not compare a static size of its
  /// output_shape with its result type, and the reshape-fusion patterns below build types
  /// from the output_shape: a negative size there ends in an assertion
  /// (e2e/dyno_opt_fuzz.py). Such input is malformed, and gets a diagnostic instead.
  static LogicalResult verifyExpandShapeSizes(func::FuncOp func) {
    WalkResult result = func.walk([](tensor::ExpandShapeOp reshape) {
      ArrayRef<int64_t> resultShape = reshape.getResultType().getShape();
      for (auto [dim, size] : llvm::enumerate(reshape.getStaticOutputShape()))
        if (!ShapedType::isDynamic(size) && size != resultShape[dim]) {
          reshape.emitOpError("output_shape size ")
              << size << " of dimension " << dim << " differs from the result type's "
              << resultShape[dim];
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    if (failed(verifyExpandShapeSizes(func)))
      return signalPassFailure();

    // Named data movement ops become generics so that they fold into consumers' maps.
    IRRewriter rewriter(context);
    SmallVector<linalg::LinalgOp> toGeneralize;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::TransposeOp, linalg::BroadcastOp, linalg::ElementwiseOp,
              linalg::MapOp>(op.getOperation()) &&
          !allUsersAreLibraryOps(op))
        toGeneralize.push_back(op);
    });
    for (linalg::LinalgOp op : toGeneralize) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op)))
        return signalPassFailure();
    }
    if (rotationsAsReads)
      for (auto concat : llvm::make_early_inc_range(func.getOps<tensor::ConcatOp>()))
        rotationAsGeneric(concat, rewriter);
    for (auto concat : llvm::make_early_inc_range(func.getOps<tensor::ConcatOp>()))
      stackEqualConcatenation(concat, rewriter);

    unsigned maxOps = maxRecomputeOps;
    linalg::ControlFusionFn control = [maxOps](OpOperand *fusedOperand) {
      auto producer = fusedOperand->get().getDefiningOp<linalg::GenericOp>();
      if (!producer)
        return false;
      // A transcendental producer read with broadcasting (a per-row rsqrt feeding a
      // per-element op) would be recomputed for every element of the broadcast dims.
      auto consumer = cast<linalg::LinalgOp>(fusedOperand->getOwner());
      // A reduction reads a rotation's copy: the long-sum blocking and the Triton
      // target's split of full reductions need projected-permutation reads.
      if (readsThroughMod(producer) &&
          consumer.getNumLoops() != consumer.getNumParallelLoops())
        return false;
      bool broadcast = !consumer.getMatchingIndexingMap(fusedOperand).isPermutation();
      if (dyno::hasTranscendental(producer) && (broadcast || !producer->hasOneUse()))
        return false;
      if (producer->hasOneUse())
        return true;
      // Recompute only all-parallel producers with cheap bodies (a transcendental one
      // was refused above).
      return recomputedInReaders(producer, maxOps);
    };
    // Reshapes move through single-use producers and into readers, and through a
    // collapse of a recomputable generic into each of its readers. Propagating a
    // reshape through a matmul or convolution would rewrite it into an expanded
    // linalg.generic contraction that no library call matches any more.
    linalg::ControlFusionFn reshapeFusion = [maxOps](OpOperand *fusedOperand) {
      Operation *producer = fusedOperand->get().getDefiningOp();
      if (!producer || isLibraryContraction(producer) ||
          isLibraryContraction(fusedOperand->getOwner()))
        return false;
      if (producer->hasOneUse())
        return true;
      return readerExpandsToRecomputable(fusedOperand, maxOps);
    };

    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, reshapeFusion);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    patterns.add<FoldGenericYieldingItsInits, MergeEqualExpansions>(context);
    patterns.add<SliceRecomputableGeneric, CloneIndexOnlyGenericPerReshape>(context, maxOps);
    if (rotationsAsReads)
      dyno::populateReadMovesThroughExpansionPatterns(patterns);

    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    config.setMaxIterations(64);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Fusion, then shape operands where a gather producer could not fuse into a
    // reduction, then fusion again (a chain of producers reaches the gather one fusion
    // at a time).
    for (int round = 0; round < 8; ++round) {
      if (failed(applyPatternsGreedily(func, frozen, config)))
        return signalPassFailure();
      if (!addShapeOperandsForFusion(func, rewriter, control))
        break;
    }
  }
};
} // namespace
