//===- CollapseShortInnerLoops.cpp - Short innermost loops merged -*- C++ -*-===//
//
// A linalg op on buffers whose innermost loop is short (a 16-wide image row) has its
// trailing loops merged into one where every operand is contiguous across them, so that
// LLVM's loop vectorizer sees one long loop. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "dyno-collapse-short-inner-loops"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOCOLLAPSESHORTINNERLOOPS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

/// Whether every buffer operand of `op` can be viewed with the loops `run` merged: the
/// loops appear in its indexing map together and in order (or not at all), and its
/// layout keeps the dimensions they index contiguous.
static bool operandsCollapse(linalg::GenericOp op, const ReassociationIndices &run) {
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    // A map with sums of loops (unfold's sliding windows, d0 + d4) has no dimension
    // sequence to keep (upstream's isDimSequencePreserved asserts on it).
    if (!map.isProjectedPermutation() || !linalg::isDimSequencePreserved(map, run))
      return false;
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      return false;
    std::optional<unsigned> first = map.getResultPosition(
        getAffineDimExpr(run.front(), op.getContext()));
    if (!first)
      continue; // the operand does not follow these loops (a broadcast)
    SmallVector<ReassociationIndices> grouping;
    for (int64_t d = 0; d < type.getRank();) {
      if (d == static_cast<int64_t>(*first)) {
        ReassociationIndices group;
        for (size_t i = 0; i < run.size(); ++i)
          group.push_back(d++);
        grouping.push_back(group);
      } else {
        grouping.push_back({d++});
      }
    }
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, grouping))
      return false;
  }
  return true;
}

/// The trailing loops to merge: the fewest whose combined extent reaches
/// `minInnerExtent`, all of one iterator type; empty when the innermost loop is long
/// enough already, or no two loops merge.
static ReassociationIndices trailingRun(linalg::GenericOp op, int64_t minInnerExtent) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t last = static_cast<int64_t>(ranges.size()) - 1;
  if (last < 1 || ShapedType::isDynamic(ranges[last]) || ranges[last] >= minInnerExtent)
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  ReassociationIndices run = {last};
  ReassociationIndices accepted;
  int64_t extent = ranges[last];
  for (int64_t d = last - 1; d >= 0 && extent < minInnerExtent; --d) {
    if (ShapedType::isDynamic(ranges[d]) || iterators[d] != iterators[last])
      break;
    run.insert(run.begin(), d);
    if (!operandsCollapse(op, run))
      break;
    accepted = run;
    extent *= ranges[d];
  }
  return accepted;
}

namespace {
struct CollapseShortInnerLoopsPass
    : mlir::dyno::impl::DynoCollapseShortInnerLoopsBase<CollapseShortInnerLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && !op.hasIndexSemantics())
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      ReassociationIndices run = trailingRun(op, minInnerExtent);
      if (run.empty())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, {run}, rewriter);
      if (failed(collapsed))
        continue; // left as it is: still correct, only less vectorizable
      rewriter.eraseOp(op);
    }
  }
};
} // namespace
