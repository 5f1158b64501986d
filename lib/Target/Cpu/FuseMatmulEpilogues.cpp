//===- FuseMatmulEpilogues.cpp - Activations into the library's GEMM -*- C++ -*-===//
//
// A bf16 library matmul whose only user is a kernel that applies GELU to it becomes
// one library call with a GELU epilogue: oneDNN applies it to the f32 accumulator before
// rounding, in the GEMM's own loop over its output. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Target/Cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>
#include <optional>

#define DEBUG_TYPE "dyno-fuse-matmul-epilogues"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOFUSEMATMULEPILOGUES
#include "dyno/Target/Cpu/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {

/// Matches, in the body of a kernel's one elementwise generic, what it computes from its
/// input element `input` (of type bf16): `widened` is the input in f32, seen through
/// exact round trips (`extf(truncf(extf(input)))`).
class ActivationMatcher {
public:
  explicit ActivationMatcher(Value input) : input(input) {}

  bool isWidenedInput(Value value) const {
    auto ext = value.getDefiningOp<arith::ExtFOp>();
    if (!ext || !ext.getType().isF32())
      return false;
    Value narrow = ext.getIn();
    if (narrow == input)
      return true;
    // truncf(extf(x)) of a narrow x is x itself.
    auto trunc = narrow.getDefiningOp<arith::TruncFOp>();
    return trunc && trunc.getType() == input.getType() && isWidenedInput(trunc.getIn());
  }

  /// The value of a float constant, also through extf/truncf of one (rounded as they
  /// round).
  static std::optional<double> constantValue(Value value) {
    if (auto constant = value.getDefiningOp<arith::ConstantOp>()) {
      auto attr = dyn_cast<FloatAttr>(constant.getValue());
      return attr ? std::optional<double>(attr.getValueAsDouble()) : std::nullopt;
    }
    Operation *def = value.getDefiningOp();
    if (!isa_and_nonnull<arith::ExtFOp, arith::TruncFOp>(def))
      return std::nullopt;
    std::optional<double> source = constantValue(def->getOperand(0));
    if (!source)
      return std::nullopt;
    APFloat converted(*source);
    bool losesInfo = false;
    converted.convert(cast<FloatType>(value.getType()).getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &losesInfo);
    return converted.convertToDouble();
  }

  /// Whether `value` is `widened * c` (either order) with a constant c equal to
  /// `expected` in f32.
  bool isScaledInput(Value value, double expected) const {
    auto mul = value.getDefiningOp<arith::MulFOp>();
    if (!mul)
      return false;
    for (auto [x, c] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      std::optional<double> scale = constantValue(c);
      if (isWidenedInput(x) && scale && float(*scale) == float(expected))
        return true;
    }
    return false;
  }

  /// GELU with erf, as PyTorch decomposes it: `h + h * erf(x * M_SQRT1_2)` with
  /// `h = x * 0.5`, or `h * (1 + erf(x * M_SQRT1_2))`, sums and products in either order.
  bool isGeluErf(Value value) const {
    auto isErf = [&](Value v) {
      auto erf = v.getDefiningOp<math::ErfOp>();
      return erf && isScaledInput(erf.getOperand(), M_SQRT1_2);
    };
    auto isHalf = [&](Value v) { return isScaledInput(v, 0.5); };
    if (auto add = value.getDefiningOp<arith::AddFOp>()) {
      for (auto [half, product] : {std::pair(add.getLhs(), add.getRhs()),
                                   std::pair(add.getRhs(), add.getLhs())}) {
        auto mul = product.getDefiningOp<arith::MulFOp>();
        if (!isHalf(half) || !mul)
          continue;
        if ((mul.getLhs() == half && isErf(mul.getRhs())) ||
            (mul.getRhs() == half && isErf(mul.getLhs())))
          return true;
      }
      return false;
    }
    auto mul = value.getDefiningOp<arith::MulFOp>();
    if (!mul)
      return false;
    for (auto [half, sum] : {std::pair(mul.getLhs(), mul.getRhs()),
                             std::pair(mul.getRhs(), mul.getLhs())}) {
      auto add = sum.getDefiningOp<arith::AddFOp>();
      if (!isHalf(half) || !add)
        continue;
      for (auto [one, erf] : {std::pair(add.getLhs(), add.getRhs()),
                              std::pair(add.getRhs(), add.getLhs())}) {
        std::optional<double> constant = constantValue(one);
        if (constant && *constant == 1.0 && isErf(erf))
          return true;
      }
    }
    return false;
  }

private:
  Value input;
};

/// The epilogue `kernel` applies, when all it does is apply one to its only argument,
/// elementwise, and return the result in the argument's own type.
std::optional<StringRef> matchEpilogueKernel(func::FuncOp kernel) {
  if (kernel.isExternal() || kernel.getNumArguments() != 1 || kernel.getNumResults() != 1)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(kernel.getArgumentTypes()[0]);
  if (!type || kernel.getResultTypes()[0] != type)
    return std::nullopt;
  linalg::GenericOp generic;
  for (Operation &op : kernel.getBody().front()) {
    if (auto found = dyn_cast<linalg::GenericOp>(op)) {
      if (generic)
        return std::nullopt;
      generic = found;
    } else if (!isa<tensor::EmptyOp, arith::ConstantOp, func::ReturnOp>(op)) {
      return std::nullopt;
    }
  }
  auto returnOp = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumResults() != 1 ||
      generic.getDpsInputs()[0] != kernel.getArgument(0) ||
      returnOp.getOperand(0) != generic.getResult(0) ||
      !generic.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return std::nullopt;
  Block *body = generic.getBody();
  // Only arithmetic on the input element: no index, no read of another tensor.
  for (Operation &op : body->without_terminator())
    if (op.getNumRegions() || !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      return std::nullopt;
  Value yielded = body->getTerminator()->getOperand(0);
  auto rounded = yielded.getDefiningOp<arith::TruncFOp>();
  if (!rounded || !rounded.getIn().getType().isF32())
    return std::nullopt;
  ActivationMatcher matcher(body->getArgument(0));
  if (matcher.isGeluErf(rounded.getIn()))
    return StringRef("gelu");
  return std::nullopt;
}

struct FuseMatmulEpiloguesPass
    : mlir::dyno::impl::DynoFuseMatmulEpiloguesBase<FuseMatmulEpiloguesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<dyno::LaunchOp> launches;
    module.walk([&](dyno::LaunchOp launch) { launches.push_back(launch); });
    for (dyno::LaunchOp launch : launches) {
      if (launch.getArgs().size() != 1 || launch->getNumResults() != 1)
        continue;
      auto matmul = launch.getArgs()[0].getDefiningOp<dyno::ContractionOp>();
      if (!matmul || matmul.getName() != "matmul" || matmul.getEpilogue() ||
          !matmul->hasOneUse())
        continue;
      // bf16 only: an f16 product that overflows is +-inf in eager before its GELU
      // (GELU(-inf) is NaN there), where the accumulator's GELU is finite.
      if (!getElementTypeOrSelf(matmul.getType()).isBF16())
        continue;
      if (matmul.getArgs().size() == 3 &&
          cast<RankedTensorType>(matmul.getArgs()[2].getType()).getRank() != 1)
        continue; // an accumulator, not a bias
      auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          launch, launch.getCalleeAttr());
      std::optional<StringRef> epilogue = kernel ? matchEpilogueKernel(kernel) : std::nullopt;
      if (!epilogue || launch->getResult(0).getType() != matmul.getType())
        continue;
      OpBuilder builder(launch);
      auto fused = dyno::ContractionOp::create(
          builder, matmul.getLoc(), matmul.getType(), matmul.getName(), matmul.getArgs(),
          nullptr, nullptr, nullptr, nullptr, builder.getStringAttr(*epilogue));
      launch->getResult(0).replaceAllUsesWith(fused.getResult());
      launch->erase();
      matmul->erase();
      if (SymbolTable::symbolKnownUseEmpty(kernel, module))
        kernel->erase();
    }
  }
};

} // namespace
