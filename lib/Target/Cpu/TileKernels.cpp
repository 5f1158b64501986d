//===- TileKernels.cpp - Row-block tiling with producer fusion --*- C++ -*-===//
//
// Tiles each kernel's root op along its first parallel loop into an scf.forall and fuses
// in the producers whose slices follow the root's rows. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"
#include "TransposedOperands.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dyno-tile-kernels"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOTILEKERNELS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

/// Iterations assumed for a dynamic loop when sizing blocks.
static constexpr int64_t kDynamicSizeEstimate = 64;

static std::optional<unsigned> firstParallelLoop(linalg::LinalgOp op) {
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if (type == utils::IteratorType::parallel)
      return i;
  return std::nullopt;
}

/// Whether an indexing map of `op` reads out of order: through a mod (a rotation reads
/// x[(i + a) mod n]) or a negative coefficient (a flip, or a mod simplified into
/// `i - (i floordiv n) * n`). Upstream tiling computes an operand's slice from the map's values
/// at a tile's ends (an untiled loop's tile is its whole range), which holds only for
/// maps monotonic in every loop: such an op is neither tiled nor fused into a tile, but
/// computed whole.
static bool readsOutOfOrder(linalg::LinalgOp op) {
  bool outOfOrder = false;
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr result : map.getResults())
      result.walk([&](AffineExpr expr) {
        if (expr.getKind() == AffineExprKind::Mod)
          outOfOrder = true;
        if (auto product = dyn_cast<AffineBinaryOpExpr>(expr);
            product && product.getKind() == AffineExprKind::Mul)
          if (auto factor = dyn_cast<AffineConstantExpr>(product.getRHS());
              factor && factor.getValue() < 0)
            outOfOrder = true;
      });
  return outOfOrder;
}

/// Producers whose slice for one block of the root's tiled loop is itself a block of one
/// of their parallel loops, mapped to that loop. The root maps to `rootLoop`.
static DenseMap<Operation *, unsigned> findRowFusibleCluster(linalg::LinalgOp root,
                                                             unsigned rootLoop) {
  DenseMap<Operation *, unsigned> tiledLoop;
  tiledLoop[root] = rootLoop;
  SmallVector<linalg::LinalgOp> worklist = {root};
  DenseSet<Operation *> conflicting;
  while (!worklist.empty()) {
    linalg::LinalgOp op = worklist.pop_back_val();
    unsigned loop = tiledLoop.lookup(op);
    for (OpOperand &operand : op->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::LinalgOp>();
      if (!producer || !producer.hasPureTensorSemantics())
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      std::optional<unsigned> position;
      for (auto [i, expr] : llvm::enumerate(map.getResults()))
        if (auto dim = dyn_cast<AffineDimExpr>(expr); dim && dim.getPosition() == loop)
          position = i;
      if (!position)
        continue;
      AffineMap producerMap =
          producer.getIndexingMapMatchingResult(cast<OpResult>(operand.get()));
      auto producerDim = dyn_cast<AffineDimExpr>(producerMap.getResult(*position));
      if (!producerDim || producer.getIteratorTypesArray()[producerDim.getPosition()] !=
                              utils::IteratorType::parallel)
        continue;
      auto [it, inserted] = tiledLoop.try_emplace(producer, producerDim.getPosition());
      if (inserted)
        worklist.push_back(producer);
      else if (it->second != producerDim.getPosition())
        conflicting.insert(producer);
    }
  }
  for (Operation *op : conflicting)
    tiledLoop.erase(op);
  // A producer also used outside the cluster would be computed twice: keep it out.
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto it = tiledLoop.begin(); it != tiledLoop.end();) {
      Operation *op = it->first;
      bool escapes = op != root.getOperation() &&
                     llvm::any_of(op->getUsers(), [&](Operation *user) {
                       return !tiledLoop.count(user);
                     });
      auto next = std::next(it);
      if (escapes) {
        tiledLoop.erase(it);
        changed = true;
      }
      it = next;
    }
  }
  return tiledLoop;
}

/// The elements in a cache line of the narrowest operand of `op` that `loop` walks
/// along its contiguous dimension while another loop is innermost; 1 if there is none.
static int64_t cacheLineAlongLoop(linalg::LinalgOp op, unsigned loop) {
  int64_t elements = 1;
  for (OpOperand &operand : op->getOpOperands())
    if (dyno::transposedLoop(op, operand) == loop)
      elements = std::max(elements, dyno::elementsPerCacheLine(
                                        getElementTypeOrSelf(operand.get().getType())));
  return elements;
}

namespace {
struct TileKernelsPass : mlir::dyno::impl::DynoTileKernelsBase<TileKernelsPass> {
  using DynoTileKernelsBase::DynoTileKernelsBase;

  /// The last top-level linalg op of `kernel` that has not been tiled yet.
  linalg::LinalgOp nextRoot(func::FuncOp kernel, DenseSet<Operation *> &done) {
    Block &body = kernel.getBody().front();
    for (Operation &op : llvm::reverse(body)) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
      if (linalgOp && !done.count(&op) && linalgOp.hasPureTensorSemantics() &&
          linalgOp->getNumResults() > 0)
        return linalgOp;
    }
    return {};
  }

  LogicalResult tileKernel(func::FuncOp kernel) {
    IRRewriter rewriter(kernel.getContext());
    DenseSet<Operation *> done;
    while (linalg::LinalgOp root = nextRoot(kernel, done)) {
      done.insert(root);
      std::optional<unsigned> loop = firstParallelLoop(root);
      if (!loop || isa<linalg::FillOp>(root) || readsOutOfOrder(root))
        continue;
      SmallVector<int64_t> ranges = root.getStaticLoopRanges();
      // An empty iteration space (a zero-size dimension) has nothing to share out.
      if (llvm::is_contained(ranges, 0))
        continue;
      int64_t extent = ranges[*loop];
      // Work is the iteration count (a reduction reads more than it writes). A block
      // gets about `block-iterations` of it, so that its slices of every tensor stay in
      // L1 whatever the size; kernels too small for two blocks stay sequential. A
      // dynamic size counts as `kDynamicSizeEstimate` iterations.
      auto estimate = [](int64_t range) {
        return ShapedType::isDynamic(range) ? kDynamicSizeEstimate : range;
      };
      int64_t iterationsPerRow = 1;
      for (auto [i, range] : llvm::enumerate(ranges))
        if (i != *loop)
          iterationsPerRow *= estimate(range);
      int64_t blockSize = std::max<int64_t>(1, blockIterations / iterationsPerRow);
      // An operand read or written across its rows (a transpose) along the tiled loop:
      // a block takes at least a cache line of them, so that each line it touches is
      // used whole (dyno-block-transposes blocks the loops inside).
      blockSize = std::max(blockSize, cacheLineAlongLoop(root, *loop));
      if (!ShapedType::isDynamic(extent)) {
        if (extent * iterationsPerRow < 2 * blockIterations || extent < 2)
          continue;
        // Keep at least `min-blocks` blocks so that every thread has work.
        blockSize = std::min<int64_t>(blockSize, llvm::divideCeil(extent, minBlocks));
        if (blockSize >= extent)
          continue;
      }
      // A dynamic extent is tiled whatever its size: small ones run as one block.

      DenseMap<Operation *, unsigned> cluster = findRowFusibleCluster(root, *loop);
      SmallVector<int64_t> tileSizes(root.getNumLoops(), 0);
      tileSizes[*loop] = blockSize;

      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(getAsIndexOpFoldResult(kernel.getContext(), tileSizes));
      tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      scf::SCFTileAndFuseOptions options;
      options.setTilingOptions(tiling);
      options.setFusionControlFn(
          [&](tensor::ExtractSliceOp, OpResult producer,
              bool isDestination) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
            Operation *owner = producer.getOwner();
            auto producerOp = dyn_cast<linalg::LinalgOp>(owner);
            if (producerOp && readsOutOfOrder(producerOp))
              return std::nullopt;
            if (isa<linalg::FillOp>(owner) || cluster.count(owner))
              return scf::SCFTileAndFuseOptions::ControlFnResult{false};
            return std::nullopt;
          });

      rewriter.setInsertionPoint(root);
      FailureOr<scf::SCFTileAndFuseResult> result = scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(root.getOperation()), options);
      if (failed(result))
        return root.emitError("dyno-tile-kernels: could not tile the kernel root");
      for (OpResult value : root->getResults())
        if (Value replacement = result->replacements.lookup(value))
          rewriter.replaceAllUsesWith(value, replacement);
      for (Operation *fused : result->fusedProducers)
        done.insert(fused);
      if (root->use_empty())
        rewriter.eraseOp(root);
    }
    // Fusion leaves the fused producers' originals and unused slices behind.
    if (failed(applyPatternsGreedily(kernel, RewritePatternSet(kernel.getContext()))))
      return kernel.emitError("dyno-tile-kernels: dead code elimination did not converge");
    return success();
  }

  void runOnOperation() override {
    SmallVector<func::FuncOp> kernels;
    getOperation()->walk([&](func::FuncOp func) {
      if (!func.isExternal())
        kernels.push_back(func);
    });
    for (func::FuncOp kernel : kernels)
      if (failed(tileKernel(kernel)))
        return signalPassFailure();
  }
};
} // namespace
