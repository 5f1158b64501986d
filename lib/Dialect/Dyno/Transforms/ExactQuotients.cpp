//===- ExactQuotients.cpp - Divisions that must be correctly rounded -*- C++ -*-===//
#include "dyno/Dialect/Dyno/Transforms/ExactQuotients.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

bool dyno::quotientIsRoundedOrCompared(arith::DivFOp division) {
  SmallVector<Value> worklist = {division.getResult()};
  llvm::SmallPtrSet<Operation *, 8> visited;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (!visited.insert(user).second)
        continue;
      if (isa<math::FloorOp, math::CeilOp, math::TruncOp, math::RoundOp, math::RoundEvenOp,
              arith::FPToSIOp, arith::FPToUIOp, arith::CmpFOp, arith::RemFOp>(user))
        return true;
      // Sign changes and selections keep whether the value is an integer.
      if (isa<arith::NegFOp, math::AbsFOp, arith::SelectOp, math::CopySignOp>(user))
        worklist.append(user->result_begin(), user->result_end());
    }
  }
  return false;
}
