//===- LowerScansScattersSorts.cpp - Scans, scatters and sorts as loops -*- C++ -*-===//
//
// dyno.scan, dyno.scatter and dyno.sort become scf.for loops on loop-carried tensors
// (tensor.extract / tensor.insert), which bufferize in place. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "dyno-lower-scans-scatters-sorts"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOLOWERSCANSSCATTERSSORTS
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

namespace {

Value sizeOf(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  return getValueOrCreateConstantIndexOp(b, loc, tensor::getMixedSize(b, loc, tensor, dim));
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// Clones the single-block region's ops with its arguments bound to `arguments` and
/// returns the yielded value.
Value inlineRegion(OpBuilder &b, Region &region, ValueRange arguments) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), arguments);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  return mapping.lookupOrDefault(block.getTerminator()->getOperand(0));
}

/// A loop nest over `sizes` (none: the body runs once) carrying `carried`.
SmallVector<Value> buildNest(OpBuilder &b, Location loc, ValueRange sizes, ValueRange carried,
                             function_ref<SmallVector<Value>(OpBuilder &, Location,
                                                             ValueRange, ValueRange)>
                                 body) {
  SmallVector<Value> lbs(sizes.size(), indexConstant(b, loc, 0));
  SmallVector<Value> steps(sizes.size(), indexConstant(b, loc, 1));
  scf::LoopNest nest = scf::buildLoopNest(b, loc, lbs, sizes, steps, carried,
                                          [&](OpBuilder &nb, Location nl, ValueRange ivs,
                                              ValueRange args) -> scf::ValueVector {
                                            return body(nb, nl, ivs, args);
                                          });
  return SmallVector<Value>(nest.results);
}

/// Runs `body` once per line along `dim` (each position of the other dimensions, whose
/// sizes are `outerSizes`), in parallel (scf.forall, OpenMP on the CPU) when there are
/// other dimensions. The body gets the positions and, for each of `tensors`, its line (a
/// 1-d tensor) where `hasDim` says the tensor has `dim`, else its element at the
/// position (a 0-d tensor); it returns them updated. Returns the updated tensors.
SmallVector<Value> overLines(
    OpBuilder &b, Location loc, ValueRange tensors, ArrayRef<bool> hasDim, int64_t dim,
    ValueRange outerSizes,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange, ValueRange)> body) {
  if (outerSizes.empty())
    return body(b, loc, {}, tensors);
  SmallVector<OpFoldResult> upperBounds(outerSizes.begin(), outerSizes.end());
  auto forall = scf::ForallOp::create(b, loc, upperBounds, tensors, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  SmallVector<Value> outer = forall.getInductionVars();
  struct Slice {
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };
  SmallVector<Slice> slices;
  SmallVector<Value> parts;
  for (auto [i, shared] : llvm::enumerate(forall.getRegionIterArgs())) {
    auto type = cast<RankedTensorType>(shared.getType());
    Slice slice;
    unsigned position = 0;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (hasDim[i] && d == dim) {
        slice.offsets.push_back(b.getIndexAttr(0));
        slice.sizes.push_back(tensor::getMixedSize(b, loc, shared, d));
      } else {
        slice.offsets.push_back(outer[position++]);
        slice.sizes.push_back(b.getIndexAttr(1));
      }
      slice.strides.push_back(b.getIndexAttr(1));
    }
    SmallVector<int64_t> partShape;
    if (hasDim[i])
      partShape.push_back(type.getDimSize(dim));
    auto partType = RankedTensorType::get(partShape, type.getElementType());
    parts.push_back(tensor::ExtractSliceOp::create(b, loc, partType, shared, slice.offsets,
                                                   slice.sizes, slice.strides));
    slices.push_back(std::move(slice));
  }
  SmallVector<Value> updated = body(b, loc, outer, parts);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [i, shared] : llvm::enumerate(forall.getRegionIterArgs()))
    tensor::ParallelInsertSliceOp::create(b, loc, updated[i], shared, slices[i].offsets,
                                          slices[i].sizes, slices[i].strides);
  return SmallVector<Value>(forall.getResults());
}

/// Positions `outer` (all dimensions but `dim`) with `inner` inserted at `dim`.
SmallVector<Value> withDim(ValueRange outer, int64_t dim, Value inner) {
  SmallVector<Value> indices(outer);
  indices.insert(indices.begin() + dim, inner);
  return indices;
}

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

/// The float op of a region that is one addf/mulf of its two arguments.
std::optional<StringRef> simpleFloatCombiner(Region &region) {
  Block &block = region.front();
  if (!llvm::hasSingleElement(block.without_terminator()))
    return std::nullopt;
  Operation &op = block.front();
  if (!isa<arith::AddFOp, arith::MulFOp>(op) ||
      block.getTerminator()->getOperand(0) != op.getResult(0))
    return std::nullopt;
  auto uses = [&](Value v) { return op.getOperand(0) == v || op.getOperand(1) == v; };
  if (!uses(block.getArgument(0)) || !uses(block.getArgument(1)))
    return std::nullopt;
  return op.getName().getStringRef();
}

LogicalResult lowerScan(RewriterBase &rewriter, ScanOp scan) {
  Location loc = scan.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(scan);
  Value input = scan.getInputs()[0];
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t dim = scan.getDimension();
  bool inclusive = scan.getInclusive();
  Type element = inputType.getElementType();
  // Eager's CPU cumsum/cumprod accumulate float in double.
  std::optional<StringRef> combiner = simpleFloatCombiner(scan.getRegion());
  auto floatType = dyn_cast<FloatType>(element);
  bool widen = combiner && floatType && floatType.getWidth() < 64;
  Type carryType = widen ? Type(b.getF64Type()) : element;
  auto toCarry = [&](OpBuilder &nb, Location nl, Value v) -> Value {
    return widen ? arith::ExtFOp::create(nb, nl, carryType, v).getResult() : v;
  };
  auto fromCarry = [&](OpBuilder &nb, Location nl, Value v) -> Value {
    return widen ? arith::TruncFOp::create(nb, nl, element, v).getResult() : v;
  };
  auto combine = [&](OpBuilder &nb, Location nl, Value carry, Value x) -> Value {
    if (!widen)
      return inlineRegion(nb, scan.getRegion(), {carry, x});
    if (*combiner == arith::AddFOp::getOperationName())
      return arith::AddFOp::create(nb, nl, carry, x);
    return arith::MulFOp::create(nb, nl, carry, x);
  };

  SmallVector<Value> outerSizes;
  for (int64_t d = 0; d < inputType.getRank(); ++d)
    if (d != dim)
      outerSizes.push_back(sizeOf(b, loc, input, d));
  Value length = sizeOf(b, loc, input, dim);
  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);

  SmallVector<Value> results = overLines(
      b, loc, scan.getOutputs(), {true, false}, dim, outerSizes,
      [&](OpBuilder &nb, Location nl, ValueRange outer, ValueRange tensors) {
        // The output's line (1-d) and the accumulator's element (0-d).
        Value output = tensors[0], accumulator = tensors[1];
        Value initial =
            toCarry(nb, nl, tensor::ExtractOp::create(nb, nl, accumulator, ValueRange{}));
        // Carried: output, running value, last value stored (the accumulator's result).
        auto loop = scf::ForOp::create(
            nb, nl, zero, length, one, ValueRange{output, initial, initial},
            [&](OpBuilder &lb, Location ll, Value k, ValueRange args) {
              Value x = tensor::ExtractOp::create(lb, ll, input, withDim(outer, dim, k));
              Value xc = toCarry(lb, ll, x);
              Value stored, next;
              if (inclusive) {
                Value first = arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::eq, k, zero);
                Value combined = combine(lb, ll, args[1], xc);
                next = arith::SelectOp::create(lb, ll, first, xc, combined);
                stored = next;
              } else {
                stored = args[1];
                next = combine(lb, ll, args[1], xc);
              }
              Value updated = tensor::InsertOp::create(lb, ll, fromCarry(lb, ll, stored),
                                                       args[0], ValueRange{k});
              scf::YieldOp::create(lb, ll, ValueRange{updated, next, stored});
            });
        Value last = fromCarry(nb, nl, loop.getResult(2));
        Value newAccumulator =
            tensor::InsertOp::create(nb, nl, last, accumulator, ValueRange{});
        return SmallVector<Value>{loop.getResult(0), newAccumulator};
      });
  rewriter.replaceOp(scan, results);
  return success();
}

//===----------------------------------------------------------------------===//
// Scatter
//===----------------------------------------------------------------------===//

LogicalResult lowerScatter(RewriterBase &rewriter, ScatterOp scatter) {
  Location loc = scatter.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(scatter);
  Value updates = scatter.getUpdates(), indices = scatter.getIndices();
  auto updatesType = cast<RankedTensorType>(updates.getType());
  int64_t originalRank = cast<RankedTensorType>(scatter.getOriginal().getType()).getRank();
  ArrayRef<int64_t> dimensionMap = scatter.getDimensionMap();
  int64_t windowRank = updatesType.getRank() - 1;
  int64_t offset = originalRank - windowRank;
  // Every leading dimension of original must get its coordinate from the indices.
  for (int64_t d = 0; d < offset; ++d)
    if (!llvm::is_contained(dimensionMap, d))
      return scatter.emitOpError("dimension ")
             << d << " of original is addressed neither by indices nor by updates";

  SmallVector<Value> sizes;
  for (int64_t d = 0; d <= windowRank; ++d)
    sizes.push_back(sizeOf(b, loc, updates, d));
  SmallVector<Value> results = buildNest(
      b, loc, sizes, scatter.getOutputs(),
      [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange tensors) {
        Value update = tensor::ExtractOp::create(nb, nl, updates, ivs);
        SmallVector<Value> position(originalRank);
        for (int64_t w = 0; w < windowRank; ++w)
          position[offset + w] = ivs[1 + w];
        for (auto [column, d] : llvm::enumerate(dimensionMap)) {
          Value raw = tensor::ExtractOp::create(
              nb, nl, indices, ValueRange{ivs[0], indexConstant(nb, nl, column)});
          Value index = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), raw);
          position[d] = position[d] ? arith::AddIOp::create(nb, nl, position[d], index)
                                    : index;
        }
        Value current = tensor::ExtractOp::create(nb, nl, tensors[0], position);
        Value combined = inlineRegion(nb, scatter.getRegion(), {update, current});
        return SmallVector<Value>{
            tensor::InsertOp::create(nb, nl, combined, tensors[0], position)};
      });
  rewriter.replaceOp(scatter, results);
  return success();
}

//===----------------------------------------------------------------------===//
// Sort
//===----------------------------------------------------------------------===//

/// `may a precede b` from the comparator, ordering NaN as eager does where the
/// comparator is an ordered float comparison of the first output's elements.
Value compare(OpBuilder &b, Location loc, SortOp sort, ValueRange pairs) {
  Value result = inlineRegion(b, sort.getRegion(), pairs);
  Block &block = sort.getRegion().front();
  auto cmp = block.getTerminator()->getOperand(0).getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp.getLhs() != block.getArgument(0) || cmp.getRhs() != block.getArgument(1))
    return result;
  Value a = pairs[0], bv = pairs[1];
  auto isNan = [&](Value v) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v).getResult();
  };
  auto orOf = [&](Value x, Value y) { return arith::OrIOp::create(b, loc, x, y).getResult(); };
  auto andNot = [&](Value x, Value y) {
    Value t = arith::ConstantIntOp::create(b, loc, 1, 1);
    return arith::AndIOp::create(b, loc, x, arith::XOrIOp::create(b, loc, y, t)).getResult();
  };
  switch (cmp.getPredicate()) {
  case arith::CmpFPredicate::OLE: // ascending, NaN last
    return orOf(result, isNan(bv));
  case arith::CmpFPredicate::OLT:
    return orOf(result, andNot(isNan(bv), isNan(a)));
  case arith::CmpFPredicate::OGE: // descending, NaN first
    return orOf(result, isNan(a));
  case arith::CmpFPredicate::OGT:
    return orOf(result, andNot(isNan(a), isNan(bv)));
  default:
    return result;
  }
}

/// Largest prefix selected by insertion (O(n k) comparisons and moves per line in the
/// worst case, O(n) for data in random order); longer prefixes sort whole lines.
constexpr int64_t kMaxSelectedPrefix = 32;

/// The first `prefix` elements of each line in sorted order (stable), in place: each
/// element enters the sorted prefix if it is new to it (i < prefix) or precedes the
/// prefix's last, by insertion (the last falls out).
SmallVector<Value> selectPrefix(OpBuilder &b, Location loc, SortOp sort, ValueRange lines,
                                Value length, int64_t prefix) {
  unsigned count = lines.size();
  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
  Value last = indexConstant(b, loc, prefix - 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, length, one, lines,
      [&](OpBuilder &lb, Location ll, Value i, ValueRange current) {
        SmallVector<Value> values, againstLast;
        for (unsigned o = 0; o < count; ++o) {
          values.push_back(tensor::ExtractOp::create(lb, ll, current[o], ValueRange{i}));
          againstLast.push_back(tensor::ExtractOp::create(lb, ll, current[o], ValueRange{last}));
          againstLast.push_back(values.back());
        }
        Value isNew = arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::ult, i,
                                            indexConstant(lb, ll, prefix));
        Value lastPrecedes = compare(lb, ll, sort, againstLast);
        Value enters = arith::OrIOp::create(
            lb, ll, isNew,
            arith::XOrIOp::create(lb, ll, lastPrecedes,
                                  arith::ConstantIntOp::create(lb, ll, 1, 1)));
        Value end = arith::MinUIOp::create(lb, ll, i, last);
        auto ifOp = scf::IfOp::create(
            lb, ll, enters,
            [&](OpBuilder &tb, Location tl) {
              // Shift the prefix elements that v must precede one slot up.
              SmallVector<Value> init = {end};
              init.append(current.begin(), current.end());
              SmallVector<Type> types = llvm::to_vector(ValueRange(init).getTypes());
              auto shift = scf::WhileOp::create(
                  tb, tl, types, init,
                  [&](OpBuilder &cb, Location cl, ValueRange args) {
                    Value j = args[0];
                    Value positive =
                        arith::CmpIOp::create(cb, cl, arith::CmpIPredicate::ugt, j, zero);
                    Value previous = arith::SubIOp::create(
                        cb, cl, arith::MaxUIOp::create(cb, cl, j, one), one);
                    SmallVector<Value> pairs;
                    for (unsigned o = 0; o < count; ++o) {
                      pairs.push_back(
                          tensor::ExtractOp::create(cb, cl, args[1 + o], ValueRange{previous}));
                      pairs.push_back(values[o]);
                    }
                    Value stays = compare(cb, cl, sort, pairs);
                    Value moves = arith::AndIOp::create(
                        cb, cl, positive,
                        arith::XOrIOp::create(cb, cl, stays,
                                              arith::ConstantIntOp::create(cb, cl, 1, 1)));
                    scf::ConditionOp::create(cb, cl, moves, args);
                  },
                  [&](OpBuilder &wb, Location wl, ValueRange args) {
                    Value j = args[0];
                    Value previous = arith::SubIOp::create(wb, wl, j, one);
                    SmallVector<Value> yields = {previous};
                    for (unsigned o = 0; o < count; ++o) {
                      Value moved =
                          tensor::ExtractOp::create(wb, wl, args[1 + o], ValueRange{previous});
                      yields.push_back(
                          tensor::InsertOp::create(wb, wl, moved, args[1 + o], ValueRange{j}));
                    }
                    scf::YieldOp::create(wb, wl, yields);
                  });
              Value slot = shift.getResult(0);
              SmallVector<Value> inserted;
              for (unsigned o = 0; o < count; ++o)
                inserted.push_back(tensor::InsertOp::create(tb, tl, values[o],
                                                            shift.getResult(1 + o),
                                                            ValueRange{slot}));
              scf::YieldOp::create(tb, tl, inserted);
            },
            [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, current); });
        scf::YieldOp::create(lb, ll, ifOp.getResults());
      });
  return SmallVector<Value>(loop.getResults());
}

LogicalResult lowerSort(RewriterBase &rewriter, SortOp sort) {
  Location loc = sort.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(sort);
  ValueRange outputs = sort.getOutputs();
  auto type = cast<RankedTensorType>(outputs[0].getType());
  int64_t dim = sort.getDimension();
  unsigned count = outputs.size();

  SmallVector<Value> outerSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != dim)
      outerSizes.push_back(sizeOf(b, loc, outputs[0], d));
  Value length = sizeOf(b, loc, outputs[0], dim);
  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
  Value two = indexConstant(b, loc, 2), four = indexConstant(b, loc, 4);
  // One merge pass over a line: runs of `width` from `src` merged into `dst`.
  auto mergePass = [&](OpBuilder &pb, Location pl, ValueRange src, ValueRange dst,
                       Value width) -> SmallVector<Value> {
    Value span = arith::MulIOp::create(pb, pl, width, two);
    Value last = arith::SubIOp::create(pb, pl, length, one);
    SmallVector<Value> init(dst);
    init.push_back(zero); // i: next of the left run
    init.push_back(zero); // j: next of the right run
    auto loop = scf::ForOp::create(
        pb, pl, zero, length, one, init,
        [&](OpBuilder &lb, Location ll, Value k, ValueRange args) {
          Value runStart = arith::MulIOp::create(
              lb, ll, arith::DivUIOp::create(lb, ll, k, span), span);
          Value mid = arith::MinUIOp::create(
              lb, ll, arith::AddIOp::create(lb, ll, runStart, width), length);
          Value end = arith::MinUIOp::create(
              lb, ll, arith::AddIOp::create(lb, ll, runStart, span), length);
          Value starts = arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::eq, k, runStart);
          Value i = arith::SelectOp::create(lb, ll, starts, runStart, args[count]);
          Value j = arith::SelectOp::create(lb, ll, starts, mid, args[count + 1]);
          Value leftLeft = arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::ult, i, mid);
          Value rightLeft = arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::ult, j, end);
          Value iRead = arith::MinUIOp::create(lb, ll, i, last);
          Value jRead = arith::MinUIOp::create(lb, ll, j, last);
          SmallVector<Value> pairs, lefts, rights;
          for (unsigned o = 0; o < count; ++o) {
            lefts.push_back(tensor::ExtractOp::create(lb, ll, src[o], ValueRange{iRead}));
            rights.push_back(tensor::ExtractOp::create(lb, ll, src[o], ValueRange{jRead}));
            pairs.append({lefts.back(), rights.back()});
          }
          Value ordered = compare(lb, ll, sort, pairs);
          Value rightDone = arith::XOrIOp::create(
              lb, ll, rightLeft, arith::ConstantIntOp::create(lb, ll, 1, 1));
          Value takeLeft = arith::AndIOp::create(
              lb, ll, leftLeft, arith::OrIOp::create(lb, ll, rightDone, ordered));
          SmallVector<Value> yields;
          for (unsigned o = 0; o < count; ++o) {
            Value v = arith::SelectOp::create(lb, ll, takeLeft, lefts[o], rights[o]);
            yields.push_back(tensor::InsertOp::create(lb, ll, v, args[o], ValueRange{k}));
          }
          Value step = arith::IndexCastOp::create(lb, ll, lb.getIndexType(),
                                                  arith::ExtUIOp::create(
                                                      lb, ll, lb.getI64Type(), takeLeft));
          yields.push_back(arith::AddIOp::create(lb, ll, i, step));
          yields.push_back(arith::AddIOp::create(
              lb, ll, j, arith::SubIOp::create(lb, ll, one, step)));
          scf::YieldOp::create(lb, ll, yields);
        });
    return SmallVector<Value>(loop.getResults().take_front(count));
  };

  SmallVector<bool> hasDim(count, true);
  SmallVector<Value> results = overLines(
      b, loc, outputs, hasDim, dim, outerSizes,
      [&](OpBuilder &nb, Location nl, ValueRange outer, ValueRange lines) {
        std::optional<int64_t> prefix = sort.getPrefix();
        if (prefix && *prefix <= kMaxSelectedPrefix)
          return selectPrefix(nb, nl, sort, lines, length, *prefix);
        // Scratch lines: merge passes alternate between the lines and these. Not
        // tensor.empty: CSE would merge two of one type, and bufferization gives uses
        // of one empty tensor one buffer (its contents are undefined, so no conflict):
        // the values' and the indices' merges would then share their scratch.
        SmallVector<Value> whileInit(lines);
        for (Value line : lines) {
          auto lineType = cast<RankedTensorType>(line.getType());
          SmallVector<Value> dynamicSizes;
          if (lineType.isDynamicDim(0))
            dynamicSizes.push_back(length);
          whileInit.push_back(
              bufferization::AllocTensorOp::create(nb, nl, lineType, dynamicSizes));
        }
        // while (width < length): merge lines -> scratch (width), scratch -> lines
        // (2 width); width *= 4. A pass whose runs cover the line only copies it.
        whileInit.push_back(one);
        SmallVector<Type> whileTypes = llvm::to_vector(ValueRange(whileInit).getTypes());
        auto loop = scf::WhileOp::create(
            nb, nl, whileTypes, whileInit,
            [&](OpBuilder &cb, Location cl, ValueRange args) {
              Value more =
                  arith::CmpIOp::create(cb, cl, arith::CmpIPredicate::ult, args.back(), length);
              scf::ConditionOp::create(cb, cl, more, args);
            },
            [&](OpBuilder &wb, Location wl, ValueRange args) {
              ValueRange data = args.take_front(count);
              ValueRange scratch = args.slice(count, count);
              Value width = args.back();
              SmallVector<Value> merged = mergePass(wb, wl, data, scratch, width);
              Value doubled = arith::MulIOp::create(wb, wl, width, two);
              SmallVector<Value> back = mergePass(wb, wl, merged, data, doubled);
              SmallVector<Value> yields(back);
              yields.append(merged);
              yields.push_back(arith::MulIOp::create(wb, wl, width, four));
              scf::YieldOp::create(wb, wl, yields);
            });
        return SmallVector<Value>(loop.getResults().take_front(count));
      });
  rewriter.replaceOp(sort, results);
  return success();
}

struct LowerScansScattersSortsPass
    : dyno::impl::DynoLowerScansScattersSortsBase<LowerScansScattersSortsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<ScanOp, ScatterOp, SortOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      LogicalResult lowered = TypeSwitch<Operation *, LogicalResult>(op)
                                  .Case([&](ScanOp scan) { return lowerScan(rewriter, scan); })
                                  .Case([&](ScatterOp s) { return lowerScatter(rewriter, s); })
                                  .Case([&](SortOp sort) { return lowerSort(rewriter, sort); });
      if (failed(lowered))
        return signalPassFailure();
    }
  }
};
} // namespace
