//===- LibraryOperandLayouts.cpp - Kernels write what libraries read -*- C++ -*-===//
//
// A kernel whose result only a library call reads (attention's q, k and v) writes it in
// the order it reads its main input, and the call reads a transposed view. See
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "dyno-library-operand-layouts"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOLIBRARYOPERANDLAYOUTS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
bool isStridedLibraryCall(Operation *op) {
  auto call = dyn_cast<dyno::LibraryCallOp>(op);
  return call && !call.isCollective();
}

/// Whether only ATen library calls that take strided tensors read the result of a
/// generic written in loop order `order` and transposed back, directly or through one
/// reshape that stays a view of that layout: an expansion, or a collapse of dimensions
/// that are consecutive in `order` (grouped-query attention's repeated k and v heads,
/// collapsed into attention's heads). torch.distributed's collectives are handed dense
/// tensors.
bool onlyStridedLibraryCallsRead(Value value, ArrayRef<unsigned> order) {
  auto readByCalls = [](Value v) {
    return !v.use_empty() && llvm::all_of(v.getUsers(), isStridedLibraryCall);
  };
  return !value.use_empty() && llvm::all_of(value.getUsers(), [&](Operation *user) {
           if (isStridedLibraryCall(user))
             return true;
           if (isa<tensor::ExpandShapeOp>(user))
             return readByCalls(user->getResult(0));
           auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
           if (!collapse)
             return false;
           for (ReassociationIndices group : collapse.getReassociationIndices())
             for (unsigned i = 1; i < group.size(); ++i) {
               auto *at = llvm::find(order, unsigned(group[i - 1]));
               if (at + 1 == order.end() || *(at + 1) != unsigned(group[i]))
                 return false;
             }
           return readByCalls(collapse.getResult());
         });
}

int64_t elementCount(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.hasStaticShape() ? type.getNumElements() : -1;
}

/// The loop order in which `generic` reads its largest input contiguously: that input's
/// dimensions in its order, each loop it does not index (a broadcast, as in repeated
/// k/v heads) placed right after the loop before it. Empty when the generic already
/// writes in that order or no input is read through a projected permutation.
SmallVector<unsigned> readOrder(linalg::GenericOp generic) {
  OpOperand *main = nullptr;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false) ||
        elementCount(input->get()) < 0)
      continue;
    if (!main || elementCount(input->get()) > elementCount(main->get()))
      main = input;
  }
  if (!main)
    return {};
  unsigned numLoops = generic.getNumLoops();
  SmallVector<unsigned> order;
  for (AffineExpr result : generic.getMatchingIndexingMap(main).getResults())
    order.push_back(cast<AffineDimExpr>(result).getPosition());
  for (unsigned loop = 0; loop < numLoops; ++loop) {
    if (llvm::is_contained(order, loop))
      continue;
    auto *before = loop == 0 ? order.begin() : llvm::find(order, loop - 1) + 1;
    order.insert(before, loop);
  }
  // The innermost dimension stays innermost: libraries want their last dimension dense
  // (attention's kernels read the head dimension contiguously, or copy).
  if (llvm::equal(order, llvm::seq<unsigned>(0, numLoops)) || order.back() != numLoops - 1)
    return {};
  return order;
}

/// `generic` (all parallel, one result written in loop order) rewritten to iterate in
/// `order` and write its result in that order; the result in the original order is a
/// linalg.transpose of it, which stays a view on the host.
void writeInReadOrder(linalg::GenericOp generic, ArrayRef<unsigned> order,
                      IRRewriter &rewriter) {
  MLIRContext *ctx = generic.getContext();
  Location loc = generic.getLoc();
  unsigned numLoops = order.size();
  // position[old loop] = the new loop that runs it.
  SmallVector<unsigned> position(numLoops);
  for (auto [newLoop, oldLoop] : llvm::enumerate(order))
    position[oldLoop] = newLoop;
  SmallVector<AffineExpr> oldInNew;
  for (unsigned oldLoop = 0; oldLoop < numLoops; ++oldLoop)
    oldInNew.push_back(getAffineDimExpr(position[oldLoop], ctx));
  AffineMap substitution = AffineMap::get(numLoops, 0, oldInNew, ctx);

  SmallVector<AffineMap> maps;
  for (OpOperand *input : generic.getDpsInputOperands())
    maps.push_back(generic.getMatchingIndexingMap(input).compose(substitution));
  maps.push_back(AffineMap::getMultiDimIdentityMap(numLoops, ctx));
  auto type = cast<RankedTensorType>(generic->getResult(0).getType());
  SmallVector<int64_t> shape;
  for (unsigned oldLoop : order)
    shape.push_back(type.getDimSize(oldLoop));

  rewriter.setInsertionPoint(generic);
  Value init = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  auto reordered = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, generic.getDpsInputs(), ValueRange{init},
      maps, generic.getIteratorTypesArray());
  reordered->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  rewriter.cloneRegionBefore(generic.getRegion(), reordered.getRegion(),
                             reordered.getRegion().end());
  for (auto index : llvm::make_early_inc_range(reordered.getBody()->getOps<linalg::IndexOp>())) {
    rewriter.setInsertionPoint(index);
    rewriter.replaceOpWithNewOp<linalg::IndexOp>(index, position[index.getDim()]);
  }
  rewriter.setInsertionPointAfter(reordered);
  Value original = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                           type.getElementType());
  SmallVector<int64_t> permutation(position.begin(), position.end());
  auto transpose = linalg::TransposeOp::create(rewriter, loc, reordered.getResult(0),
                                               original, permutation);
  rewriter.replaceOp(generic, transpose->getResults());
}

struct LibraryOperandLayoutsPass
    : mlir::dyno::impl::DynoLibraryOperandLayoutsBase<LibraryOperandLayoutsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, SmallVector<unsigned>>> rewrites;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (generic->getNumResults() != 1 || !generic.hasPureTensorSemantics() ||
          generic.getNumLoops() != generic.getNumParallelLoops() ||
          !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity() ||
          generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)) ||
          elementCount(generic->getResult(0)) < 0)
        return; // (a body that reads its init would lose it to the new empty one)
      SmallVector<unsigned> order = readOrder(generic);
      if (!order.empty() && onlyStridedLibraryCallsRead(generic->getResult(0), order))
        rewrites.push_back({generic, std::move(order)});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[generic, order] : rewrites)
      writeInReadOrder(generic, order, rewriter);
  }
};
} // namespace
