//===- WriteIR.cpp - Write the IR to a file mid-pipeline --------*- C++ -*-===//
//
// Prints the operation the pass runs on to a file and changes nothing, so that one
// dyno-opt process can run several of Dyno's pipelines and still leave each stage's IR
// behind. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/Transforms/OutputFiles.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/IR/OperationSupport.h"

#define DEBUG_TYPE "dyno-write-ir"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOWRITEIR
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {
struct WriteIRPass : mlir::dyno::impl::DynoWriteIRBase<WriteIRPass> {
  using DynoWriteIRBase::DynoWriteIRBase;

  void runOnOperation() override {
    markAllAnalysesPreserved();
    // The flags dyno-opt's own output uses (--mlir-print-op-generic and the like).
    std::string text;
    llvm::raw_string_ostream stream(text);
    getOperation()->print(stream, OpPrintingFlags());
    stream << "\n";
    if (failed(dyno::writeOutputFile(getOperation(), getArgument(), file, text)))
      signalPassFailure();
  }
};
} // namespace
