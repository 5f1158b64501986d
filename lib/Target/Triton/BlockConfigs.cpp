//===- BlockConfigs.cpp - Block sizes of a Triton kernel --------*- C++ -*-===//
#include "BlockConfigs.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dyno;

ArrayAttr mlir::dyno::blockConfigs(Builder &b, bool reduction, bool persistent, int64_t xnumel,
                              int64_t rnumel) {
  auto pow2 = [](int64_t n) { return static_cast<int64_t>(llvm::PowerOf2Ceil(std::max<int64_t>(n, 1))); };
  auto warpsFor = [](int64_t elements) {
    return std::clamp<int64_t>(elements / 256, 1, 8);
  };
  SmallVector<Attribute> configs;
  auto add = [&](int64_t x, int64_t r) {
    SmallVector<NamedAttribute> entries{b.getNamedAttr("XBLOCK", b.getI64IntegerAttr(x))};
    if (reduction)
      entries.push_back(b.getNamedAttr("RBLOCK", b.getI64IntegerAttr(r)));
    entries.push_back(b.getNamedAttr("num_warps", b.getI64IntegerAttr(warpsFor(x * r))));
    Attribute config = b.getDictionaryAttr(entries);
    if (!llvm::is_contained(configs, config))
      configs.push_back(config);
  };
  int64_t xLimit = pow2(xnumel);
  if (!reduction) {
    int64_t x = std::min<int64_t>(1024, xLimit);
    for (int64_t candidate : {x, x / 2, x * 2})
      if (candidate >= 1 && candidate <= std::min<int64_t>(xLimit, 4096))
        add(candidate, 1);
  } else if (persistent) {
    // About 2048 elements per program: a block of rows for long rows, many rows for
    // short ones (a pooling window of 4).
    int64_t r = pow2(rnumel);
    int64_t xMax = std::min<int64_t>(xLimit, 1024);
    int64_t x = std::clamp<int64_t>(2048 / r, 1, xMax);
    for (int64_t candidate : {x, x * 2, x / 2})
      if (candidate >= 1 && candidate <= xMax)
        add(candidate, r);
  } else {
    int64_t r = std::min<int64_t>(1024, pow2(rnumel));
    for (int64_t candidate : {r, r * 2, r / 2})
      add(1, candidate);
  }
  return b.getArrayAttr(configs);
}
