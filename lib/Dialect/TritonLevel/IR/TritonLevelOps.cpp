//===- TritonLevelOps.cpp - Dyno's Triton-level ops -------------*- C++ -*-===//
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::dyno::tl;

LogicalResult mlir::dyno::tl::verifyBlockName(Operation *op, StringRef name) {
  auto kernel = op->getParentOfType<func::FuncOp>();
  auto configs = kernel ? kernel->getAttrOfType<ArrayAttr>(kConfigsAttr) : ArrayAttr();
  if (!configs || configs.empty() || !isa<DictionaryAttr>(configs[0]))
    return op->emitOpError("must be inside a kernel with a '") << kConfigsAttr << "' attribute";
  if (name == "num_warps" || !cast<DictionaryAttr>(configs[0]).get(name))
    return op->emitOpError("names block size '") << name << "', which the kernel's "
           << kConfigsAttr << " does not define";
  return success();
}

LogicalResult BlockSizeOp::verify() { return verifyBlockName(*this, getName()); }

LogicalResult RangeOp::verify() {
  auto type = getResult().getType();
  if (getDim() < 0 || getDim() >= type.getRank())
    return emitOpError("dimension ") << getDim() << " is out of range for a block of rank "
                                     << type.getRank();
  return verifyBlockName(*this, getBlock());
}

LogicalResult FullOp::verify() {
  auto type = getResult().getType();
  if (static_cast<int64_t>(getShape().size()) != type.getRank())
    return emitOpError("has ") << getShape().size() << " block sizes for a block of rank "
                               << type.getRank();
  if (type.getElementType() != getValue().getType())
    return emitOpError("fills a block of ") << type.getElementType() << " with a "
                                            << getValue().getType();
  for (Attribute size : getShape()) {
    StringRef name = cast<StringAttr>(size).getValue();
    if (name != "1" && failed(verifyBlockName(*this, name)))
      return failure();
  }
  return success();
}

LogicalResult SplatOp::verify() {
  if (getResult().getType().getElementType() != getValue().getType())
    return emitOpError("splats a ") << getValue().getType() << " into a block of "
                                    << getResult().getType().getElementType();
  return success();
}

static LogicalResult verifyAccess(Operation *op, PtrType ptr, Type offsets, Value mask) {
  auto offsetBlock = dyn_cast<RankedTensorType>(offsets);
  if (mask) {
    if (!offsetBlock)
      return op->emitOpError("has a mask but a scalar offset");
    if (cast<RankedTensorType>(mask.getType()).getRank() != offsetBlock.getRank())
      return op->emitOpError("has a mask whose rank differs from the offsets'");
  }
  (void)ptr;
  return success();
}

LogicalResult LoadOp::verify() {
  Type element = getPtr().getType().getElementType();
  Type result = getResult().getType();
  if (getElementTypeOrSelf(result) != element)
    return emitOpError("loads ") << getElementTypeOrSelf(result) << " through a pointer to "
                                 << element;
  bool blockResult = isa<RankedTensorType>(result);
  bool blockOffsets = isa<RankedTensorType>(getOffsets().getType());
  if (blockResult != blockOffsets)
    return emitOpError("result must be a block exactly when the offsets are a block");
  if (blockResult && cast<RankedTensorType>(result).getRank() !=
                         cast<RankedTensorType>(getOffsets().getType()).getRank())
    return emitOpError("result rank differs from the offsets' rank");
  return verifyAccess(*this, getPtr().getType(), getOffsets().getType(), getMask());
}

LogicalResult StoreOp::verify() {
  Type element = getPtr().getType().getElementType();
  if (getElementTypeOrSelf(getValue().getType()) != element)
    return emitOpError("stores ") << getElementTypeOrSelf(getValue().getType())
                                  << " through a pointer to " << element;
  if (isa<RankedTensorType>(getValue().getType()) &&
      !isa<RankedTensorType>(getOffsets().getType()))
    return emitOpError("stores a block to a scalar offset");
  return verifyAccess(*this, getPtr().getType(), getOffsets().getType(), getMask());
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, RankedTensorType type) {
  if (axis < 0 || axis >= type.getRank())
    return op->emitOpError("axis ") << axis << " is out of range for a block of rank "
                                    << type.getRank();
  return success();
}

LogicalResult ReduceOp::verify() {
  auto type = getInput().getType();
  if (failed(verifyAxis(*this, getAxis(), type)))
    return failure();
  Type element = type.getElementType();
  bool isFloat = isa<FloatType>(element);
  StringRef kind = getKind();
  bool valid = llvm::StringSwitch<bool>(kind)
                   .Cases({"sum", "prod"}, true)
                   .Cases({"max", "min", "maxnum", "minnum"}, isFloat)
                   .Cases({"maxsi", "minsi", "maxui", "minui", "and", "or", "xor"}, !isFloat)
                   .Default(false);
  if (!valid)
    return emitOpError("reduction kind '") << kind << "' is not defined for " << element;
  return success();
}

LogicalResult PickReduceOp::verify() {
  auto values = getValue().getType(), positions = getPosition().getType();
  if (failed(verifyAxis(*this, getAxis(), values)))
    return failure();
  if (values.getShape() != positions.getShape())
    return emitOpError("values and positions must have one shape");
  if (!positions.getElementType().isInteger(64))
    return emitOpError("positions must be i64, got ") << positions.getElementType();
  if (getKind() != "max" && getKind() != "min")
    return emitOpError("pick kind '") << getKind() << "' is neither 'max' nor 'min'";
  if (!isa<FloatType, IntegerType>(values.getElementType()))
    return emitOpError("picks among ") << values.getElementType()
                                       << ", which is neither a float nor an integer";
  return success();
}

LogicalResult ScanOp::verify() {
  auto type = getInput().getType();
  if (failed(verifyAxis(*this, getAxis(), type)))
    return failure();
  StringRef kind = getKind();
  bool custom = kind == "combine";
  if (!custom && kind != "sum" && kind != "prod" && kind != "maxsi" && kind != "minsi")
    return emitOpError("scan kind '") << kind << "' is none of 'sum', 'prod', 'maxsi', "
                                       << "'minsi' and 'combine'";
  if (!custom)
    return getCombiner().empty()
               ? success()
               : emitOpError("has a combiner region, which only kind 'combine' takes");
  Type element = type.getElementType();
  if (!getCombiner().hasOneBlock() || getCombiner().front().getNumArguments() != 2 ||
      llvm::any_of(getCombiner().front().getArgumentTypes(),
                   [&](Type t) { return t != element; }))
    return emitOpError("kind 'combine' needs a combiner of one block with two ")
           << element << " arguments";
  // (A block that does not end in a terminator has none to ask for: bad input.)
  Block &combiner = getCombiner().front();
  auto yield = dyn_cast_or_null<YieldOp>(combiner.empty() ? nullptr : &combiner.back());
  if (!yield || yield.getValue().getType() != element)
    return emitOpError("combiner must end in a tl.yield of one ") << element;
  return success();
}

LogicalResult SortOp::verify() {
  auto type = getInput().getType();
  if (failed(verifyAxis(*this, getAxis(), type)))
    return failure();
  if (!type.getElementType().isSignlessInteger())
    return emitOpError("sorts ") << type.getElementType() << "; keys must be integers";
  return success();
}

LogicalResult AtomicOp::verify() {
  Type element = getPtr().getType().getElementType();
  if (getValue().getType().getElementType() != element)
    return emitOpError("combines ") << getValue().getType().getElementType()
                                    << " into a pointer to " << element;
  if (getValue().getType().getRank() != getOffsets().getType().getRank())
    return emitOpError("value rank differs from the offsets' rank");
  StringRef kind = getKind();
  // Triton has max/min atomics of integers and of float32/float64 (not float16).
  bool extremum = kind == "max" || kind == "min";
  if (kind != "add" &&
      !(extremum && (isa<IntegerType>(element) || element.isF32() || element.isF64())))
    return emitOpError("atomic kind '") << kind << "' is not defined for " << element;
  return verifyAccess(*this, getPtr().getType(), getOffsets().getType(), getMask());
}

#define GET_OP_CLASSES
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.cpp.inc"
