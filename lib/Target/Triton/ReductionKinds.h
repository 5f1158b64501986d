//===- ReductionKinds.h - Reductions the Triton target computes -*- C++ -*-===//
#ifndef DYNO_LIB_TARGET_TRITON_REDUCTIONKINDS_H
#define DYNO_LIB_TARGET_TRITON_REDUCTIONKINDS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

namespace mlir::dyno {

/// The kinds of reduction Triton computes, by the arith op that combines two partial
/// results; with the identity each masked lane contributes.
struct ReductionKind {
  StringRef name;
  TypedAttr identity;
};

/// The reduction `combiner` (an arith op on `element`) computes, if Triton has it.
std::optional<ReductionKind> reductionKindOf(Operation *combiner, Type element);

/// A reduction that picks one element of each row, by its position in the generic's
/// iteration order, and whose accumulators take values computed from that element.
/// torch-mlir writes these as sequential updates of several accumulators:
///
/// - Extremum (argmax, max with indices, bucketize): the running value V is compared
///   with each element e (`compare`, e.g. `e > V`); where e wins, every other
///   accumulator takes its payload (`select %wins, %payload, %acc`). V itself is
///   either combined (`maximumf e, V`) or selected like a payload. A strict comparison
///   keeps the first of equal extrema, a non-strict one the last.
/// - FindFirst (max pooling's indices): an accumulator starting at the marker `unset`
///   takes the payload of the first element where `condition` holds and whose payload
///   is not `unset` itself (`select (acc == unset), (select cond, payload, acc), acc`).
struct PickReduction {
  enum class Rule { Extremum, FindFirst } rule;
  /// Extremum: the element, the comparison (e first or V first), the running value's
  /// accumulator, and its combiner (null when V is selected like a payload).
  Value element;
  Operation *compare = nullptr;
  bool elementIsLhs = true;
  bool strict = true;
  bool isMax = true;
  bool isUnsigned = false; // an unsigned integer comparison
  unsigned comparedInit = 0;
  Operation *valueCombiner = nullptr;
  /// A NaN-propagating combiner (maximumf/minimumf): once V is NaN no element wins, so
  /// only elements before a row's first NaN can be picked.
  bool cutAtFirstNaN = false;
  /// FindFirst.
  Value condition, unset;
  /// Per init: the payload it takes from the picked element (null for the combined V).
  llvm::SmallVector<Value> payloads;
  /// The body ops that read an accumulator (replaced by the pick).
  llvm::SmallPtrSet<Operation *, 8> accumulatorOps;
};

/// Recognizes `op` (a generic with reduction loops) as a pick reduction, or sets
/// `whyNot` and returns nothing.
std::optional<PickReduction> matchPickReduction(linalg::GenericOp op, std::string &whyNot);

} // namespace mlir::dyno

#endif // DYNO_LIB_TARGET_TRITON_REDUCTIONKINDS_H
