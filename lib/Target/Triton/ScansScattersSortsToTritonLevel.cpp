//===- ScansScattersSortsToTritonLevel.cpp - Scans, sorts, scatters in Triton -*- C++ -*-===//
//
// Lowers the kernels that hold one dyno.scan, dyno.sort or dyno.scatter (after
// dyno-split-kernels-for-triton gave each its own kernel) to `tl` block programs. See
// Passes.td for what each becomes and what stays eager.
//
//===----------------------------------------------------------------------===//
#include "BlockConfigs.h"
#include "IterationSpace.h"
#include "SizeArguments.h"

#include "dyno/Target/Triton/Passes.h"
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

#define DEBUG_TYPE "dyno-convert-scans-scatters-sorts-to-triton-level"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOCONVERTSCANSSCATTERSSORTSTOTRITONLEVEL
#include "dyno/Target/Triton/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;
using tl::SizeArguments;
using tl::sizeArgumentOf;

namespace {

/// Longest lines held whole in one program's registers: a scan's block of its element
/// type (f64 for float sums), a sort's block of 64-bit keys. A longer scan loops over
/// chunks of its line (see emitScan).
constexpr int64_t kMaxScanLength = 16384;
constexpr int64_t kMaxSortLength = 16384;
/// A sort read only up to its prefix(k) (topk) with k at most this selects its k first
/// elements one reduction at a time instead of sorting the line.
constexpr int64_t kMaxSelectedPrefix = 32;

/// A tensor of the old kernel as the new kernel reads it: a pointer to contiguous
/// memory of `shape`, or a scalar (a fill).
struct Memory {
  Value pointer;
  ArrayRef<int64_t> shape;
  Value scalar;
  /// An iota along the sort's dimension: each element is its own position (of this
  /// integer type), computed, not loaded.
  Type iota;
};

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t result = 1;
  for (int64_t size : sizes)
    result *= size;
  return result;
}

/// The binary arith op a scan or scatter region applies to its two arguments (in either
/// order) and yields, if that is all it does.
Operation *binaryCombiner(Region &region) {
  Block &block = region.front();
  if (!llvm::hasSingleElement(block.without_terminator()))
    return nullptr;
  Operation &op = block.front();
  if (op.getNumOperands() != 2 || op.getNumResults() != 1 ||
      block.getTerminator()->getOperand(0) != op.getResult(0))
    return nullptr;
  Value a = block.getArgument(0), b = block.getArgument(1);
  bool both = (op.getOperand(0) == a && op.getOperand(1) == b) ||
              (op.getOperand(0) == b && op.getOperand(1) == a);
  return both ? &op : nullptr;
}

class ScanScatterSortEmitter {
public:
  ScanScatterSortEmitter(func::FuncOp kernel, Operation *op)
      : oldKernel(kernel), op(op), loc(op->getLoc()) {}

  LogicalResult emit();
  void eraseNewKernel() {
    if (newKernel)
      newKernel.erase();
  }

private:
  LogicalResult createKernel();
  /// How the new kernel reads the old kernel's tensor `value`.
  FailureOr<Memory> memoryOf(Value value);
  /// The pointer of the old kernel's result that returns `value`.
  FailureOr<Value> resultPointer(Value value);
  /// The launch attributes: `xnumel` (the static part of the line count, times the
  /// size arguments `xnumelArguments`), `rnumel` (-1: a dynamic line length) and the
  /// block configurations. `persistent`: a line fits one RBLOCK (else the kernel loops
  /// over chunks of it).
  void setConfigs(bool rows, int64_t xnumel, int64_t rnumel, bool persistent = true,
                  ArrayRef<int64_t> xnumelArguments = {});

  LogicalResult emitScan(ScanOp scan);
  /// The scan of each line of a block (`tl.scan`, with the region cloned as its combine
  /// function for a combiner of its own).
  FailureOr<Value> scanBlock(ScanOp scan, StringRef kind, Value values);
  /// The scan's combiner applied to blocks: `earlier` (the carry of a line's previous
  /// chunks) before `later`.
  FailureOr<Value> combineBlocks(ScanOp scan, Operation *combiner, StringRef kind,
                                 Value earlier, Value later);
  LogicalResult emitSort(SortOp sort);
  LogicalResult emitScatter(ScatterOp scatter);

  RankedTensorType blockType(Type element) const {
    return RankedTensorType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic), element);
  }
  Value index(int64_t value) { return arith::ConstantIndexOp::create(*b, loc, value); }
  Value constant(Type type, int64_t value) {
    return arith::ConstantOp::create(*b, loc, b->getIntegerAttr(type, value));
  }
  Value splat(Value scalar) {
    if (isa<RankedTensorType>(scalar.getType()))
      return scalar;
    return tl::SplatOp::create(*b, loc, blockType(scalar.getType()), scalar);
  }
  template <typename OpTy>
  Value binary(Value lhs, Value rhs) {
    if (isa<RankedTensorType>(lhs.getType()) || isa<RankedTensorType>(rhs.getType()))
      return OpTy::create(*b, loc, splat(lhs), splat(rhs));
    return OpTy::create(*b, loc, lhs, rhs);
  }
  Value lessThan(Value lhs, int64_t bound) { return lessThan(lhs, index(bound)); }
  Value lessThan(Value lhs, Value bound) {
    return arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::slt, lhs, splat(bound));
  }
  /// Size `dim` of the old kernel's argument or returned tensor `value`: a constant, or
  /// the kernel's size argument (symbolic sizes); null when neither.
  Value sizeOf(Value value, int64_t dim);
  /// The product of `sizes` (index values), folded where constant.
  Value productOf(ArrayRef<Value> sizes);
  Value load(Value pointer, Value offsets, Value mask) {
    auto type = cast<tl::PtrType>(pointer.getType());
    return tl::LoadOp::create(*b, loc, blockType(type.getElementType()), pointer, offsets, mask);
  }
  /// Recreates the elementwise op `source` on blocks.
  Value cloneOnBlocks(Operation *source, ArrayRef<Value> operands);
  /// `x` along dimension 0 and `r` along dimension 1 of a line-wise kernel: the element
  /// offsets of lines along `dim` of a contiguous tensor of `sizes` (index values), and
  /// their mask. `r` starts at `rowOffset` when one is given (a chunk of longer lines).
  std::pair<Value, Value> lineOffsets(ArrayRef<Value> sizes, int64_t dim, Value &x,
                                      Value &r, Value &position, Value rowOffset = Value());
  std::pair<Value, Value> lineOffsets(ArrayRef<int64_t> shape, int64_t dim, Value &x,
                                      Value &r, Value &position) {
    SmallVector<Value> sizes;
    for (int64_t size : shape)
      sizes.push_back(index(size));
    return lineOffsets(sizes, dim, x, r, position);
  }

  func::FuncOp oldKernel, newKernel;
  Operation *op;
  Location loc;
  unsigned rank = 2;
  SmallVector<Value> pointers; // per old argument, then per old result
  // (old argument or result position, dim) -> the size argument (symbolic sizes: one
  // index per dynamic size of every tensor argument and result, after the pointers, the
  // ABI dyno.launch documents).
  SizeArguments sizeArguments;
  bool dynamicShapes = false;
  std::optional<OpBuilder> b;
};

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
  auto type = cast<RankedTensorType>(value.getType());
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

//===----------------------------------------------------------------------===//
// Scans: one line per block row, tl.associative_scan; longer lines chunk by chunk
//===----------------------------------------------------------------------===//

FailureOr<Value> ScanScatterSortEmitter::scanBlock(ScanOp scan, StringRef kind, Value values) {
  auto scanOp = tl::ScanOp::create(*b, loc, values, kind, 1);
  if (kind != "combine")
    return scanOp.getResult();
  // The region's ops, cloned; dyno.yield becomes tl.yield.
  Block &source = scan.getRegion().front();
  Block *target = new Block();
  scanOp.getCombiner().push_back(target);
  IRMapping mapping;
  for (BlockArgument argument : source.getArguments())
    mapping.map(argument, target->addArgument(argument.getType(), loc));
  OpBuilder::InsertionGuard guard(*b);
  b->setInsertionPointToStart(target);
  for (Operation &op : source.without_terminator()) {
    // Constants of the kernel the region reads (canonicalization hoists them out of
    // it) are cloned in: the combine function is printed on its own.
    for (Value operand : op.getOperands()) {
      if (mapping.contains(operand) || operand.getParentBlock() == &source)
        continue;
      Operation *definition = operand.getDefiningOp();
      if (!definition || !definition->hasTrait<OpTrait::ConstantLike>())
        return scan.emitOpError("combiner reads a value of the kernel that is not a "
                                "constant"),
               failure();
      b->clone(*definition, mapping);
    }
    b->clone(op, mapping);
  }
  tl::YieldOp::create(*b, loc, mapping.lookup(source.getTerminator()->getOperand(0)));
  return scanOp.getResult();
}

FailureOr<Value> ScanScatterSortEmitter::combineBlocks(ScanOp scan, Operation *combiner,
                                                  StringRef kind, Value earlier,
                                                  Value later) {
  if (kind != "combine") {
    // The one binary op, on the (possibly widened) blocks' own element type.
    OperationState state(loc, combiner->getName());
    state.addOperands({earlier, later});
    state.addAttributes(combiner->getAttrs());
    state.addTypes(later.getType());
    return b->create(state)->getResult(0);
  }
  Block &source = scan.getRegion().front();
  IRMapping mapping;
  mapping.map(source.getArgument(0), earlier);
  mapping.map(source.getArgument(1), later);
  for (Operation &op : source.without_terminator()) {
    SmallVector<Value> operands;
    for (Value operand : op.getOperands()) {
      if (!mapping.contains(operand)) {
        Operation *definition = operand.getDefiningOp();
        if (!definition || !definition->hasTrait<OpTrait::ConstantLike>())
          return scan.emitOpError("combiner reads a value of the kernel that is not a "
                                  "constant"),
                 failure();
        mapping.map(operand, b->clone(*definition)->getResult(0));
      }
      operands.push_back(mapping.lookup(operand));
    }
    if (op.getNumResults() != 1)
      return op.emitOpError("in a scan's combiner has no single result"), failure();
    mapping.map(op.getResult(0), cloneOnBlocks(&op, operands));
  }
  return mapping.lookup(source.getTerminator()->getOperand(0));
}

LogicalResult ScanScatterSortEmitter::emitScan(ScanOp scan) {
  if (!scan.getInclusive())
    return scan.emitOpError("is exclusive; the Triton lowering scans inclusively only"),
           failure();
  Operation *combiner = binaryCombiner(scan.getRegion());
  StringRef kind = isa_and_nonnull<arith::AddFOp, arith::AddIOp>(combiner)   ? "sum"
                   : isa_and_nonnull<arith::MulFOp, arith::MulIOp>(combiner) ? "prod"
                   : isa_and_nonnull<arith::MaxSIOp>(combiner)               ? "maxsi"
                   : isa_and_nonnull<arith::MinSIOp>(combiner)               ? "minsi"
                                                                             : "combine";
  // A combiner of its own (cummax's, logcumsumexp's) becomes the scan's combine
  // function: scalar arith and math ops only.
  if (kind == "combine")
    for (Operation &op : scan.getRegion().front().without_terminator())
      if (op.getNumRegions() || !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
        return op.emitOpError("in a scan's combiner is not supported by the Triton target"),
               failure();
  auto inputType = cast<RankedTensorType>(scan.getInputs()[0].getType());
  int64_t dim = scan.getDimension(), staticLength = inputType.getDimSize(dim);
  // The input's sizes: constants, or size arguments where symbolic (then the input must
  // be an argument: reshapes of symbolic sizes are not traced).
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    Value size = sizeOf(scan.getInputs()[0], d);
    if (!size)
      return scan.emitOpError("scans a tensor of symbolic sizes that is not a kernel "
                              "argument; the Triton lowering reads arguments only"),
             failure();
    sizes.push_back(size);
  }
  Value length = sizes[dim];
  FailureOr<Memory> input = memoryOf(scan.getInputs()[0]);
  FailureOr<Value> output = resultPointer(scan.getResult(0));
  if (failed(input) || failed(output))
    return failure();
  FailureOr<Value> accumulator = failure();
  if (!scan.getResult(1).use_empty()) {
    accumulator = resultPointer(scan.getResult(1));
    if (failed(accumulator))
      return failure();
  }
  // Lines longer than one program holds are scanned chunk by chunk (one RBLOCK each, a
  // block row of one line per program), each chunk combined with the carry: the last
  // value of the line's chunks before it.
  bool chunked = ShapedType::isDynamic(staticLength) || staticLength > kMaxScanLength;
  // The grid: the static part of the line count, times the size arguments it multiplies.
  int64_t staticLines = 1;
  SmallVector<int64_t> linesArguments;
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    if (d == dim)
      continue;
    if (std::optional<int64_t> known = getConstantIntValue(sizes[d]))
      staticLines *= *known;
    else
      linesArguments.push_back(cast<BlockArgument>(sizes[d]).getArgNumber());
  }
  setConfigs(/*rows=*/true, staticLines,
             ShapedType::isDynamic(staticLength) ? -1 : staticLength,
             /*persistent=*/!chunked, linesArguments);
  // Eager's CPU cumsum/cumprod accumulate float in double; so does this scan, and so does
  // the carry between chunks.
  Type element = inputType.getElementType();
  auto floatType = dyn_cast<FloatType>(element);
  bool widen = floatType && floatType.getWidth() < 64 && kind != "combine";
  Type scanElement = widen ? Type(b->getF64Type()) : element;

  scf::ForOp loop;
  Value chunkStart;
  if (chunked) {
    Value zero = arith::ConstantOp::create(*b, loc, b->getZeroAttr(scanElement));
    Value start = tl::FullOp::create(*b, loc, blockType(scanElement), zero,
                                     b->getStrArrayAttr({"XBLOCK", "1"}));
    loop = scf::ForOp::create(*b, loc, index(0), length,
                              tl::BlockSizeOp::create(*b, loc, "RBLOCK"), ValueRange{start});
    b->setInsertionPointToStart(loop.getBody());
    chunkStart = loop.getInductionVar();
  }
  Value x, r, position;
  auto [offsets, mask] = lineOffsets(sizes, dim, x, r, position, chunkStart);
  // A scan of a fill (OPT's positions: the cumsum of an all-ones mask) scans a full
  // block of it (a splat prints as the scalar, and tl.associative_scan needs a block).
  Value values =
      input->scalar
          ? tl::FullOp::create(*b, loc, blockType(input->scalar.getType()), input->scalar,
                               b->getStrArrayAttr({"XBLOCK", "RBLOCK"}))
                .getResult()
          : load(input->pointer, offsets, mask);
  if (widen)
    values = arith::ExtFOp::create(*b, loc, blockType(scanElement), values);
  FailureOr<Value> scanned = scanBlock(scan, kind, values);
  if (failed(scanned))
    return failure();
  Value line = *scanned, nextCarry;
  if (chunked) {
    // The first chunk has no carry (a combiner of its own has no identity to start from).
    Value carry = loop.getRegionIterArgs()[0];
    FailureOr<Value> carried = combineBlocks(scan, combiner, kind, carry, line);
    if (failed(carried))
      return failure();
    Value first =
        arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::eq, chunkStart, index(0));
    line = arith::SelectOp::create(*b, loc, first, line, *carried);
    // The next carry: the chunk's last value in its line, picked out exactly: for
    // integers a sum of it and zeros; for floats a NaN-propagating maximum of it and
    // -inf (a sum with 0.0 would turn -0.0 into +0.0, and Triton's tl.full makes a -0.0
    // fill +0.0).
    Value chunkEnd = arith::MinSIOp::create(
        *b, loc,
        arith::AddIOp::create(*b, loc, chunkStart,
                              tl::BlockSizeOp::create(*b, loc, "RBLOCK")),
        length);
    Value last = arith::CmpIOp::create(
        *b, loc, arith::CmpIPredicate::eq, r,
        splat(arith::SubIOp::create(*b, loc, chunkEnd, index(1))));
    bool floating = isa<FloatType>(scanElement);
    TypedAttr nothing =
        floating ? TypedAttr(b->getFloatAttr(scanElement,
                                             -std::numeric_limits<double>::infinity()))
                 : TypedAttr(b->getZeroAttr(scanElement));
    Value picked = arith::SelectOp::create(
        *b, loc, last, line, splat(arith::ConstantOp::create(*b, loc, nothing)));
    nextCarry = tl::ReduceOp::create(*b, loc, picked, floating ? "max" : "sum", 1);
  }
  Value result = widen ? arith::TruncFOp::create(*b, loc, blockType(element), line) : line;
  tl::StoreOp::create(*b, loc, *output, offsets, result, mask);
  // The accumulator (the last value of each line), where the graph reads it.
  if (succeeded(accumulator)) {
    Value last = arith::CmpIOp::create(
        *b, loc, arith::CmpIPredicate::eq, r,
        splat(arith::SubIOp::create(*b, loc, length, index(1)).getResult()));
    tl::StoreOp::create(*b, loc, *accumulator, x, result, binary<arith::AndIOp>(mask, last));
  }
  if (chunked) {
    scf::YieldOp::create(*b, loc, nextCarry);
    b->setInsertionPointAfter(loop);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Sorts: stable, by one integer key per element (value bits, then position)
//===----------------------------------------------------------------------===//

LogicalResult ScanScatterSortEmitter::emitSort(SortOp sort) {
  Block &comparator = sort.getRegion().front();
  Operation *cmp = comparator.getTerminator()->getOperand(0).getDefiningOp();
  Value first = comparator.getArgument(0), second = comparator.getArgument(1);
  bool descending;
  auto unsupported = [&]() {
    return sort.emitOpError("has a comparator the Triton lowering does not sort by (it "
                            "sorts by a signed or float comparison of the first output)"),
           failure();
  };
  if (!cmp || cmp->getNumOperands() != 2)
    return unsupported();
  bool swapped = cmp->getOperand(0) == second && cmp->getOperand(1) == first;
  if (!swapped && !(cmp->getOperand(0) == first && cmp->getOperand(1) == second))
    return unsupported();
  if (auto cmpf = dyn_cast<arith::CmpFOp>(cmp)) {
    arith::CmpFPredicate p = cmpf.getPredicate();
    if (p == arith::CmpFPredicate::OLE || p == arith::CmpFPredicate::OLT)
      descending = false;
    else if (p == arith::CmpFPredicate::OGE || p == arith::CmpFPredicate::OGT)
      descending = true;
    else
      return unsupported();
  } else if (auto cmpi = dyn_cast<arith::CmpIOp>(cmp)) {
    arith::CmpIPredicate p = cmpi.getPredicate();
    if (p == arith::CmpIPredicate::sle || p == arith::CmpIPredicate::slt)
      descending = false;
    else if (p == arith::CmpIPredicate::sge || p == arith::CmpIPredicate::sgt)
      descending = true;
    else
      return unsupported();
  } else {
    return unsupported();
  }
  descending ^= swapped;

  auto type = cast<RankedTensorType>(sort.getOutputs()[0].getType());
  Type element = type.getElementType();
  unsigned width = element.getIntOrFloatBitWidth();
  if (width > 32)
    return sort.emitOpError("sorts ")
               << element << "; the Triton lowering packs values of at most 32 bits with "
                             "their positions into 64-bit keys",
           failure();
  int64_t dim = sort.getDimension(), length = type.getDimSize(dim);
  if (length > kMaxSortLength)
    return sort.emitOpError("sorts lines of ")
               << length << " elements; the Triton lowering holds at most " << kMaxSortLength
               << " in one program",
           failure();
  SmallVector<Memory> sources;
  SmallVector<Value> results;
  for (auto [output, result] : llvm::zip(sort.getOutputs(), sort.getResults())) {
    FailureOr<Memory> source = memoryOf(output);
    if (failed(source))
      return failure();
    sources.push_back(*source);
    if (result.use_empty()) {
      results.push_back(Value());
      continue;
    }
    FailureOr<Value> pointer = resultPointer(result);
    if (failed(pointer))
      return failure();
    results.push_back(*pointer);
  }
  if (sources[0].scalar)
    return sort.emitOpError("sorts a fill"), failure();
  setConfigs(/*rows=*/true, type.getNumElements() / std::max<int64_t>(length, 1), length);

  Value x, r, position;
  auto [offsets, mask] = lineOffsets(type.getShape(), dim, x, r, position);
  Value values = load(sources[0].pointer, offsets, mask);
  // Order-preserving integer image of the values: floats' bits with negative values'
  // magnitude bits flipped, -0.0 as +0.0 (they tie) and every NaN as the canonical
  // positive NaN, the largest (eager orders NaN last ascending, first descending).
  Type keyElement = b->getI64Type();
  Value ordered;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    Type bitsType = b->getIntegerType(width);
    Value bits = arith::BitcastOp::create(*b, loc, blockType(bitsType), values);
    int64_t nan = width == 32 ? 0x7fc00000 : element.isBF16() ? 0x7fc0 : 0x7e00;
    Value isNan = arith::CmpFOp::create(*b, loc, arith::CmpFPredicate::UNO, values, values);
    Value zero = arith::ConstantOp::create(*b, loc, b->getFloatAttr(floatType, 0.0));
    Value isZero =
        arith::CmpFOp::create(*b, loc, arith::CmpFPredicate::OEQ, values, splat(zero));
    bits = arith::SelectOp::create(*b, loc, isNan, splat(constant(bitsType, nan)), bits);
    bits = arith::SelectOp::create(*b, loc, isZero, splat(constant(bitsType, 0)), bits);
    Value negative = arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::slt, bits,
                                           splat(constant(bitsType, 0)));
    int64_t magnitude = (int64_t(1) << (width - 1)) - 1;
    Value flipped = binary<arith::XOrIOp>(bits, constant(bitsType, magnitude));
    ordered = arith::SelectOp::create(*b, loc, negative, flipped, bits);
    ordered = arith::ExtSIOp::create(*b, loc, blockType(keyElement), ordered);
  } else if (width == 1) {
    ordered = arith::ExtUIOp::create(*b, loc, blockType(keyElement), values);
  } else {
    ordered = arith::ExtSIOp::create(*b, loc, blockType(keyElement), values);
  }
  if (descending) // ~v reverses the order; positions still break ties ascending
    ordered = binary<arith::XOrIOp>(ordered, constant(keyElement, -1));
  Value positionKey = arith::IndexCastOp::create(*b, loc, blockType(keyElement), position);
  Value key = binary<arith::OrIOp>(binary<arith::ShLIOp>(ordered, constant(keyElement, 32)),
                                   positionKey);
  // Lanes past the line sort last.
  Value last = splat(constant(keyElement, std::numeric_limits<int64_t>::max()));
  key = arith::SelectOp::create(*b, loc, mask, key, last);
  int64_t after = product(type.getShape().drop_front(dim + 1));
  Value lineStart = binary<arith::SubIOp>(offsets, binary<arith::MulIOp>(r, index(after)));
  std::optional<int64_t> prefix = sort.getPrefix();
  if (prefix && *prefix <= kMaxSelectedPrefix) {
    // topk: the k first elements by k selections of the least remaining key (keys are
    // unique, as they hold positions), not a sort of the whole line. Lane 0 of each
    // line moves the selected element.
    Value first = arith::AndIOp::create(
        *b, loc, mask, arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::eq, r, splat(index(0))));
    Value remaining = key;
    for (int64_t j = 0; j < *prefix; ++j) {
      Value least = tl::ReduceOp::create(*b, loc, remaining, "minsi", 1);
      Value from = binary<arith::AndIOp>(least, constant(keyElement, 0xffffffff));
      from = arith::IndexCastOp::create(*b, loc, blockType(b->getIndexType()), from);
      Value source = binary<arith::AddIOp>(lineStart, binary<arith::MulIOp>(from, index(after)));
      Value target = binary<arith::AddIOp>(lineStart, index(j * after));
      for (auto [memory, pointer] : llvm::zip(sources, results)) {
        if (!pointer)
          continue;
        Value moved = memory.iota     ? arith::IndexCastOp::create(*b, loc, blockType(memory.iota), from)
                      : memory.scalar ? splat(memory.scalar)
                                      : load(memory.pointer, source, first);
        tl::StoreOp::create(*b, loc, pointer, target, moved, first);
      }
      remaining = arith::SelectOp::create(
          *b, loc, arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::eq, remaining, least),
          last, remaining);
    }
    return success();
  }
  Value sorted = tl::SortOp::create(*b, loc, key, 1);
  Value from = binary<arith::AndIOp>(sorted, constant(keyElement, 0xffffffff));
  from = arith::IndexCastOp::create(*b, loc, blockType(b->getIndexType()), from);
  // The element at sorted position j of a line comes from position `from` of that line.
  Value source = binary<arith::AddIOp>(lineStart, binary<arith::MulIOp>(from, index(after)));
  for (auto [memory, pointer] : llvm::zip(sources, results)) {
    if (!pointer)
      continue;
    Value moved = memory.iota     ? arith::IndexCastOp::create(*b, loc, blockType(memory.iota), from)
                  : memory.scalar ? memory.scalar
                                  : load(memory.pointer, source, mask);
    tl::StoreOp::create(*b, loc, pointer, offsets, moved, mask);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Scatters: one lane per update element; repeated indices combine atomically
//===----------------------------------------------------------------------===//

LogicalResult ScanScatterSortEmitter::emitScatter(ScatterOp scatter) {
  rank = 1;
  auto updatesType = cast<RankedTensorType>(scatter.getUpdates().getType());
  auto indicesType = cast<RankedTensorType>(scatter.getIndices().getType());
  auto originalType = cast<RankedTensorType>(scatter.getOriginal().getType());
  ArrayRef<int64_t> dimensionMap = scatter.getDimensionMap();
  int64_t windowRank = updatesType.getRank() - 1;
  int64_t offset = originalType.getRank() - windowRank;
  for (int64_t d = 0; d < offset; ++d)
    if (!llvm::is_contained(dimensionMap, d))
      return scatter.emitOpError("dimension ")
                 << d << " of original is addressed neither by indices nor by updates",
             failure();

  // How each update combines with the element it lands on: overwritten, or
  // `original op f(update)` with an op Triton has an atomic for, or any function of both
  // where indices are unique.
  Block &body = scatter.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  Value original = body.getArgument(1);
  Type element = originalType.getElementType();
  bool overwrite = yielded == body.getArgument(0);
  StringRef atomic;
  Value contribution; // f(update), in the region
  if (Operation *last = yielded.getDefiningOp();
      last && last->getNumOperands() == 2 &&
      llvm::is_contained(last->getOperands(), original)) {
    Value other = last->getOperand(last->getOperand(0) == original ? 1 : 0);
    bool readsOriginal = other == original;
    for (Operation &inner : body.without_terminator())
      if (&inner != last && llvm::is_contained(inner.getOperands(), original))
        readsOriginal = true;
    if (!readsOriginal) {
      contribution = other;
      if (isa<arith::AddFOp, arith::AddIOp>(last) && !element.isBF16())
        atomic = "add"; // (no bf16 atomic add on every GPU)
      else if (isa<arith::MaxSIOp>(last))
        atomic = "max";
      else if (isa<arith::MinSIOp>(last))
        atomic = "min";
      // Triton's float max/min atomics order the bits (as signed integers for a clear
      // sign bit, unsigned otherwise): -0.0 < +0.0 like maximumf/minimumf; NaN is kept
      // below (see floatExtremum).
      else if (isa<arith::MaximumFOp>(last) && (element.isF32() || element.isF64()))
        atomic = "max";
      else if (isa<arith::MinimumFOp>(last) && (element.isF32() || element.isF64()))
        atomic = "min";
    }
  }
  bool floatExtremum = !atomic.empty() && atomic != "add" && isa<FloatType>(element);
  if (!overwrite && atomic.empty() && !scatter.getUniqueIndices())
    return scatter.emitOpError("combines repeated indices with an op Triton has no atomic "
                               "for (it has add, max/min of integers, and max/min of "
                               "float32/float64)"),
           failure();

  FailureOr<Memory> updates = memoryOf(scatter.getUpdates());
  FailureOr<Memory> indices = memoryOf(scatter.getIndices());
  FailureOr<Value> result = resultPointer(scatter.getResult(0));
  if (failed(updates) || failed(indices) || failed(result))
    return failure();
  int64_t lanes = updatesType.getNumElements();
  setConfigs(/*rows=*/false, lanes, 1);
  if (lanes == 0)
    return success();

  Value pid = tl::ProgramIdOp::create(*b, loc, 0);
  Value xblock = tl::BlockSizeOp::create(*b, loc, "XBLOCK");
  Value x = tl::RangeOp::create(*b, loc, blockType(b->getIndexType()), "XBLOCK", 0);
  x = binary<arith::AddIOp>(binary<arith::MulIOp>(pid, xblock), x);
  Value mask = lessThan(x, lanes);
  Value update = updates->scalar ? updates->scalar : load(updates->pointer, x, mask);
  // Lane x is update row x / window at window position x % window (row-major).
  ArrayRef<int64_t> window = updatesType.getShape().drop_front();
  Value row = binary<arith::DivUIOp>(x, index(product(window)));
  SmallVector<Value> position(originalType.getRank());
  Value rest = binary<arith::RemUIOp>(x, index(product(window)));
  for (int64_t w = 0; w < windowRank; ++w) {
    int64_t inner = product(window.drop_front(w + 1));
    position[offset + w] = binary<arith::DivUIOp>(rest, index(inner));
    rest = binary<arith::RemUIOp>(rest, index(inner));
  }
  int64_t depth = indicesType.getDimSize(1);
  for (auto [column, d] : llvm::enumerate(dimensionMap)) {
    Value raw;
    if (indices->scalar) {
      raw = indices->scalar;
    } else {
      Value at = binary<arith::AddIOp>(binary<arith::MulIOp>(row, index(depth)),
                                       index(column));
      raw = load(indices->pointer, at, mask);
    }
    Value coordinate = arith::IndexCastOp::create(
        *b, loc, isa<RankedTensorType>(raw.getType()) ? Type(blockType(b->getIndexType()))
                                                      : Type(b->getIndexType()),
        raw);
    position[d] = position[d] ? binary<arith::AddIOp>(position[d], coordinate) : coordinate;
  }
  Value target = index(0);
  for (int64_t d = 0; d < originalType.getRank(); ++d) {
    int64_t stride = product(originalType.getShape().drop_front(d + 1));
    target = binary<arith::AddIOp>(target, binary<arith::MulIOp>(position[d], index(stride)));
  }
  target = splat(target);
  update = splat(update);
  if (overwrite) {
    tl::StoreOp::create(*b, loc, *result, target, update, mask);
    return success();
  }
  // The region's ops on blocks: the update, and the current element where it is read.
  IRMapping mapping;
  mapping.map(body.getArgument(0), update);
  if (atomic.empty())
    mapping.map(original, load(*result, target, mask));
  for (Operation &inner : body.without_terminator()) {
    if (!atomic.empty() && inner.getResult(0) == yielded)
      break; // the atomic combines
    if (inner.getNumRegions() || inner.getNumResults() != 1 ||
        !isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return inner.emitOpError("in a scatter has no Triton lowering"), failure();
    SmallVector<Value> operands;
    for (Value operand : inner.getOperands()) {
      Value mapped = mapping.lookupOrNull(operand);
      if (!mapped) {
        auto outside = operand.getDefiningOp<arith::ConstantOp>();
        if (!outside)
          return inner.emitOpError("in a scatter reads a value from outside the scatter"),
                 failure();
        mapped = b->clone(*outside)->getResult(0);
      }
      operands.push_back(mapped);
    }
    mapping.map(inner.getResult(0), cloneOnBlocks(&inner, operands));
  }
  if (!atomic.empty()) {
    Value value = mapping.lookupOrNull(contribution);
    if (!value) {
      auto outside = contribution.getDefiningOp<arith::ConstantOp>();
      if (!outside)
        return scatter.emitOpError("adds a value from outside the scatter"), failure();
      value = b->clone(*outside)->getResult(0);
    }
    value = splat(value);
    if (floatExtremum) {
      // NaN wins, as in maximumf/minimumf. The bit orders put a NaN with the sign bit
      // clear above every float for max (set: below, for min), so an update that is NaN
      // lands as that NaN and stays through any later atomic. An element that is
      // already NaN (of any sign, from the original) is left alone: a lane that reads
      // NaN there skips its atomic.
      auto type = cast<FloatType>(element);
      APFloat nan = APFloat::getQNaN(type.getFloatSemantics(), /*Negative=*/atomic == "min");
      Value canonical = splat(arith::ConstantOp::create(*b, loc, type,
                                                        b->getFloatAttr(type, nan)));
      Value isNaN = arith::CmpFOp::create(*b, loc, arith::CmpFPredicate::UNO, value, value);
      value = arith::SelectOp::create(*b, loc, isNaN, canonical, value);
      Value current = load(*result, target, mask);
      Value numeric = arith::CmpFOp::create(*b, loc, arith::CmpFPredicate::ORD, current,
                                            current);
      mask = binary<arith::AndIOp>(mask, numeric);
    }
    tl::AtomicOp::create(*b, loc, atomic, *result, target, value, mask);
    return success();
  }
  // Unique indices: read, combine, write back.
  tl::StoreOp::create(*b, loc, *result, target, splat(mapping.lookup(yielded)), mask);
  return success();
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
