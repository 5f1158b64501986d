//===- LaunchAbi.h - The calling convention of Dyno's kernels ---*- C++ -*-===//
//
// The launch ABI that dyno.launch documents (DynoOps.td), declared once for every target.
// A kernel's *positions* are the arguments and then the results of its tensor-level
// signature. It is called with, per position, a pointer (a tensor; results are written
// through theirs) or the value itself (a scalar), and after them one index per dynamic
// dimension of every tensor position, in order (`launchSizes`). The CPU target
// (dyno-pass-sizes-as-arguments), both Triton emitters (dyno-convert-kernels-to-
// triton-level, dyno-convert-scans-scatters-sorts-to-triton-level) and the host wrapper
// that launches them (python/dyno/targets/wrapper.py, `emit_launch`) follow it.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_IR_LAUNCHABI_H
#define DYNO_DIALECT_DYNO_IR_LAUNCHABI_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeRange.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::dyno {

/// One size argument of a launch: dynamic dimension `dim` of the tensor at `position`.
struct LaunchSize {
  unsigned position;
  int64_t dim;
};

/// The size arguments of a kernel whose positions have `types` (its arguments, then its
/// results; tensors or memrefs), in the order the kernel takes them after the pointers
/// and scalars.
inline SmallVector<LaunchSize> launchSizes(TypeRange types) {
  SmallVector<LaunchSize> sizes;
  for (auto [position, type] : llvm::enumerate(types))
    if (auto shaped = dyn_cast<ShapedType>(type); shaped && shaped.hasRank())
      for (int64_t dim = 0; dim < shaped.getRank(); ++dim)
        if (shaped.isDynamicDim(dim))
          sizes.push_back({static_cast<unsigned>(position), dim});
  return sizes;
}

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_IR_LAUNCHABI_H
