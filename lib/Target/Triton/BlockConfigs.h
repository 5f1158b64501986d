//===- BlockConfigs.h - Block sizes of a Triton kernel ----------*- C++ -*-===//
#ifndef DYNO_LIB_TARGET_TRITON_BLOCKCONFIGS_H
#define DYNO_LIB_TARGET_TRITON_BLOCKCONFIGS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::dyno {

/// The kernel's `tl.configs`: dictionaries of XBLOCK (and RBLOCK for a reduction) and
/// num_warps, the heuristic's choice first, for `xnumel` rows of `rnumel` reduced
/// elements (estimates when sizes are dynamic). `persistent`: the whole reduced extent
/// fits one RBLOCK.
ArrayAttr blockConfigs(Builder &b, bool reduction, bool persistent, int64_t xnumel,
                       int64_t rnumel);

} // namespace mlir::dyno

#endif // DYNO_LIB_TARGET_TRITON_BLOCKCONFIGS_H
