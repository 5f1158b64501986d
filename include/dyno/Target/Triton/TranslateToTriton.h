//===- TranslateToTriton.h - Triton-level kernels as Python -----*- C++ -*-===//
#ifndef DYNO_TARGET_TRITON_TRANSLATETOTRITON_H
#define DYNO_TARGET_TRITON_TRANSLATETOTRITON_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::dyno {

/// Prints every Triton-level kernel (a `func.func` with `tl.configs`) nested in `op` as a
/// `@triton.jit` function, followed by a `KERNELS` launch table. Emits a diagnostic and
/// fails, printing nothing, when an op has no Triton spelling.
LogicalResult translateToTriton(Operation *op, raw_ostream &os);

/// Registers the `--mlir-to-triton` translation (dyno-translate).
void registerToTritonTranslation();

} // namespace mlir::dyno

#endif // DYNO_TARGET_TRITON_TRANSLATETOTRITON_H
