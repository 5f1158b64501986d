//===- RowBiasIntoMatmuls.cpp - f32 addmm's bias into its library call -*- C++ -*-===//
//
// A float32 matmul whose only reader adds a bias on every row (torch-mlir's addmm)
// accumulates into the broadcast bias, so that kernel formation calls addmm: cuBLAS adds
// the bias in the product's epilogue. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/LibraryCalls.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOROWBIASINTOMATMULS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
struct RowBiasIntoMatmulsPass
    : mlir::dyno::impl::DynoRowBiasIntoMatmulsBase<RowBiasIntoMatmulsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp matmul) { matmuls.push_back(matmul); });
    for (linalg::MatmulOp matmul : matmuls)
      dyno::accumulateIntoRowBias(matmul, rewriter, /*float32=*/true);
  }
};
} // namespace
