//===- WriteTriton.cpp - Triton source to a file, as a pass -----*- C++ -*-===//
//
// The --mlir-to-triton translation as the last pass of a dyno-opt pipeline, so that
// the Triton target compiles a graph in one process. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Triton/Passes.h"
#include "dyno/Dialect/Dyno/Transforms/OutputFiles.h"
#include "dyno/Target/Triton/TranslateToTriton.h"

#define DEBUG_TYPE "dyno-write-triton"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOWRITETRITON
#include "dyno/Target/Triton/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
struct WriteTritonPass : mlir::dyno::impl::DynoWriteTritonBase<WriteTritonPass> {
  using DynoWriteTritonBase::DynoWriteTritonBase;

  void runOnOperation() override {
    markAllAnalysesPreserved();
    // Translated in memory first: a kernel that has no Triton spelling leaves no file.
    std::string source;
    llvm::raw_string_ostream stream(source);
    if (failed(dyno::translateToTriton(getOperation(), stream)) ||
        failed(dyno::writeOutputFile(getOperation(), getArgument(), file, source)))
      signalPassFailure();
  }
};
} // namespace
