//===- ScanScatterSortEmitter.h - Emits one scan, sort or scatter kernel -*- C++ -*-===//
//
// The state and shared steps of lowering one kernel that holds a dyno.scan, dyno.sort
// or dyno.scatter to a `tl` block program (the
// `dyno-convert-scans-scatters-sorts-to-triton-level` pass).
// ScansScattersSortsToTritonLevel.cpp creates the kernel, reads and writes its tensors
// and runs the pass; ScansToTritonLevel.cpp, SortsToTritonLevel.cpp and
// ScattersToTritonLevel.cpp emit scans, sorts and scatters.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_LIB_TARGET_TRITON_SCANSCATTERSORTEMITTER_H
#define DYNO_LIB_TARGET_TRITON_SCANSCATTERSORTEMITTER_H

#include "SizeArguments.h"

#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <optional>
#include <utility>

namespace mlir::dyno {

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

inline int64_t product(ArrayRef<int64_t> sizes) {
  int64_t result = 1;
  for (int64_t size : sizes)
    result *= size;
  return result;
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
  tl::SizeArguments sizeArguments;
  bool dynamicShapes = false;
  std::optional<OpBuilder> b;
};

} // namespace mlir::dyno

#endif // DYNO_LIB_TARGET_TRITON_SCANSCATTERSORTEMITTER_H
