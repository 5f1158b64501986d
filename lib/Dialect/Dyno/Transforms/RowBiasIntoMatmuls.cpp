//===- RowBiasIntoMatmuls.cpp - f32 addmm's bias into its library call -*- C++ -*-===//
//
// A float32 matmul whose only reader adds a bias on every row (torch-mlir's addmm), and
// whose biased result no computing kernel reads, accumulates into the broadcast bias, so
// that kernel formation calls addmm: cuBLAS adds the bias in the product's epilogue
// instead of kernels of its own. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/LibraryCalls.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOROWBIASINTOMATMULS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {

/// Whether every reader of `value`, seen through reshapes, slices and transposes (views
/// in the wrapper), is a library call or the function's result: then nothing that
/// computes would fuse an elementwise add of the bias, which would run in kernels of
/// its own (one per slice of GPT-2's fused QKV, one per head layout of q, k and v).
/// Where an elementwise kernel reads it (a GELU, a residual add), that kernel adds the
/// bias for free and cuBLAS's plain product (faster than its bias epilogue in float32
/// on an H200) stays, as Inductor's unfused addmm does.
bool onlyLibrariesRead(Value value) {
  for (Operation *reader : value.getUsers()) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractSliceOp,
            linalg::TransposeOp>(reader)) {
      // A transpose (or an insert into a larger tensor) reads `value` as its input:
      // follow its result.
      if (auto transpose = dyn_cast<linalg::TransposeOp>(reader);
          transpose && transpose.getInput() != value)
        return false;
      if (!onlyLibrariesRead(reader->getResult(0)))
        return false;
      continue;
    }
    if (isa<func::ReturnOp, dyno::LibraryCallOp>(reader) || dyno::isLibraryContraction(reader))
      continue;
    return false;
  }
  return true;
}

struct RowBiasIntoMatmulsPass
    : mlir::dyno::impl::DynoRowBiasIntoMatmulsBase<RowBiasIntoMatmulsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp matmul) {
      // The product's one reader (the bias add) and what reads the sum.
      if (matmul->hasOneUse() && (*matmul->user_begin())->getNumResults() == 1 &&
          onlyLibrariesRead((*matmul->user_begin())->getResult(0)))
        matmuls.push_back(matmul);
    });
    for (linalg::MatmulOp matmul : matmuls)
      dyno::accumulateIntoRowBias(matmul, rewriter, /*float32=*/true);
  }
};
} // namespace
