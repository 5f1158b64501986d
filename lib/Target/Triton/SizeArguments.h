//===- SizeArguments.h - The size arguments of a Triton-level kernel -*- C++ -*-===//
//
// Where a Triton-level kernel finds the dynamic sizes of its tensors: the size arguments
// the launch ABI appends after the pointers (dyno/Dialect/Dyno/IR/LaunchAbi.h, whose
// `launchSizes` both Triton emitters build them from).
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_LIB_TARGET_TRITON_SIZEARGUMENTS_H
#define DYNO_LIB_TARGET_TRITON_SIZEARGUMENTS_H

#include "dyno/Dialect/Dyno/IR/LaunchAbi.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::dyno::tl {

/// (argument or result position, dim) -> the size argument.
using SizeArguments = DenseMap<std::pair<unsigned, int64_t>, Value>;

/// The size argument of dynamic dimension `dim` of `tensor` when `tensor` is one of
/// `kernel`'s arguments or returned tensors (null if that dimension has none);
/// std::nullopt for any other tensor, whose size the caller derives.
inline std::optional<Value> sizeArgumentOf(func::FuncOp kernel,
                                           const SizeArguments &sizeArguments,
                                           Value tensor, int64_t dim) {
  if (auto argument = dyn_cast<BlockArgument>(tensor)) {
    if (argument.getOwner() != &kernel.getBody().front())
      return Value();
    return sizeArguments.lookup({argument.getArgNumber(), dim});
  }
  auto returned = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  for (OpOperand &operand : returned->getOpOperands())
    if (operand.get() == tensor)
      return sizeArguments.lookup({kernel.getNumArguments() + operand.getOperandNumber(), dim});
  return std::nullopt;
}

} // namespace mlir::dyno::tl

#endif // DYNO_LIB_TARGET_TRITON_SIZEARGUMENTS_H
