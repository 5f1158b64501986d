//===- SplitKernelsForTriton.cpp - One iteration space per kernel -*- C++ -*-===//
//
// A Triton program walks one index space (rows, and one reduced extent). Kernel
// formation groups ops by data flow, so a kernel may hold, say, a column reduction and
// a row reduction; such a kernel is split here into one kernel per computing op, in
// order, passing intermediates through memory. Concatenations, which a Triton program
// cannot read back, are done on the host between the pieces (torch.cat); a constant pad
// that computing ops read is read by their piece from its stored source (masked loads).
// Kernels that fit stay whole.
//
//===----------------------------------------------------------------------===//
#include "IterationSpace.h"

#include "dyno/Target/Triton/Passes.h"
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/KernelOutlining.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "dyno-split-kernels-for-triton"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOSPLITKERNELSFORTRITON
#include "dyno/Target/Triton/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

namespace {

bool isScanScatterOrSort(Operation *op) { return isa<ScanOp, ScatterOp, SortOp>(op); }

/// A fill that a scatter updates: the scatter's kernel starts from a copy of it, so it is
/// computed in memory first.
bool isScatteredFill(Operation *op) {
  return llvm::any_of(op->getUsers(), [&](Operation *user) {
    auto scatter = dyn_cast<ScatterOp>(user);
    return scatter && scatter.getOriginal().getDefiningOp() == op;
  });
}

/// Positions along a sort's dimension that only sorts start from (the indices of sort
/// and topk): the sort's kernel computes them (`from` itself) instead of loading them.
bool isSortedIota(linalg::GenericOp generic) {
  std::optional<int64_t> dim = iotaDimension(generic);
  return dim && !generic->use_empty() &&
         llvm::all_of(generic->getUses(), [&](OpOperand &use) {
           auto sort = dyn_cast<SortOp>(use.getOwner());
           // An output other than the first (by operand slot): the sort's keys are loaded.
           if (!sort || sort.getDimension() != *dim)
             return false;
           MutableOperandRange outputs = sort.getOutputsMutable();
           return &use != &outputs[0] && llvm::any_of(llvm::drop_begin(outputs), [&](OpOperand &output) {
                    return &output == &use;
                  });
         });
}

bool isComputeOp(Operation *op, func::ReturnOp returned) {
  if (isScanScatterOrSort(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || isSortedIota(generic))
    return false;
  if (!scalarFillValue(generic) || isScatteredFill(generic))
    return true;
  return llvm::any_of(generic->getResults(), [&](Value result) {
    return llvm::is_contained(returned.getOperands(), result);
  });
}

/// Copies a scalar of the kernel (a size) to the host: arguments map to the launch's
/// operands, `tensor.dim`s of arguments and integer arithmetic are recreated.
FailureOr<Value> toHost(Value value, OpBuilder &hostBuilder, IRMapping &host) {
  if (Value mapped = host.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  if (!def || def->getNumRegions() || def->getNumResults() != 1 ||
      !(isa<arith::ArithDialect, affine::AffineDialect>(def->getDialect()) ||
        isa<tensor::DimOp>(def)))
    return failure();
  for (Value operand : def->getOperands())
    if (failed(toHost(operand, hostBuilder, host)))
      return failure();
  return hostBuilder.clone(*def, host)->getResult(0);
}

/// Host values for the dynamic sizes of `result` (a kernel value a piece returns):
/// resolved in the kernel to its arguments' sizes, then copied to the host.
LogicalResult hostSizesOf(Value result, OpBuilder &hostBuilder, IRMapping &host,
                          SmallVectorImpl<Value> &dims) {
  auto type = cast<RankedTensorType>(result.getType());
  if (type.hasStaticShape())
    return success();
  OpBuilder kernelBuilder = OpBuilder::atBlockTerminator(result.getParentBlock());
  // The kernel's own `tensor.dim`s (of views, of empties) resolve too.
  SmallVector<Operation *> kernelDims;
  result.getParentBlock()->walk([&](tensor::DimOp dim) { kernelDims.push_back(dim); });
  for (Value size : resolvedDynamicSizes(kernelBuilder, {result}, kernelDims)) {
    FailureOr<Value> onHost = toHost(size, hostBuilder, host);
    if (failed(onHost))
      return emitError(result.getLoc(), "dyno-split-kernels-for-triton: the size of an "
                                        "intermediate depends on values the kernel computes"),
             failure();
    dims.push_back(*onHost);
  }
  return success();
}

bool isView(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractSliceOp,
             tensor::CastOp>(op);
}

/// A constant `tensor.pad` with static widths.
bool isStaticConstantPad(Operation *op) {
  auto pad = dyn_cast<tensor::PadOp>(op);
  return pad && pad.getLow().empty() && pad.getHigh().empty() &&
         matchPattern(pad.getConstantPaddingValue(), m_Constant());
}

/// A static constant pad that only computing ops read: each piece that reads it clones
/// it and reads its source, which an earlier piece stored, with masked loads (the
/// padding value where the read falls outside the source). ResNet's max pool read its
/// -inf padding from a padded copy torch made on the host (a fill and a copy of the
/// 32 x 112 x 112 x 64 activation per call).
/// Only through static slices (the max pool's strided windows), the one view the
/// Triton lowering reads a padded tensor through (IterationSpace's slicePadded).
bool onlyComputingOpsRead(Operation *op, func::ReturnOp returned) {
  return !op->use_empty() && llvm::all_of(op->getUsers(), [&](Operation *user) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
      return slice.getOffsets().empty() && slice.getSizes().empty() &&
             slice.getStrides().empty() && onlyComputingOpsRead(user, returned);
    return isa<linalg::GenericOp>(user) && isComputeOp(user, returned);
  });
}

bool isPaddedRead(Operation *op, func::ReturnOp returned) {
  // (A pad of a dynamically shaped tensor stays the host's: the lowering reads pads
  // of static shapes only.)
  return isStaticConstantPad(op) &&
         cast<RankedTensorType>(op->getOperand(0).getType()).hasStaticShape() &&
         cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape() &&
         onlyComputingOpsRead(op, returned);
}

/// Ops the host performs between the pieces of a split kernel: a Triton program cannot
/// read a concatenation it did not store, so `tensor.concat` becomes torch.cat; a
/// constant `tensor.pad` with static widths that is not a padded read (isPaddedRead)
/// becomes torch.nn.functional.pad.
bool isHostOp(Operation *op, func::ReturnOp returned) {
  return isa<tensor::ConcatOp>(op) ||
         (isStaticConstantPad(op) && !isPaddedRead(op, returned));
}

/// The op of `group` whose result `op` reads padded (through views and a padded read),
/// or null: that result must be stored first, by an earlier piece.
Operation *paddedSourceIn(Operation *op, const llvm::SmallPtrSetImpl<Operation *> &group,
                          func::ReturnOp returned) {
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    while (def && isView(def))
      def = def->getOperand(0).getDefiningOp();
    if (!def || !isPaddedRead(def, returned))
      continue;
    Operation *source = cast<tensor::PadOp>(def).getSource().getDefiningOp();
    while (source && isView(source))
      source = source->getOperand(0).getDefiningOp();
    if (source && group.contains(source))
      return source;
  }
  return nullptr;
}


/// Recreates the kernel tensor `value` on the host: a value the host already has (an
/// argument, an earlier piece's result), or a view of one.
FailureOr<Value> tensorToHost(Value value, OpBuilder &hostBuilder, IRMapping &host) {
  if (Value mapped = host.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  if (!def || !isView(def))
    return failure();
  for (Value operand : def->getOperands()) {
    FailureOr<Value> onHost = isa<TensorType>(operand.getType())
                                  ? tensorToHost(operand, hostBuilder, host)
                                  : toHost(operand, hostBuilder, host);
    if (failed(onHost))
      return failure();
  }
  return hostBuilder.clone(*def, host)->getResult(0);
}

/// Whether `value`, computed by an op of `group`, is read by anything but the ops of
/// `group` (through views, which each piece clones): a later piece, the host, the
/// kernel's return.
bool neededOutside(Value value, const llvm::SmallPtrSetImpl<Operation *> &group) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (group.contains(user))
      continue;
    if (isView(user) &&
        llvm::none_of(user->getResults(),
                      [&](Value view) { return neededOutside(view, group); }))
      continue;
    return true;
  }
  return false;
}

/// A piece of a split kernel: a kernel function of the computing ops `ops` (in order)
/// returning their results needed outside them. Views, fills and constants are cloned;
/// computed tensors from elsewhere become arguments (`kernelValues` says which).
struct Piece {
  func::FuncOp function;
  SmallVector<Value> kernelValues; // per argument, the value of the split kernel
  SmallVector<Value> results;      // values of the split kernel it returns
};

Piece buildPiece(ArrayRef<Operation *> ops, StringRef name, func::ReturnOp returned,
                 OpBuilder &moduleBuilder) {
  MLIRContext *ctx = moduleBuilder.getContext();
  Piece piece;
  piece.function = func::FuncOp::create(moduleBuilder, ops.front()->getLoc(), name,
                                        FunctionType::get(ctx, {}, {}));
  Block *entry = piece.function.addEntryBlock();
  IRMapping mapping;
  cloneIntoKernel(ops, entry, mapping, piece.kernelValues, [&](Operation *def) {
    return !isComputeOp(def, returned) && !isHostOp(def, returned);
  });
  llvm::SmallPtrSet<Operation *, 8> group(ops.begin(), ops.end());
  SmallVector<Value> cloned;
  SmallVector<Type> resultTypes;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (neededOutside(result, group)) {
        piece.results.push_back(result);
        cloned.push_back(mapping.lookup(result));
        resultTypes.push_back(result.getType());
      }
  OpBuilder builder = OpBuilder::atBlockEnd(entry);
  func::ReturnOp::create(builder, ops.back()->getLoc(), cloned);
  piece.function.setFunctionType(
      FunctionType::get(ctx, entry->getArgumentTypes(), resultTypes));
  for (unsigned i = 0, e = piece.function.getNumArguments(); i < e; ++i)
    if (isa<TensorType>(piece.function.getArgument(i).getType()))
      piece.function.setArgAttr(i, "bufferization.writable", BoolAttr::get(ctx, false));
  return piece;
}

/// Splits `kernel`, launched by `launch`, into pieces: runs of its computing ops, in
/// order, each as long as it still fits one Triton index space (scans, scatters and
/// sorts alone), with host ops between them. (Until 2026-12-02 every computing op was a
/// piece of its own: a layer norm next to a window partition was five kernels.)
LogicalResult split(func::FuncOp kernel, LaunchOp launch, ModuleOp kernels) {
  MLIRContext *ctx = kernel.getContext();
  Block &body = kernel.getBody().front();
  auto returned = cast<func::ReturnOp>(body.getTerminator());
  for (Value value : returned.getOperands())
    if (value.getDefiningOp() && !(isComputeOp(value.getDefiningOp(), returned) ||
                                   isHostOp(value.getDefiningOp(), returned) ||
                                   isView(value.getDefiningOp())))
      return kernel.emitOpError("returns a value no op of it computes; cannot split it");

  // Host value of each kernel value that crosses kernels.
  IRMapping host;
  for (auto [argument, operand] : llvm::zip(body.getArguments(), launch.getArgs()))
    host.map(argument, operand);
  OpBuilder hostBuilder(launch);
  OpBuilder moduleBuilder(kernel);
  unsigned part = 0;

  auto fits = [&](ArrayRef<Operation *> ops) {
    Piece trial = buildPiece(ops, (kernel.getName() + "_trial").str(), returned,
                             moduleBuilder);
    bool fit = fitsOneIterationSpace(trial.function);
    trial.function.erase();
    return fit;
  };
  auto launchPiece = [&](ArrayRef<Operation *> ops) -> LogicalResult {
    std::string name = (kernel.getName() + "_" + Twine(part++)).str();
    Piece piece = buildPiece(ops, name, returned, moduleBuilder);
    SmallVector<Value> launchArgs;
    for (Value value : piece.kernelValues)
      launchArgs.push_back(host.lookup(value));
    SmallVector<Value> dims;
    SmallVector<Type> resultTypes;
    for (Value original : piece.results) {
      resultTypes.push_back(original.getType());
      if (failed(hostSizesOf(original, hostBuilder, host, dims)))
        return failure();
    }
    auto callee = SymbolRefAttr::get(ctx, kernels.getSymName().value_or("kernels"),
                                     {FlatSymbolRefAttr::get(ctx, name)});
    auto pieceLaunch =
        LaunchOp::create(hostBuilder, launch.getLoc(), resultTypes, callee, launchArgs, dims,
                         /*initial_values=*/DenseI64ArrayAttr());
    // A scatter updates a copy of its original (an earlier piece's result or an argument);
    // one into an uninitialized tensor (an inverse permutation scattered into
    // `empty_like`) starts from the launch's fresh result.
    auto scatter = ops.size() == 1 ? dyn_cast<ScatterOp>(ops.front()) : ScatterOp();
    if (scatter && !scatter.getOriginal().getDefiningOp<tensor::EmptyOp>()) {
      auto position = llvm::find(piece.kernelValues, scatter.getOriginal()) -
                      piece.kernelValues.begin();
      if (position == static_cast<long>(piece.kernelValues.size()))
        return scatter.emitOpError("updates a tensor its Triton kernel cannot start from"),
               failure();
      pieceLaunch.setInitialValuesAttr(
          DenseI64ArrayAttr::get(ctx, SmallVector<int64_t>(resultTypes.size(), position)));
    }
    for (auto [original, result] : llvm::zip(piece.results, pieceLaunch.getResults()))
      host.map(original, result);
    return success();
  };

  SmallVector<Operation *> group;
  auto flush = [&]() -> LogicalResult {
    if (group.empty())
      return success();
    LogicalResult launched = launchPiece(group);
    group.clear();
    return launched;
  };
  for (Operation &opRef : body.without_terminator()) {
    Operation *op = &opRef;
    if (isHostOp(op, returned)) {
      if (failed(flush()))
        return failure();
      for (Value operand : op->getOperands())
        if (failed(tensorToHost(operand, hostBuilder, host)))
          return op->emitOpError("reads a tensor the host cannot compute; cannot split its "
                                 "kernel");
      if (auto pad = dyn_cast<tensor::PadOp>(op)) // its padding value, a constant
        hostBuilder.clone(*pad.getConstantPaddingValue().getDefiningOp(), host);
      hostBuilder.clone(*op, host);
      continue;
    }
    if (!isComputeOp(op, returned))
      continue;
    if (isScanScatterOrSort(op) ||
        (!group.empty() && isScanScatterOrSort(group.front()))) {
      if (failed(flush()))
        return failure();
      group.push_back(op);
      continue;
    }
    llvm::SmallPtrSet<Operation *, 8> members(group.begin(), group.end());
    if (paddedSourceIn(op, members, returned) && failed(flush()))
      return failure();
    group.push_back(op);
    if (group.size() > 1 && !fits(group)) {
      group.pop_back();
      if (failed(flush()))
        return failure();
      group.push_back(op);
    }
  }
  if (failed(flush()))
    return failure();
  // Results the pieces computed, or the host (an argument, a view of one: torch-mlir's
  // adaptive max pooling returns its input reshaped).
  for (auto [result, value] : llvm::zip(launch.getResults(), returned.getOperands())) {
    FailureOr<Value> onHost = tensorToHost(value, hostBuilder, host);
    if (failed(onHost))
      return kernel.emitOpError("returns a value neither its pieces nor the host compute; "
                                "cannot split it");
    result.replaceAllUsesWith(*onHost);
  }
  launch.erase();
  kernel.erase();
  return success();
}

/// A splat tensor constant in a kernel (a folded `full`, a one-element `linspace`)
/// becomes a fill, which the lowering reads as a scalar or stores like any result.
void materializeSplatConstants(func::FuncOp kernel) {
  IRRewriter rewriter(kernel.getContext());
  kernel.walk([&](arith::ConstantOp constant) {
    auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
    auto type = dyn_cast<RankedTensorType>(constant.getType());
    if (!splat || !type || !type.hasStaticShape())
      return;
    rewriter.setInsertionPoint(constant);
    Location loc = constant.getLoc();
    Value scalar = arith::ConstantOp::create(
        rewriter, loc, cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    auto fill = linalg::FillOp::create(rewriter, loc, scalar, empty);
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, cast<linalg::LinalgOp>(fill.getOperation()));
    rewriter.replaceOp(constant, succeeded(generic) ? (*generic)->getResults()
                                                    : fill->getResults());
  });
}

/// A static `tensor.insert_slice` (how torch-mlir builds a stack into a fill, or a
/// transposed convolution's strided input) becomes an elementwise select over the
/// destination: on the slice, the source element (a gather at the clamped position);
/// elsewhere, the destination's.
void insertSlicesAsSelects(func::FuncOp kernel) {
  IRRewriter rewriter(kernel.getContext());
  kernel.walk([&](tensor::InsertSliceOp insert) {
    RankedTensorType type = insert.getDestType();
    if (!type.hasStaticShape() || !insert.getSourceType().hasStaticShape() ||
        ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
        ShapedType::isDynamicShape(insert.getStaticSizes()) ||
        ShapedType::isDynamicShape(insert.getStaticStrides()))
      return;
    Location loc = insert.getLoc();
    rewriter.setInsertionPoint(insert);
    int64_t rank = type.getRank();
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    ArrayRef<int64_t> offsets = insert.getStaticOffsets(), sizes = insert.getStaticSizes(),
                      strides = insert.getStaticStrides();
    Value source = insert.getSource();
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{insert.getDest()}, ValueRange{empty},
        ArrayRef<AffineMap>{identity, identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value inside = arith::ConstantIntOp::create(b, l, 1, 1);
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            // Position p of the slice is element offset + p * stride.
            Value index = linalg::IndexOp::create(b, l, d);
            Value low = arith::ConstantIndexOp::create(b, l, offsets[d]);
            Value high = arith::ConstantIndexOp::create(
                b, l, offsets[d] + (sizes[d] - 1) * strides[d] + 1);
            Value relative = arith::SubIOp::create(b, l, index, low);
            inside = arith::AndIOp::create(
                b, l, inside,
                arith::AndIOp::create(
                    b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, index, low),
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index, high)));
            if (strides[d] != 1) {
              Value stride = arith::ConstantIndexOp::create(b, l, strides[d]);
              Value zero = arith::ConstantIndexOp::create(b, l, 0);
              Value onGrid = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::eq,
                  arith::RemSIOp::create(b, l, relative, stride), zero);
              inside = arith::AndIOp::create(b, l, inside, onGrid);
              relative = arith::DivSIOp::create(b, l, relative, stride);
            }
            if (dropped.test(d))
              continue;
            Value zero = arith::ConstantIndexOp::create(b, l, 0);
            Value last = arith::ConstantIndexOp::create(b, l, sizes[d] - 1);
            at.push_back(arith::MinSIOp::create(
                b, l, arith::MaxSIOp::create(b, l, relative, zero), last));
          }
          Value element = tensor::ExtractOp::create(b, l, source, at);
          linalg::YieldOp::create(b, l, ValueRange{arith::SelectOp::create(
                                            b, l, inside, element, args[0])});
        });
    rewriter.replaceOp(insert, generic->getResults());
  });
}

struct SplitKernelsForTritonPass
    : mlir::dyno::impl::DynoSplitKernelsForTritonBase<SplitKernelsForTritonPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (ModuleOp kernels : llvm::to_vector(module.getOps<ModuleOp>())) {
      for (func::FuncOp kernel : kernels.getOps<func::FuncOp>()) {
        materializeSplatConstants(kernel);
        insertSlicesAsSelects(kernel);
      }
      for (func::FuncOp kernel : llvm::to_vector(kernels.getOps<func::FuncOp>())) {
        // Scans, scatters and sorts get kernels of their own
        // (dyno-convert-scans-scatters-sorts-to-triton-level).
        bool scanScatterOrSort = kernel.walk([](Operation *op) {
                                         return isScanScatterOrSort(op) ? WalkResult::interrupt()
                                                                        : WalkResult::advance();
                                       }).wasInterrupted();
        // A returned pad or concatenation, an argument or a view of one: the host's.
        auto returned = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
        bool returnsHostOp = llvm::any_of(returned.getOperands(), [&](Value value) {
          Operation *def = value.getDefiningOp();
          return !def || isHostOp(def, returned) || isView(def);
        });
        if (kernel.isExternal() ||
            (!scanScatterOrSort && !returnsHostOp && fitsOneIterationSpace(kernel)))
          continue;
        SmallVector<LaunchOp> launches = launchesOf(module, kernel);
        if (launches.size() != 1)
          continue; // left whole; the lowering reports what it cannot do
        if (failed(split(kernel, launches.front(), kernels)))
          return signalPassFailure();
      }
    }
  }
};

} // namespace
