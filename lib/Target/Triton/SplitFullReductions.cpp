//===- SplitFullReductions.cpp - Full reductions in two stages ----*- C++ -*-===//
//
// A reduction of a whole large tensor to one value is one Triton program walking every
// element (the grid has one row): 30 ms for 32M elements on an H100. This pass splits
// it: P programs each reduce a slice to a partial, then one program reduces the P
// partials. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "IterationSpace.h"

#include "dyno/Target/Triton/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "dyno-split-full-reductions"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOSPLITFULLREDUCTIONS
#include "dyno/Target/Triton/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

namespace {

/// Reductions smaller than this stay one program.
constexpr int64_t kMinSplitElements = 1 << 16;
constexpr int64_t kMaxPartials = 1024;

/// The combining op of `op`'s body, `combine(out, v)` with `v` independent of `out`,
/// where reducing partials with it gives the whole reduction: an idempotent combiner
/// (and, or, max, min: the initial value may be combined once per partial), or a sum
/// from zero.
Operation *splittableCombiner(linalg::GenericOp op, Value initial) {
  Block *body = op.getBody();
  Value out = body->getArgument(body->getNumArguments() - 1);
  Operation *combine = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!combine || combine->getBlock() != body || combine->getNumOperands() != 2 ||
      !out.hasOneUse() || !llvm::is_contained(combine->getOperands(), out))
    return nullptr;
  if (isa<arith::AndIOp, arith::OrIOp, arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp,
          arith::MinUIOp, arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
          arith::MinNumFOp>(combine))
    return combine;
  if (isa<arith::AddIOp>(combine) && matchPattern(initial, m_Zero()))
    return combine;
  // Adding a zero once per partial: -0.0 is the identity; +0.0 changes only a sum of
  // -0.0 terms, which the one-program sum also starts from +0.0.
  if (isa<arith::AddFOp>(combine) && matchPattern(initial, m_AnyZeroFloat()))
    return combine;
  return nullptr;
}

/// A generic that fills a tensor of `shape` with `scalar`.
Value fill(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Value scalar) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, scalar.getType());
  int64_t rank = shape.size();
  auto generic = linalg::GenericOp::create(
      b, loc, empty.getType(), ValueRange{}, ValueRange{empty},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange) {
        linalg::YieldOp::create(nb, nl, scalar);
      });
  return generic.getResult(0);
}

LogicalResult split(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      op.getNumReductionLoops() != op.getNumLoops() || op.getNumLoops() == 0)
    return failure();
  auto initType = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
  if (!initType || initType.getRank() != 0)
    return failure();
  auto initFill = op.getDpsInits()[0].getDefiningOp<linalg::GenericOp>();
  Value initial = initFill ? scalarFillValue(initFill) : Value();
  if (!initial)
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges))
    return failure();
  int64_t total = 1;
  for (int64_t range : ranges)
    total *= range;
  if (total < kMinSplitElements)
    return failure();
  // Split the first loop N into P x N/P, P the largest power of 2 (up to 1024) dividing N.
  int64_t n = ranges[0];
  int64_t partials = std::min<int64_t>(kMaxPartials, n & -n);
  if (partials < 8)
    return failure();
  Operation *combiner = splittableCombiner(op, initial);
  if (!combiner)
    return failure();
  for (OpOperand *input : op.getDpsInputOperands())
    if (!isa<RankedTensorType>(input->get().getType()) ||
        !op.getMatchingIndexingMap(input).isProjectedPermutation())
      return failure();

  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  int64_t chunk = n / partials;
  unsigned loops = op.getNumLoops() + 1; // (p, a, d1, ..., dk)
  // Inputs: the dimension loop 0 reads becomes (p, a); loop i > 0 is now i + 1.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = cast<RankedTensorType>(input->get().getType());
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<AffineExpr> results;
    SmallVector<ReassociationIndices> groups;
    SmallVector<int64_t> shape;
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      unsigned loop = cast<AffineDimExpr>(expr).getPosition();
      if (loop == 0) {
        groups.push_back({static_cast<int64_t>(shape.size()),
                          static_cast<int64_t>(shape.size()) + 1});
        shape.append({partials, chunk});
        results.append({getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)});
        continue;
      }
      groups.push_back({static_cast<int64_t>(shape.size())});
      shape.push_back(type.getDimSize(dim));
      results.push_back(getAffineDimExpr(loop + 1, ctx));
    }
    Value value = input->get();
    if (shape.size() != static_cast<size_t>(type.getRank()))
      value = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(shape, type.getElementType()), value, groups);
    inputs.push_back(value);
    maps.push_back(AffineMap::get(loops, 0, results, ctx));
  }
  maps.push_back(AffineMap::get(loops, 0, {getAffineDimExpr(0, ctx)}, ctx));
  SmallVector<utils::IteratorType> iterators(loops, utils::IteratorType::reduction);
  iterators[0] = utils::IteratorType::parallel;
  Value partialInit = fill(b, loc, {partials}, initial);
  auto stage1 = linalg::GenericOp::create(
      b, loc, partialInit.getType(), inputs, ValueRange{partialInit}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange arguments) {
        IRMapping mapping;
        mapping.map(op.getBody()->getArguments(), arguments);
        for (Operation &inner : op.getBody()->without_terminator()) {
          auto index = dyn_cast<linalg::IndexOp>(inner);
          if (!index) {
            nb.clone(inner, mapping);
            continue;
          }
          Value position;
          if (index.getDim() == 0) { // p * chunk + a
            Value p = linalg::IndexOp::create(nb, nl, 0);
            Value a = linalg::IndexOp::create(nb, nl, 1);
            position = arith::AddIOp::create(
                nb, nl,
                arith::MulIOp::create(nb, nl, p, arith::ConstantIndexOp::create(nb, nl, chunk)),
                a);
          } else {
            position = linalg::IndexOp::create(nb, nl, index.getDim() + 1);
          }
          mapping.map(index.getResult(), position);
        }
        linalg::YieldOp::create(
            nb, nl, mapping.lookup(op.getBody()->getTerminator()->getOperand(0)));
      });
  // The partials, reduced with the same combiner into the original initial value.
  AffineMap all = AffineMap::get(1, 0, {getAffineDimExpr(0, ctx)}, ctx);
  AffineMap none = AffineMap::get(1, 0, {}, ctx);
  auto stage2 = linalg::GenericOp::create(
      b, loc, initType, ValueRange{stage1.getResult(0)}, op.getDpsInits(),
      ArrayRef<AffineMap>{all, none}, {utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location nl, ValueRange arguments) {
        OperationState state(nl, combiner->getName());
        state.addOperands({arguments[1], arguments[0]});
        state.addAttributes(combiner->getAttrs());
        state.addTypes(arguments[0].getType());
        linalg::YieldOp::create(nb, nl, nb.create(state)->getResult(0));
      });
  op.getResult(0).replaceAllUsesWith(stage2.getResult(0));
  op.erase();
  return success();
}

struct SplitFullReductionsPass
    : mlir::dyno::impl::DynoSplitFullReductionsBase<SplitFullReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp op) { candidates.push_back(op); });
    for (linalg::GenericOp op : candidates)
      (void)split(op);
  }
};

} // namespace
