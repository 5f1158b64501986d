//===- LowPrecisionFloats.h - bf16/f16 tensors and their f32 forms -*- C++ -*-===//
//
// Shared by dyno-widen-low-precision-floats (bodies computed in f32) and
// dyno-form-kernels (bf16/f16 matmuls and convolutions called in their own precision).
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_LOWPRECISIONFLOATS_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_LOWPRECISIONFLOATS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace mlir::dyno {

/// A unit attribute on `arith.truncf`: the rounding of an op's bf16/f16 result that
/// dyno-widen-low-precision-floats makes explicit (not one the program asked for).
/// dyno-fold-fused-roundings drops it where the value stays inside a fused body.
inline constexpr llvm::StringLiteral kOpRoundingAttr = "dyno.op_rounding";

/// bf16 and f16: the types eager computes in float32 and rounds.
bool isLowPrecisionFloat(Type type);

/// `type`'s shape (a scalar or a vector) with `element` as its element type.
inline Type withElement(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

/// An elementwise linalg.generic casting every element of `source` to `elementType`
/// (arith.extf when wider, arith.truncf when narrower; `opRounding` tags the latter).
Value castTensorElements(OpBuilder &builder, Location loc, Value source, Type elementType,
                         bool opRounding = false);

/// When `value` is a bf16/f16 tensor widened elementwise to f32 (an identity
/// linalg.generic whose body is one arith.extf), returns the low-precision tensor.
Value widenedLowPrecisionSource(Value value);

/// When `value` is an MxN tensor repeating an N-vector on every row (a linalg.generic
/// reading it through (d0, d1) -> (d1) and yielding it, possibly widened), returns the
/// vector.
Value broadcastRowBiasSource(Value value);

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_LOWPRECISIONFLOATS_H
