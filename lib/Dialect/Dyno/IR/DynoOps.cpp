//===- DynoOps.cpp - Dyno operations ----------------------------*- C++ -*-===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
  if (std::optional<ArrayRef<int64_t>> initial = getInitialValues()) {
    if (initial->size() != getNumResults())
      return emitOpError("has ") << initial->size() << " initial value(s) for "
                                 << getNumResults() << " result(s)";
    for (auto [i, position] : llvm::enumerate(*initial)) {
      if (position == -1)
        continue;
      if (position < 0 || position >= static_cast<int64_t>(getArgs().size()))
        return emitOpError("initial value ") << position << " of result " << i
                                             << " is not an argument position";
      if (getArgs()[position].getType() != getResult(i).getType())
        return emitOpError("result ") << i << " of type " << getResult(i).getType()
                                      << " cannot start as argument " << position
                                      << " of type " << getArgs()[position].getType();
    }
  }
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
// ContractionOp
//===----------------------------------------------------------------------===//

namespace {
struct ContractionSignature {
  unsigned minArgs, maxArgs;
  int64_t operandRank; // rank of the first two operands
};
} // namespace

static std::optional<ContractionSignature> lookupContraction(StringRef name) {
  return llvm::StringSwitch<std::optional<ContractionSignature>>(name)
      .Case("matmul", ContractionSignature{2, 3, 2})
      .Case("batch_matmul", ContractionSignature{2, 3, 3})
      .Case("conv2d", ContractionSignature{2, 3, 4})
      .Default(std::nullopt);
}

LogicalResult ContractionOp::verify() {
  std::optional<ContractionSignature> signature = lookupContraction(getName());
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
  if (std::optional<StringRef> epilogue = getEpilogue()) {
    if (getName() != "matmul")
      return emitOpError("only 'matmul' takes an epilogue");
    if (*epilogue != "gelu")
      return emitOpError("unknown epilogue '") << *epilogue << "' (known: 'gelu')";
    if (numArgs == 3 && cast<RankedTensorType>(getArgs()[2].getType()).getRank() != 1)
      return emitOpError("a 'matmul' with an epilogue adds a bias of rank 1, not an "
                         "accumulator");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LibraryCallOp
//===----------------------------------------------------------------------===//

LogicalResult LibraryCallOp::verify() {
  if (!getName().starts_with("aten.") && !isCollective())
    return emitOpError("calls ATen operators (aten.<op>.<overload>) and torch.distributed's "
                       "functional collectives (_c10d_functional.<op>.<overload>), not '")
           << getName() << "'";
  unsigned tensors = 0;
  for (Attribute argument : getArguments()) {
    if (isa<UnitAttr>(argument)) {
      ++tensors;
      continue;
    }
    auto type = dyn_cast<TypeAttr>(argument);
    if (type ? !isa<NoneType>(type.getValue())
             : !isa<BoolAttr, IntegerAttr, FloatAttr, StringAttr, DenseI64ArrayAttr>(argument))
      return emitOpError("argument ") << argument
                                      << " is neither a tensor (unit), none, a bool, an "
                                         "integer, a float, a string nor an array<i64>";
  }
  if (tensors != getArgs().size())
    return emitOpError("'arguments' names ")
           << tensors << " tensors (unit) but the call has " << getArgs().size()
           << " tensor operands";
  return success();
}

//===----------------------------------------------------------------------===//
// Scans, scatters and sorts
//===----------------------------------------------------------------------===//

/// Results are the updated outputs: same number, same types.
static LogicalResult verifyResultsMatchOutputs(Operation *op, ValueRange outputs) {
  if (TypeRange(op->getResultTypes()) != TypeRange(outputs.getTypes()))
    return op->emitOpError("result types must be the outputs' types");
  return success();
}

/// The region's block takes `expected` arguments and yields one value of type `yielded`.
static LogicalResult verifyRegion(Operation *op, Block &block, TypeRange expected,
                                  Type yielded) {
  if (TypeRange(block.getArgumentTypes()) != expected)
    return op->emitOpError("region arguments must be ") << expected.size()
                                                         << " scalars of the operands' "
                                                            "element types";
  // (A block that does not end in a terminator has none to ask for: bad input.)
  auto yield = dyn_cast_or_null<YieldOp>(block.empty() ? nullptr : &block.back());
  if (!yield || yield.getValues().size() != 1 ||
      yield.getValues()[0].getType() != yielded)
    return op->emitOpError("region must yield one value of type ") << yielded;
  return success();
}

static Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

/// Each result has the shape of the output it updates (sizes of a dynamic graph).
static LogicalResult reifyAsOutputs(OpBuilder &builder, ValueRange outputs,
                                    ReifiedRankedShapedTypeDims &shapes) {
  for (Value output : outputs) {
    auto type = cast<RankedTensorType>(output.getType());
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (type.isDynamicDim(d))
        sizes.push_back(
            tensor::DimOp::create(builder, output.getLoc(), output, d).getResult());
      else
        sizes.push_back(builder.getIndexAttr(type.getDimSize(d)));
    }
    shapes.push_back(sizes);
  }
  return success();
}

LogicalResult ScanOp::reifyResultShapes(OpBuilder &builder,
                                        ReifiedRankedShapedTypeDims &shapes) {
  return reifyAsOutputs(builder, getOutputs(), shapes);
}

LogicalResult ScatterOp::reifyResultShapes(OpBuilder &builder,
                                           ReifiedRankedShapedTypeDims &shapes) {
  return reifyAsOutputs(builder, getOutputs(), shapes);
}

LogicalResult SortOp::reifyResultShapes(OpBuilder &builder,
                                        ReifiedRankedShapedTypeDims &shapes) {
  return reifyAsOutputs(builder, getOutputs(), shapes);
}

LogicalResult ScanOp::verify() {
  if (getInputs().size() != 1 || getOutputs().size() != 2)
    return emitOpError("takes one input and two outputs (output, accumulator)");
  if (failed(verifyResultsMatchOutputs(*this, getOutputs())))
    return failure();
  auto input = cast<RankedTensorType>(getInputs()[0].getType());
  auto output = cast<RankedTensorType>(getOutputs()[0].getType());
  auto accumulator = cast<RankedTensorType>(getOutputs()[1].getType());
  int64_t dim = getDimension();
  if (dim < 0 || dim >= input.getRank())
    return emitOpError("dimension ") << dim << " is out of range for rank "
                                     << input.getRank();
  if (output.getShape() != input.getShape() ||
      output.getElementType() != input.getElementType())
    return emitOpError("output must have the input's type");
  SmallVector<int64_t> reduced(input.getShape());
  reduced.erase(reduced.begin() + dim);
  if (accumulator.getShape() != ArrayRef<int64_t>(reduced) ||
      accumulator.getElementType() != input.getElementType())
    return emitOpError("accumulator must have the input's shape without dimension ")
           << dim;
  Type element = input.getElementType();
  return verifyRegion(*this, getRegion().front(), {element, element}, element);
}

LogicalResult ScatterOp::verify() {
  if (getInputs().size() != 2 || getOutputs().size() != 1)
    return emitOpError("takes two inputs (updates, indices) and one output (original)");
  if (failed(verifyResultsMatchOutputs(*this, getOutputs())))
    return failure();
  auto updates = cast<RankedTensorType>(getUpdates().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto original = cast<RankedTensorType>(getOriginal().getType());
  if (indices.getRank() != 2 || !isa<IntegerType>(indices.getElementType()) ||
      indices.isDynamicDim(1))
    return emitOpError("indices must be a 2-d integer tensor of static depth");
  ArrayRef<int64_t> dimensionMap = getDimensionMap();
  if (static_cast<int64_t>(dimensionMap.size()) != indices.getDimSize(1))
    return emitOpError("dimension_map needs one entry per index column (")
           << indices.getDimSize(1) << ")";
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t dim : dimensionMap)
    if (dim < 0 || dim >= original.getRank() || !seen.insert(dim).second)
      return emitOpError("dimension_map entries must be distinct dimensions of original");
  if (updates.getRank() < 1 || updates.getRank() - 1 > original.getRank())
    return emitOpError("updates must have rank 1 to 1 + rank(original)");
  if (!ShapedType::isDynamic(updates.getDimSize(0)) &&
      !ShapedType::isDynamic(indices.getDimSize(0)) &&
      updates.getDimSize(0) != indices.getDimSize(0))
    return emitOpError("updates and indices must have one row per update");
  if (original.getRank() > indices.getDimSize(1) + updates.getRank() - 1)
    return emitOpError("indices and update slices must address every dimension of "
                       "original");
  if (updates.getElementType() != original.getElementType())
    return emitOpError("updates and original must have one element type");
  Type element = original.getElementType();
  return verifyRegion(*this, getRegion().front(), {element, element}, element);
}

LogicalResult SortOp::verify() {
  if (!getInputs().empty() || getOutputs().empty())
    return emitOpError("sorts its outputs: no inputs, at least one output");
  if (failed(verifyResultsMatchOutputs(*this, getOutputs())))
    return failure();
  auto first = cast<RankedTensorType>(getOutputs()[0].getType());
  int64_t dim = getDimension();
  if (dim < 0 || dim >= first.getRank())
    return emitOpError("dimension ") << dim << " is out of range for rank "
                                     << first.getRank();
  if (std::optional<int64_t> prefix = getPrefix()) {
    int64_t length = first.getDimSize(dim);
    if (*prefix < 1 || (!ShapedType::isDynamic(length) && *prefix > length))
      return emitOpError("prefix ") << *prefix << " must be in [1, " << length << "]";
  }
  SmallVector<Type> arguments;
  for (Value output : getOutputs()) {
    if (cast<RankedTensorType>(output.getType()).getShape() != first.getShape())
      return emitOpError("outputs must have one shape");
    arguments.append(2, elementTypeOf(output));
  }
  return verifyRegion(*this, getRegion().front(), arguments,
                      IntegerType::get(getContext(), 1));
}

#define GET_OP_CLASSES
#include "dyno/Dialect/Dyno/IR/DynoOps.cpp.inc"

//===----------------------------------------------------------------------===//
// CheckOp
//===----------------------------------------------------------------------===//

Speculation::Speculatability CheckOp::getSpeculatability() {
  return Speculation::NotSpeculatable;
}

OpFoldResult CheckOp::fold(FoldAdaptor adaptor) {
  if (auto condition = dyn_cast_or_null<IntegerAttr>(adaptor.getCondition());
      condition && condition.getValue().isOne())
    return getValue();
  return {};
}
