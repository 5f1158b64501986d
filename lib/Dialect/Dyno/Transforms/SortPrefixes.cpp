//===- SortPrefixes.cpp - Sorts read only in a leading slice ------*- C++ -*-===//
//
// topk is a sort followed by a slice of its first k elements (torch-mlir's lowering).
// This pass records k on the sort (`prefix`), whose lowering then selects the k first
// elements instead of sorting whole lines. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#define DEBUG_TYPE "dyno-sort-prefixes"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOSORTPREFIXES
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
/// The number of leading elements along `dim` that the users of `sort` read, when every
/// user is a slice with static offset, size and stride along `dim`.
std::optional<int64_t> leadingElementsRead(dyno::SortOp sort) {
  int64_t dim = sort.getDimension();
  int64_t needed = 0;
  for (Value result : sort.getResults()) {
    for (Operation *user : result.getUsers()) {
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      if (!slice)
        return std::nullopt;
      int64_t offset = slice.getStaticOffsets()[dim];
      int64_t size = slice.getStaticSizes()[dim];
      int64_t stride = slice.getStaticStrides()[dim];
      if (ShapedType::isDynamic(offset) || ShapedType::isDynamic(size) ||
          ShapedType::isDynamic(stride) || stride < 1 || size < 1)
        return std::nullopt;
      needed = std::max(needed, offset + (size - 1) * stride + 1);
    }
  }
  if (needed == 0)
    return std::nullopt;
  return needed;
}

struct SortPrefixesPass : dyno::impl::DynoSortPrefixesBase<SortPrefixesPass> {
  void runOnOperation() override {
    getOperation().walk([&](dyno::SortOp sort) {
      auto type = cast<RankedTensorType>(sort.getOutputs()[0].getType());
      int64_t length = type.getDimSize(sort.getDimension());
      std::optional<int64_t> needed = leadingElementsRead(sort);
      if (!needed || ShapedType::isDynamic(length) || *needed >= length)
        return;
      if (sort.getPrefix() && *sort.getPrefix() <= *needed)
        return;
      sort.setPrefix(*needed);
    });
  }
};
} // namespace
