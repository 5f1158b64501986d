//===- KernelEmitter.h - Emits one kernel's Triton block program -*- C++ -*-===//
//
// The state and steps of lowering one linalg kernel to a `tl` program (the
// `dyno-convert-kernels-to-triton-level` pass). KernelsToTritonLevel.cpp emits indices,
// loads and stores; GenericBodies.cpp emits generics' bodies; Reductions.cpp emits
// reductions, including those that pick one element per row (argmax-like and
// find-first reductions).
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_LIB_TARGET_TRITON_KERNELEMITTER_H
#define DYNO_LIB_TARGET_TRITON_KERNELEMITTER_H

#include "IterationSpace.h"
#include "SizeArguments.h"
#include "ReductionKinds.h"

#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <optional>

namespace mlir::dyno::tl {

/// One straight-line region of the program: the kernel's entry block, or the body of a
/// loop over the reduced extent. Blocks computed here are valid only here.
struct Region {
  OpBuilder builder;
  SmallVector<Value> slotIndex; // per slot; R entries only in row regions
  Value xmask, rmask;
  bool row = false;
  DenseMap<Value, Value> blocks; // tensor value -> its block (or scalar)
  explicit Region(OpBuilder builder) : builder(builder) {}
};

class KernelEmitter {
public:
  KernelEmitter(func::FuncOp kernel, const IterationSpace &space, int64_t persistentRNumel)
      : oldKernel(kernel), space(space), loc(kernel.getLoc()),
        rank(space.hasReduction() ? 2 : 1),
        persistent(!space.hasReduction() ||
                   (!ShapedType::isDynamic(space.rNumel()) &&
                    space.rNumel() <= persistentRNumel)) {}

  LogicalResult emit();

private:
  RankedTensorType blockType(Type element) const {
    return RankedTensorType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic), element);
  }
  Value toBlock(OpBuilder &b, Value value) {
    if (isa<RankedTensorType>(value.getType()))
      return value;
    return tl::SplatOp::create(b, loc, blockType(value.getType()), value);
  }
  Value index(OpBuilder &b, int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  template <typename OpTy>
  Value indexOp(OpBuilder &b, Value lhs, Value rhs) {
    if (isa<RankedTensorType>(lhs.getType()) || isa<RankedTensorType>(rhs.getType())) {
      lhs = toBlock(b, lhs);
      rhs = toBlock(b, rhs);
    }
    return OpTy::create(b, loc, lhs, rhs);
  }
  Value lessThan(OpBuilder &b, Value lhs, int64_t bound) {
    return lessThan(b, lhs, index(b, bound));
  }
  Value lessThan(OpBuilder &b, Value lhs, Value bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lhs, toBlock(b, bound));
  }
  /// Row-major decomposition of a linear index over `extents` (kernel-entry scalars).
  SmallVector<Value> decompose(OpBuilder &b, Value linear, ArrayRef<Value> extents);

  /// Dynamic shapes. Size `dim` of a tensor of the old kernel as a kernel-entry scalar:
  /// a constant, a size argument, or a scalar argument (a `tensor.empty` size); null
  /// when the lowering cannot tell.
  Value sizeOf(Value tensor, int64_t dim);
  /// The extent of `slot` (see IterationSpace), read from the anchor op's operands.
  FailureOr<Value> slotExtent(unsigned slot);
  /// Product of `values` at kernel entry (1 when empty).
  Value productOf(ArrayRef<Value> values);
  /// The size argument of a returned tensor's dimension on X slot `slot`, if any.
  Value returnedSizeOnSlot(unsigned slot);
  /// Row-major strides of the tensor at `position` (old arguments, then results).
  SmallVector<Value> rowMajorStrides(unsigned position);

  /// Which block dimensions (bit 0: X, bit 1: R) a value varies along.
  unsigned support(Value value);
  Value maskFor(Region &region, unsigned bits);

  FailureOr<Value> hoist(Value scalar);
  /// An index (a constant or a scalar of the old kernel) at kernel entry.
  FailureOr<Value> hoistIndex(OpFoldResult index);
  /// `base + sum(positions[i] * strides[i])`, skipping zero bases and unit strides.
  Value linearOffset(OpBuilder &b, int64_t base, ArrayRef<Value> positions,
                     ArrayRef<int64_t> strides);
  Value linearOffset(OpBuilder &b, ArrayRef<Value> positions, ArrayRef<Value> strides);
  /// The program's linear X index, where `positions` are its X slots' positions (as
  /// decomposed from it) and `strides` those of a row-major buffer of their static
  /// extents; null otherwise.
  Value rowMajorLinearIndex(ArrayRef<Value> positions, ArrayRef<int64_t> strides);
  /// The element offset of `memory` at `positions` (static or dynamic strides, and
  /// offsets known at run time); fails when such an offset cannot be computed.
  FailureOr<Value> offsetOf(OpBuilder &b, const MemoryOperand &memory,
                            ArrayRef<Value> positions);
  /// What a value used in `op`'s body stands for: its block or scalar, or, for a value
  /// defined outside the body (a constant), the scalar hoisted to the kernel's entry.
  FailureOr<Value> bodyValue(linalg::GenericOp op, IRMapping &mapping, Value value);
  /// Recreates an elementwise arith/math op on `operands`; when any is a block, scalars
  /// are splatted and the results are blocks.
  Value cloneElementwise(OpBuilder &b, Operation *op, ArrayRef<Value> operands);
  FailureOr<Value> evalIndex(AffineExpr expr, linalg::GenericOp op, Region &region);
  /// Evaluates an affine expression on index blocks; `leaf` gives dims and symbols.
  FailureOr<Value> evalAffine(AffineExpr expr, OpBuilder &b,
                              function_ref<FailureOr<Value>(AffineExpr)> leaf);
  /// Element offsets of `memory` at `map`'s position; for a padded operand, `inBounds`
  /// is set to the lanes inside the unpadded tensor (null when all are).
  FailureOr<Value> offsetsOf(const MemoryOperand &memory, AffineMap map,
                             linalg::GenericOp op, Region &region, Value *inBounds = nullptr);
  FailureOr<Value> load(Value pointer, Value offsets, Region &region);
  bool isRowOp(linalg::GenericOp op) const {
    return !op.getNumReductionLoops() && space.usesRSlots(op);
  }
  FailureOr<Value> valueOf(Value tensor, Region &region);
  FailureOr<Value> operandValue(linalg::GenericOp op, OpOperand &operand, Region &region);
  /// Emits `op`'s body in `region`, except the ops in `skip` (those reading an
  /// accumulator, which the reduction emitters replace).
  LogicalResult emitBody(linalg::GenericOp op, Region &region, ArrayRef<Operation *> skip,
                         IRMapping &mapping);
  LogicalResult emitOps(linalg::GenericOp op, Block &block, Region &region,
                        ArrayRef<Operation *> skip, IRMapping &mapping);
  LogicalResult emitWhile(linalg::GenericOp op, scf::WhileOp loop, Region &region,
                          IRMapping &mapping);
  LogicalResult emitGeneric(linalg::GenericOp op, Region &region);
  LogicalResult emitReduction(linalg::GenericOp op);
  /// A reduction that picks one element per row (see PickReduction).
  LogicalResult emitPickReduction(linalg::GenericOp op, const PickReduction &pick);
  /// The position of the current lanes in `op`'s iteration order over its reduction
  /// loops (row-major in loop order), as i64.
  Value reductionPosition(linalg::GenericOp op, Region &row);
  /// The value of `init` (an accumulator's initial tensor) in the outer region.
  FailureOr<Value> initialValue(linalg::GenericOp op, OpOperand *init);
  Value combine(OpBuilder &b, Operation *combiner, Value lhs, Value rhs);
  std::unique_ptr<Region> makeRowRegion(OpBuilder builder, Value rowOffset);
  /// A loop over the row's blocks carrying `start`: `body` computes the next carried
  /// values in the loop's row region. Returns the loop's results (in the outer region).
  FailureOr<SmallVector<Value>> emitRowLoop(
      ValueRange start,
      function_ref<FailureOr<SmallVector<Value>>(Region &row, ValueRange carried)> body);
  /// A float sum over rows of symbolic length (dyno-block-long-sums blocks static rows
  /// only on this target): lanes sum one stretch of kStretchChunks RBLOCK chunks, the
  /// stretch's lanes are combined in a tree, and the stretches' sums accumulate in f64.
  /// `lanes` computes a chunk's masked lanes in its row region. Returns the rows' sums
  /// (an XBLOCK x 1 block of `element`).
  FailureOr<Value> emitStretchedRowSum(Operation *combiner, Type element, Value identity,
                                       function_ref<FailureOr<Value>(Region &row)> lanes);
  LogicalResult store(unsigned resultNumber, Region &region);

  func::FuncOp oldKernel, newKernel;
  const IterationSpace &space;
  Location loc;
  unsigned rank;
  bool persistent;
  SmallVector<Value> pointers; // per old argument, then per old result (scalars as is)
  SizeArguments sizeArguments; // the launch ABI's size arguments
  SmallVector<Type> positionTypes; // old argument types, then old result types
  SmallVector<Value> xExtents, rExtents; // per slot, at kernel entry
  Value xLinearIndex;                    // the program's X index, before its decomposition
  SmallVector<Value> xSlotPositions;     // the X slots' positions decomposed from it
  Value xNumel, rNumel;
  std::optional<OpBuilder> hoistBuilder;
  IRMapping hoisted;
  std::unique_ptr<Region> outer, persistentRow;
  DenseMap<Value, unsigned> supportCache;
};

} // namespace mlir::dyno::tl

#endif // DYNO_LIB_TARGET_TRITON_KERNELEMITTER_H
