//===- DynoOps.cpp - Dyno operations ----------------------------*- C++ -*-===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::dyno;

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

/// Number of dynamic dimensions over the tensor types among `types`.
static int64_t countDynamicDims(TypeRange types) {
  int64_t count = 0;
  for (Type type : types)
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      count += tensor.getNumDynamicDims();
  return count;
}

LogicalResult LaunchOp::verify() {
  int64_t dynamicDims = countDynamicDims(getResultTypes());
  if (dynamicDims != static_cast<int64_t>(getDims().size()))
    return emitOpError("results have ")
           << dynamicDims << " dynamic dimension(s) but the launch gives "
           << getDims().size() << " size(s) in dims(...)";
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *callee = symbolTable.lookupNearestSymbolFrom(*this, getCalleeAttr());
  if (!callee)
    return emitOpError("'") << getCallee() << "' does not reference a kernel";
  unsigned numOperands = getArgs().size() + getNumResults();
  if (auto func = dyn_cast<func::FuncOp>(callee)) {
    FunctionType type = func.getFunctionType();
    bool onTensors =
        llvm::all_of(type.getResults(), llvm::IsaPred<TensorType>) &&
        llvm::all_of(type.getInputs(), llvm::IsaPred<TensorType, IntegerType, IndexType>);
    if (onTensors) {
      if (TypeRange(type.getInputs()) != TypeRange(getArgs().getTypes()) ||
          TypeRange(type.getResults()) != TypeRange(getResultTypes()))
        return emitOpError("kernel type ")
               << type << " does not match the launch's operand and result types";
      return success();
    }
    // Bufferized: one operand per argument, then one out-parameter per result, then
    // (once sizes are passed as arguments) one index per dynamic dimension.
    int64_t withSizes = numOperands + countDynamicDims(getArgs().getTypes()) +
                        countDynamicDims(getResultTypes());
    if ((type.getNumInputs() != numOperands && type.getNumInputs() != withSizes) ||
        type.getNumResults() != 0)
      return emitOpError("bufferized kernel type ")
             << type << " does not take one buffer per launch operand and result";
    return success();
  }
  if (auto func = dyn_cast<LLVM::LLVMFuncOp>(callee)) {
    int64_t expected = numOperands + countDynamicDims(getArgs().getTypes()) +
                       countDynamicDims(getResultTypes());
    if (func.getNumArguments() != expected)
      return emitOpError("lowered kernel takes ")
             << func.getNumArguments() << " arguments but the launch passes " << expected
             << " (operands, result buffers and dynamic sizes)";
    return success();
  }
  return emitOpError("'") << getCallee() << "' is neither a func.func nor an llvm.func";
}

//===----------------------------------------------------------------------===//
// ExternOp
//===----------------------------------------------------------------------===//

namespace {
struct ExternSignature {
  unsigned minArgs, maxArgs;
  int64_t operandRank; // rank of the first two operands
};
} // namespace

static std::optional<ExternSignature> lookupExtern(StringRef name) {
  return llvm::StringSwitch<std::optional<ExternSignature>>(name)
      .Case("matmul", ExternSignature{2, 3, 2})
      .Case("batch_matmul", ExternSignature{2, 3, 3})
      .Case("conv2d", ExternSignature{2, 3, 4})
      .Default(std::nullopt);
}

LogicalResult ExternOp::verify() {
  std::optional<ExternSignature> signature = lookupExtern(getName());
  if (!signature)
    return emitOpError("unknown library operation '") << getName() << "'";
  unsigned numArgs = getArgs().size();
  if (numArgs < signature->minArgs || numArgs > signature->maxArgs)
    return emitOpError("'") << getName() << "' takes " << signature->minArgs << " to "
                            << signature->maxArgs << " operands, got " << numArgs;
  for (unsigned i = 0; i < 2; ++i)
    if (cast<RankedTensorType>(getArgs()[i].getType()).getRank() != signature->operandRank)
      return emitOpError("operand #")
             << i << " of '" << getName() << "' must have rank " << signature->operandRank;
  bool isConv = getName() == "conv2d";
  bool hasConvAttrs = getStrides() && getPadding() && getDilations() && getGroups();
  if (isConv && !hasConvAttrs)
    return emitOpError("'conv2d' needs strides, padding, dilations and groups");
  if (!isConv && (getStrides() || getPadding() || getDilations() || getGroups()))
    return emitOpError("only 'conv2d' takes strides, padding, dilations or groups");
  if (isConv)
    for (ArrayRef<int64_t> values : {*getStrides(), *getPadding(), *getDilations()})
      if (values.size() != 2)
        return emitOpError("'conv2d' strides, padding and dilations have two values each");
  return success();
}

#define GET_OP_CLASSES
#include "dyno/Dialect/Dyno/IR/DynoOps.cpp.inc"
