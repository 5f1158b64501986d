//===- dyno-opt.cpp - Dyno's pass-pipeline driver ---------------*- C++ -*-===//
//
// Every upstream and Dyno pass plus Dyno's named pipelines, e.g.
//   dyno-opt --dyno-cpu-pipeline graph.mlir
//
// mlir-opt's driver (MlirOptMain), with one addition: bad input gets a diagnostic and a
// nonzero exit, never a crash, even where upstream MLIR's parser or verifiers fail an
// assertion on it (the prebuilt kit keeps LLVM's assertions). e2e/dyno_opt_fuzz.py
// found such inputs: a dense array of `index` elements, an affine map whose results
// name more dimensions than it declares, a malformed `linalg.transpose`. The input is
// parsed and verified once more, first, under crash recovery; an assertion there becomes
// an error. Dyno's passes run without crash recovery, so a crash in them still dies with
// LLVM's stack trace (a bug of ours to fix, not to hide); the fuzzer re-runs every
// recovered input with --recover-parser-crashes=false and counts an assertion reached
// through one of Dyno's own verifiers as a crash.
//
//===----------------------------------------------------------------------===//
#include "dyno/InitAll.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;

/// Parses (and, as MlirOptMain will, verifies) each piece of `input` with upstream
/// MLIR's parser under crash recovery. Fails, having said so on stderr, when an
/// assertion or another crash ended a parse; a parse that merely fails succeeds here,
/// since MlirOptMain reports its diagnostics next.
static LogicalResult parsesWithoutCrashing(const llvm::MemoryBuffer &input,
                                           StringRef inputName, DialectRegistry &registry,
                                           const MlirOptMainConfig &config) {
  bool crashed = false;
  auto parsePiece = [&](std::unique_ptr<llvm::MemoryBuffer> piece,
                        llvm::raw_ostream &) -> LogicalResult {
    auto context = std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
    context->allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
    context->getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(std::move(piece), llvm::SMLoc());
    ParserConfig parserConfig(context.get(), config.shouldVerifyOnParsing());
    llvm::CrashRecoveryContext recovery;
    const void *stackTraceState = llvm::SavePrettyStackState();
    if (!recovery.RunSafely([&] {
          (void)parseSourceFileForTool(sourceMgr, parserConfig,
                                       /*insertImplicitModule=*/!config.shouldUseExplicitModule());
        })) {
      // The crash skipped the destructors of the stack-trace entries the parse had pushed;
      // the context stays allocated, in whatever state the assertion left it.
      llvm::RestorePrettyStackState(stackTraceState);
      (void)context.release();
      crashed = true;
      return failure();
    }
    return success();
  };
  llvm::CrashRecoveryContext::Enable();
  (void)splitAndProcessBuffer(llvm::MemoryBuffer::getMemBuffer(input.getMemBufferRef(),
                                                               /*RequiresNullTerminator=*/false),
                              parsePiece, llvm::nulls(), config.inputSplitMarker());
  llvm::CrashRecoveryContext::Disable();
  if (!crashed)
    return success();
  llvm::WithColor::error(llvm::errs(), "dyno-opt")
      << inputName << ": MLIR's parser or an op verifier failed an internal assertion on "
      << "this input (printed above) instead of diagnosing it; the input is malformed "
      << "(--recover-parser-crashes=false shows where it failed)\n";
  return failure();
}

static llvm::cl::opt<bool> recoverParserCrashes(
    "recover-parser-crashes",
    llvm::cl::desc("Turn an assertion in MLIR's parser or an op verifier on the input into "
                   "an error (off: crash with LLVM's stack trace, to see where it was)"),
    llvm::cl::init(true));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  dyno::registerAllPasses();
  DialectRegistry registry;
  dyno::registerAllDialects(registry);
  auto [inputName, outputName] =
      registerAndParseCLIOptions(argc, argv, "Dyno optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(MlirOptMain(argc, argv, inputName, outputName, registry));

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputName, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (recoverParserCrashes && failed(parsesWithoutCrashing(*input, inputName, registry, config)))
    return EXIT_FAILURE;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(outputName, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
