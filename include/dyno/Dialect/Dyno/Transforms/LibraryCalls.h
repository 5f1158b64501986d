//===- LibraryCalls.h - Contractions as library calls -----------*- C++ -*-===//
//
// Which linalg contractions a library computes (dyno.contraction), shared by the passes
// that keep them whole until kernel formation, and the rewrite itself.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_LIBRARYCALLS_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_LIBRARYCALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"

namespace mlir::dyno {

/// A named linalg contraction that kernel formation makes a library call where its
/// operands allow: linalg.matmul, linalg.batch_matmul and the 2-D convolutions
/// (conv_2d_nchw_fchw, grouped conv_2d_ngchw_gfchw, depthwise_conv_2d_nchw_chw). Passes
/// before kernel formation keep these ops named: a reshape propagated through one, or a
/// transpose fused into it, would leave a linalg.generic that no library call matches.
bool isLibraryContraction(Operation *op);

/// Rewrites the library contractions of `func` into dyno.contraction where a library
/// computes exactly the same thing; the others stay in kernels. bf16/f16 contractions
/// call the library in their own precision (tensor cores, no widened copies of the
/// operands), and their users read its result widened. `convolutionBiasInLibrary`:
/// a convolution's bias is the call's operand; otherwise an elementwise op after the
/// call adds it, which kernel formation fuses into the kernels that read the result.
void formLibraryCalls(func::FuncOp func, bool convolutionBiasInLibrary = true);

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_LIBRARYCALLS_H
