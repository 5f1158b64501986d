//===- LibraryCalls.h - Contractions as library calls -----------*- C++ -*-===//
//
// Which linalg contractions a library computes (dyno.contraction), shared by the passes
// that keep them whole until kernel formation, and the rewrite itself.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_LIBRARYCALLS_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_LIBRARYCALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
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

/// `mm(A, B) + bias` (torch-mlir's addmm: a matmul into zeros, then an elementwise add
/// of a bias on every row) accumulates into the broadcast bias instead, so that
/// dyno-form-kernels calls addmm, which rounds once, as eager's addmm does. bf16/f16
/// operands with their widened bias always (dyno-widen-low-precision-floats: a separate
/// add rounds the product first and the sum again); f32 operands with an f32 bias when
/// `float32` (dyno-row-bias-into-matmuls: cuBLAS adds the bias in the product's
/// epilogue where a kernel would add it after). Does nothing to other matmuls.
void accumulateIntoRowBias(linalg::MatmulOp matmul, RewriterBase &rewriter, bool float32);

/// A named op's attributes without the segment sizes its builder recomputes.
SmallVector<NamedAttribute> namedOpAttributes(Operation *op);

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_LIBRARYCALLS_H
