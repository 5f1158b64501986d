//===- IterationSpace.h - A kernel's Triton iteration space -----*- C++ -*-===//
//
// Places every loop of every linalg.generic of a kernel on one of the kernel's index
// *slots*: the X slots (parallel rows, split across program instances) and the R slots
// (the reduced extent, walked by each program). Loops linked through an intermediate
// tensor (producer's result dimension i read by a consumer's dimension i) share a slot,
// so a producer's block can be used by its consumer as is.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_LIB_TARGET_TRITON_ITERATIONSPACE_H
#define DYNO_LIB_TARGET_TRITON_ITERATIONSPACE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::dyno {

/// Where a kernel reads a tensor operand from: a kernel argument, possibly through
/// static views (reshape of a contiguous tensor, slice), as an element offset and a
/// stride per dimension.
struct MemoryOperand {
  unsigned argument = 0;
  int64_t offset = 0;
  llvm::SmallVector<int64_t> strides;
  /// A `tensor.pad` of the argument: per dimension the low padding and the unpadded
  /// size; elements outside read `padValue` (empty when not padded).
  llvm::SmallVector<int64_t> padLow, unpaddedSizes;
  Value padValue;
  /// A strided slice of a padded tensor (a max pool's windows): per dimension the
  /// step, in the unpadded tensor, of one step of the view (empty when all are 1). The
  /// view's position j reads the unpadded position j * padScale - padLow.
  llvm::SmallVector<int64_t> padScale;
  /// Whether some stride is only known at run time: a dynamically shaped argument read
  /// row-major, possibly through reshapes that add or drop unit dimensions. Then
  /// `strideDims` gives, per dimension, the argument dimension whose row-major stride it
  /// steps by (-1 for a unit dimension).
  bool isDynamic() const;
  llvm::SmallVector<int64_t> strideDims;
  /// Dynamic strides only: per dimension, a static multiplier of the stride of its
  /// `strideDims` dimension (a strided slice); empty when all are 1.
  llvm::SmallVector<int64_t> strideScales;
  int64_t strideScale(unsigned dim) const {
    return strideScales.empty() ? 1 : strideScales[dim];
  }
  /// Slices whose offsets are known only at run time, or whose source has dynamic
  /// strides: each term adds `offset` times a stride, either `staticStride` or, when that
  /// is ShapedType::kDynamic, `scale` times the row-major stride of the argument's
  /// dimension `argumentDim`. `offset` is an attribute or a scalar of the old kernel.
  struct OffsetTerm {
    OpFoldResult offset;
    int64_t staticStride;
    int64_t argumentDim;
    int64_t scale;
  };
  llvm::SmallVector<OffsetTerm> offsetTerms;
};

/// What a tensor value of a kernel is, for the Triton lowering.
struct TensorSource {
  enum Kind { Memory, ScalarFill, Computed } kind;
  MemoryOperand memory;         // Memory
  Value scalar;                 // ScalarFill: the fill value (defined outside the op)
  linalg::GenericOp producer;   // Computed
  unsigned resultNumber = 0;    // Computed
  /// Computed: per dimension of the traced tensor, the producer's result dimension, or
  /// -1 for a unit dimension a reshape inserted (reshapes that only add or drop unit
  /// dimensions are followed through).
  llvm::SmallVector<int64_t> resultDims;
};

/// The scalar a generic fills its result with, when it is a fill (no inputs, all
/// parallel, yields a value defined outside its body); null otherwise.
Value scalarFillValue(linalg::GenericOp op);

/// The dimension d when `op` fills its integer result with each element's position along
/// d (an iota: no inputs, all parallel, yields `index_cast(linalg.index d)`, as
/// torch-mlir writes the indices topk and sort start from).
std::optional<int64_t> iotaDimension(linalg::GenericOp op);

/// Classifies a tensor value of `kernel`; emits an error and fails on anything the
/// Triton lowering cannot read (tensors built by other ops, dynamic views).
FailureOr<TensorSource> traceTensor(Value tensor);

/// Whether `kernel` lowers as one Triton program: its generics fit one iteration space
/// (IterationSpace::build succeeds, silently) and none gathers from a tensor the kernel
/// computes (a program reads gathered elements from memory only).
bool fitsOneIterationSpace(func::FuncOp kernel);

class IterationSpace {
public:
  /// Builds the space of `kernel`, or emits an error saying which loop or operand the
  /// Triton lowering cannot place.
  static FailureOr<IterationSpace> build(func::FuncOp kernel);

  /// The generics that compute something (scalar fills only used as operands are not
  /// among them), in program order.
  ArrayRef<linalg::GenericOp> generics() const { return computeOps; }

  bool hasReduction() const { return !rExtents.empty(); }
  unsigned numXSlots() const { return xExtents.size(); }
  unsigned numRSlots() const { return rExtents.size(); }
  ArrayRef<int64_t> xSlotExtents() const { return xExtents; }
  ArrayRef<int64_t> rSlotExtents() const { return rExtents; }
  /// Products of the extents; ShapedType::kDynamic when some extent is dynamic.
  int64_t xNumel() const;
  int64_t rNumel() const;
  /// The op whose loops define the slots, and per slot (X slots, then R slots) its loop.
  linalg::GenericOp anchor() const { return anchorOp; }
  unsigned anchorLoop(unsigned slot) const { return anchorLoops[slot]; }

  /// Slot of loop `loop` of `op`: [0, numXSlots) are X slots, then the R slots;
  /// kUnitSlot for a loop of extent 1 that meets no other loop (its index is 0).
  unsigned slot(linalg::GenericOp op, unsigned loop) const;
  static constexpr unsigned kUnitSlot = ~0u;
  bool isRSlot(unsigned slot) const {
    return slot != kUnitSlot && slot >= xExtents.size();
  }
  /// Whether `op` has a loop on an R slot (its blocks depend on the reduced index).
  bool usesRSlots(linalg::GenericOp op) const;

private:
  llvm::SmallVector<linalg::GenericOp> computeOps;
  llvm::SmallVector<int64_t> xExtents, rExtents;
  linalg::GenericOp anchorOp;
  llvm::SmallVector<unsigned> anchorLoops;
  llvm::DenseMap<std::pair<Operation *, unsigned>, unsigned> slots;
};

} // namespace mlir::dyno

#endif // DYNO_LIB_TARGET_TRITON_ITERATIONSPACE_H
