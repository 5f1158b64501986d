//===- ExactQuotients.h - Divisions that must be correctly rounded -*- C++ -*-===//
//
// Shared by dyno-multiply-by-reciprocals, dyno-reassociate-floats and the Triton
// printer: each may compute a quotient as x * (1 / y) or with an approximate division,
// except where that changes a result beyond rounding.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_EXACTQUOTIENTS_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_EXACTQUOTIENTS_H

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::dyno {

/// Whether the last bit of `division`'s quotient can change an integer or a truth value
/// computed from it. x * (1 / y) may land one ulp below an exact integer quotient
/// (trunc(1083 * 0.3 * (1 / 0.3)) gave 1082 in f32), and a floor, trunc, round,
/// conversion to an integer, remainder or comparison turns that ulp into a wrong
/// result (floor_divide, div with rounding_mode). Such a quotient must be the correctly
/// rounded x / y: no `arcp`, no reciprocal, no approximate division.
bool quotientIsRoundedOrCompared(arith::DivFOp division);

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_EXACTQUOTIENTS_H
