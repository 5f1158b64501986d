//===- OutputFiles.h - Passes that write a file -----------------*- C++ -*-===//
//
// dyno-write-ir and dyno-write-triton leave a stage's output in a file mid-pipeline;
// this is how either writes it, and how a missing or unwritable file is reported.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_OUTPUTFILES_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_OUTPUTFILES_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::dyno {

/// Writes `text` to `file` (overwritten) for the pass `passName`; an empty file name
/// or a file that cannot be opened is an error on `op`.
inline LogicalResult writeOutputFile(Operation *op, StringRef passName, StringRef file,
                                     StringRef text) {
  if (file.empty())
    return op->emitError(passName) << " needs a file (" << passName << "{file=...})";
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(file, &error);
  if (!output)
    return op->emitError(passName) << ": " << error;
  output->os() << text;
  output->keep();
  return success();
}

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_OUTPUTFILES_H
