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

LogicalResult LaunchOp::verify() {
  for (Type type : getResultTypes())
    if (!cast<RankedTensorType>(type).hasStaticShape())
      return emitOpError("results must have static shapes, the runtime allocates them; got ")
             << type;
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *callee = symbolTable.lookupNearestSymbolFrom(*this, getCalleeAttr());
  if (!callee)
    return emitOpError("'") << getCallee() << "' does not reference a kernel";
  unsigned numBuffers = getArgs().size() + getNumResults();
  if (auto func = dyn_cast<func::FuncOp>(callee)) {
    FunctionType type = func.getFunctionType();
    bool onTensors = llvm::all_of(type.getInputs(), llvm::IsaPred<TensorType>) &&
                     llvm::all_of(type.getResults(), llvm::IsaPred<TensorType>);
    if (onTensors) {
      if (TypeRange(type.getInputs()) != TypeRange(getArgs().getTypes()) ||
          TypeRange(type.getResults()) != TypeRange(getResultTypes()))
        return emitOpError("kernel type ")
               << type << " does not match the launch's operand and result types";
      return success();
    }
    // Bufferized: one buffer per argument, then one out-parameter per result.
    if (type.getNumInputs() != numBuffers || type.getNumResults() != 0)
      return emitOpError("bufferized kernel type ")
             << type << " does not take one buffer per launch operand and result";
    return success();
  }
  if (auto func = dyn_cast<LLVM::LLVMFuncOp>(callee)) {
    if (func.getNumArguments() != numBuffers)
      return emitOpError("lowered kernel takes ")
             << func.getNumArguments() << " arguments but the launch passes " << numBuffers
             << " pointers";
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
