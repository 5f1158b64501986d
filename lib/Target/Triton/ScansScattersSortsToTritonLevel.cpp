//===- ScansScattersSortsToTritonLevel.cpp - Scans, sorts, scatters in Triton -*- C++ -*-===//
//
// Lowers the kernels that hold one dyno.scan, dyno.sort or dyno.scatter (after
// dyno-split-kernels-for-triton gave each its own kernel) to `tl` block programs. See
// Passes.td for what each becomes and what stays eager.
//
//===----------------------------------------------------------------------===//
#include "BlockConfigs.h"
#include "IterationSpace.h"
#include "ScanScatterSortEmitter.h"
#include "SizeArguments.h"

#include "dyno/Target/Triton/Passes.h"
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#define DEBUG_TYPE "dyno-convert-scans-scatters-sorts-to-triton-level"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOCONVERTSCANSSCATTERSSORTSTOTRITONLEVEL
#include "dyno/Target/Triton/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;
using tl::sizeArgumentOf;

namespace mlir::dyno {

LogicalResult ScanScatterSortEmitter::createKernel() {
  MLIRContext *context = oldKernel.getContext();
  SmallVector<Type> argumentTypes;
  int64_t largest = 0;
  auto addPosition = [&](Type type) -> LogicalResult {
    if (isa<IntegerType, IndexType>(type)) {
      argumentTypes.push_back(type);
      return success();
    }
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!ranked)
      return op->emitOpError("has an operand of type ")
                 << type << ", which the Triton target does not pass",
             failure();
    if (ranked.hasStaticShape()) {
      largest = std::max(largest, ranked.getNumElements());
    } else {
      if (!isa<ScanOp>(op))
        return op->emitOpError("has a Triton lowering for static shapes only (scans take "
                               "symbolic sizes)"),
               failure();
      dynamicShapes = true;
    }
    argumentTypes.push_back(tl::PtrType::get(context, ranked.getElementType()));
    return success();
  };
  for (Type type : oldKernel.getArgumentTypes())
    if (failed(addPosition(type)))
      return failure();
  for (Type type : oldKernel.getResultTypes())
    if (failed(addPosition(type)))
      return failure();
  SmallVector<Type> positionTypes(oldKernel.getArgumentTypes());
  llvm::append_range(positionTypes, oldKernel.getResultTypes());
  SmallVector<LaunchSize> dynamicSizes = launchSizes(positionTypes);
  unsigned firstSize = argumentTypes.size();
  argumentTypes.append(dynamicSizes.size(), IndexType::get(context));
  OpBuilder moduleBuilder(oldKernel);
  newKernel = func::FuncOp::create(moduleBuilder, oldKernel.getLoc(), oldKernel.getName(),
                                   FunctionType::get(context, argumentTypes, {}));
  Block *entry = newKernel.addEntryBlock();
  pointers.assign(entry->getArguments().begin(), entry->getArguments().begin() + firstSize);
  for (auto [i, size] : llvm::enumerate(dynamicSizes))
    sizeArguments[{size.position, size.dim}] = entry->getArgument(firstSize + i);
  b.emplace(OpBuilder::atBlockBegin(entry));
  auto returnOp = func::ReturnOp::create(*b, loc);
  b->setInsertionPoint(returnOp);
  Builder attrs(context);
  newKernel->setAttr(tl::kIndexBitsAttr, attrs.getI64IntegerAttr(
                                            dynamicShapes || largest >= (int64_t(1) << 31)
                                                ? 64
                                                : 32));
  return success();
}

Value ScanScatterSortEmitter::sizeOf(Value value, int64_t dim) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || dim < 0 || dim >= type.getRank())
    return {};
  if (!type.isDynamicDim(dim))
    return index(type.getDimSize(dim));
  return sizeArgumentOf(oldKernel, sizeArguments, value, dim).value_or(Value());
}

Value ScanScatterSortEmitter::productOf(ArrayRef<Value> sizes) {
  int64_t constant = 1;
  Value product;
  for (Value size : sizes) {
    if (std::optional<int64_t> known = getConstantIntValue(size)) {
      constant *= *known;
      continue;
    }
    product = product ? arith::MulIOp::create(*b, loc, product, size).getResult() : size;
  }
  if (!product)
    return index(constant);
  return constant == 1 ? product : arith::MulIOp::create(*b, loc, product, index(constant));
}

void ScanScatterSortEmitter::setConfigs(bool rows, int64_t xnumel, int64_t rnumel,
                                   bool persistent, ArrayRef<int64_t> xnumelArguments) {
  Builder attrs(newKernel.getContext());
  newKernel->setAttr(tl::kXNumelAttr, attrs.getI64IntegerAttr(xnumel));
  newKernel->setAttr(tl::kRNumelAttr, attrs.getI64IntegerAttr(rnumel));
  if (!xnumelArguments.empty())
    newKernel->setAttr(tl::kXNumelArgsAttr, attrs.getDenseI64ArrayAttr(xnumelArguments));
  // The configurations are chosen for estimates of symbolic sizes (as KernelEmitter's).
  int64_t xEstimate = xnumelArguments.empty() ? xnumel : int64_t(1) << 20;
  int64_t rEstimate = rnumel < 0 ? 1024 : rnumel;
  ArrayAttr configs = blockConfigs(attrs, rows, persistent, xEstimate, rEstimate);
  // A scatter updates its result in place (atomically, or read-combine-write): run twice,
  // it would combine twice. The autotuner times a kernel by running it on the call's own
  // tensors, so a scatter gets one configuration, which is never tuned.
  if (isa<ScatterOp>(op))
    configs = attrs.getArrayAttr({configs[0]});
  newKernel->setAttr(tl::kConfigsAttr, configs);
}

FailureOr<Memory> ScanScatterSortEmitter::memoryOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (auto argument = dyn_cast<BlockArgument>(value))
    return Memory{pointers[argument.getArgNumber()], type.getShape(), Value()};
  Operation *def = value.getDefiningOp();
  // Reshapes of contiguous memory keep its element order.
  if (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
    FailureOr<Memory> source = memoryOf(def->getOperand(0));
    if (succeeded(source) && source->iota)
      return op->emitOpError("reads a reshaped iota, which its Triton kernel does not "
                             "compute"),
             failure();
    if (failed(source) || source->scalar)
      return source;
    return Memory{source->pointer, type.getShape(), Value()};
  }
  auto generic = dyn_cast_or_null<linalg::GenericOp>(def);
  auto sort = dyn_cast<SortOp>(op);
  if (generic && sort && value != sort.getOutputs()[0] &&
      iotaDimension(generic) == sort.getDimension())
    return Memory{Value(), type.getShape(), Value(), type.getElementType()};
  if (Value scalar = generic ? scalarFillValue(generic) : Value()) {
    if (auto constant = scalar.getDefiningOp<arith::ConstantOp>()) {
      OpBuilder::InsertionGuard guard(*b);
      return Memory{Value(), type.getShape(), b->clone(*constant)->getResult(0)};
    }
  }
  return op->emitOpError("reads a tensor its Triton kernel cannot address (")
             << (def ? def->getName().getStringRef() : StringRef("an argument")) << ")",
         failure();
}

FailureOr<Value> ScanScatterSortEmitter::resultPointer(Value value) {
  auto returned = cast<func::ReturnOp>(oldKernel.getBody().front().getTerminator());
  for (auto [i, operand] : llvm::enumerate(returned.getOperands()))
    if (operand == value)
      return pointers[oldKernel.getNumArguments() + i];
  return op->emitOpError("result is returned through an op its Triton kernel cannot "
                         "write"),
         failure();
}

Value ScanScatterSortEmitter::cloneOnBlocks(Operation *source, ArrayRef<Value> operands) {
  bool anyBlock = llvm::any_of(operands, [](Value v) {
    return isa<RankedTensorType>(v.getType());
  });
  OperationState state(loc, source->getName());
  for (Value operand : operands)
    state.addOperands(anyBlock ? splat(operand) : operand);
  state.addAttributes(source->getAttrs());
  for (Type type : source->getResultTypes())
    state.addTypes(anyBlock ? Type(blockType(type)) : type);
  return b->create(state)->getResult(0);
}

std::pair<Value, Value> ScanScatterSortEmitter::lineOffsets(ArrayRef<Value> sizes, int64_t dim,
                                                       Value &x, Value &r, Value &position,
                                                       Value rowOffset) {
  Value length = sizes[dim];
  Value after = productOf(sizes.drop_front(dim + 1));
  SmallVector<Value> others(sizes.begin(), sizes.end());
  others.erase(others.begin() + dim);
  Value lines = productOf(others);
  Value pid = tl::ProgramIdOp::create(*b, loc, 0);
  Value xblock = tl::BlockSizeOp::create(*b, loc, "XBLOCK");
  x = tl::RangeOp::create(*b, loc, blockType(b->getIndexType()), "XBLOCK", 0);
  x = binary<arith::AddIOp>(binary<arith::MulIOp>(pid, xblock), x);
  r = tl::RangeOp::create(*b, loc, blockType(b->getIndexType()), "RBLOCK", 1);
  if (rowOffset)
    r = binary<arith::AddIOp>(r, rowOffset);
  Value mask = binary<arith::AndIOp>(lessThan(x, lines), lessThan(r, length));
  // Line x starts at (x / after) * (length * after) + x % after; its elements are
  // `after` apart.
  Value start = binary<arith::AddIOp>(
      binary<arith::MulIOp>(binary<arith::DivUIOp>(x, after), productOf({length, after})),
      binary<arith::RemUIOp>(x, after));
  position = r;
  return {binary<arith::AddIOp>(start, binary<arith::MulIOp>(r, after)), mask};
}

LogicalResult ScanScatterSortEmitter::emit() {
  if (failed(createKernel()))
    return failure();
  if (auto scan = dyn_cast<ScanOp>(op))
    return emitScan(scan);
  if (auto sort = dyn_cast<SortOp>(op))
    return emitSort(sort);
  return emitScatter(cast<ScatterOp>(op));
}

} // namespace mlir::dyno

namespace {

struct ConvertScansScattersSortsToTritonLevelPass
    : mlir::dyno::impl::DynoConvertScansScattersSortsToTritonLevelBase<
          ConvertScansScattersSortsToTritonLevelPass> {
  void runOnOperation() override {
    for (func::FuncOp kernel : llvm::to_vector(getOperation().getOps<func::FuncOp>())) {
      if (kernel.isExternal() || kernel->hasAttr(tl::kConfigsAttr))
        continue;
      SmallVector<Operation *> scanScatterSorts;
      kernel.walk([&](Operation *op) {
        if (isa<ScanOp, ScatterOp, SortOp>(op))
          scanScatterSorts.push_back(op);
      });
      if (scanScatterSorts.empty())
        continue;
      if (scanScatterSorts.size() > 1) {
        scanScatterSorts[1]->emitOpError("shares its kernel with another scan, scatter or sort; "
                                   "dyno-split-kernels-for-triton gives each its own");
        return signalPassFailure();
      }
      ScanScatterSortEmitter emitter(kernel, scanScatterSorts.front());
      if (failed(emitter.emit())) {
        emitter.eraseNewKernel();
        return signalPassFailure();
      }
      kernel.erase();
    }
  }
};

} // namespace
