//===- BlockTransposes.cpp - Transposing loops in cache-line blocks -*- C++ -*-===//
//
// A linalg op on buffers that reads (or writes) an operand across its rows, as a
// transpose does, is tiled into square blocks of one cache line per side over the two
// loops involved, so that every line it touches is used whole while it is in L1. See
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"
#include "TransposedOperands.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "dyno-block-transposes"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOBLOCKTRANSPOSES
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
struct BlockTransposesPass : mlir::dyno::impl::DynoBlockTransposesBase<BlockTransposesPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && !op.hasIndexSemantics() &&
          op.getNumLoops() >= 2 && op.getNumLoops() == op.getNumParallelLoops())
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      unsigned innermost = op.getNumLoops() - 1;
      std::optional<unsigned> across;
      bool conflicting = false;
      int64_t side = 1; // a cache line of the narrowest transposed operand
      for (OpOperand &operand : op->getOpOperands()) {
        std::optional<unsigned> loop = dyno::transposedLoop(op, operand);
        if (!loop)
          continue;
        conflicting |= across && *across != *loop; // transposed along different loops
        across = loop;
        side = std::max(side, dyno::elementsPerCacheLine(
                                  getElementTypeOrSelf(operand.get().getType())));
      }
      if (!across || conflicting)
        continue;
      // The innermost loop must span more than one block (static extents); the other
      // is blocked where it is longer than a block (a row block of dyno-tile-kernels
      // is often one block already).
      if (ShapedType::isDynamic(ranges[*across]) || ShapedType::isDynamic(ranges[innermost]) ||
          ranges[innermost] <= side)
        continue;
      SmallVector<int64_t> tileSizes(op.getNumLoops(), 0);
      if (ranges[*across] > side)
        tileSizes[*across] = side;
      tileSizes[innermost] = side;
      linalg::LinalgTilingOptions options;
      options.setTileSizes(tileSizes).setLoopType(linalg::LinalgTilingLoopType::Loops);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::TiledLinalgOp> tiled = linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled))
        continue; // left as it is: correct, only slower
      rewriter.eraseOp(op);
    }
  }
};
} // namespace
