//===- TranslateToTriton.cpp - Triton-level kernels as Python ---*- C++ -*-===//
//
// Prints every `tl` kernel (see the TritonLevel dialect) as a `@triton.jit` function, one
// Python statement per op, and a `KERNELS` table with each kernel's index-space sizes
// and block-size configurations. The output needs only torch and triton to run.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Triton/TranslateToTriton.h"

#include "dyno/Dialect/Dyno/IR/DynoDialect.h"
#include "dyno/Dialect/Dyno/Transforms/ExactQuotients.h"
#include "dyno/Dialect/Dyno/Transforms/KernelIdentity.h"
#include "dyno/Dialect/TritonLevel/IR/TritonLevelOps.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::dyno;

namespace {

/// The prelude of every generated kernels module: TritonPrelude.py, embedded at build
/// time as `kPrelude` (combine functions for reductions Triton has no builtin with ATen's
/// semantics for, and the kernels' helpers).
#include "TritonPrelude.inc"

/// `text` as a Python string literal.
std::string pythonString(StringRef text) {
  std::string literal = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      literal += '\\';
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      literal += ' '; // (messages are ASCII; a control character would end the literal)
    else
      literal += c;
  }
  return literal + "\"";
}

class KernelPrinter {
public:
  KernelPrinter(func::FuncOp kernel, raw_ostream &os) : kernel(kernel), os(os) {
    indexBits = kernel->getAttrOfType<IntegerAttr>(tl::kIndexBitsAttr)
                    ? kernel->getAttrOfType<IntegerAttr>(tl::kIndexBitsAttr).getInt()
                    : 32;
  }
  LogicalResult print();

private:
  FailureOr<std::string> dtype(Type type);
  FailureOr<std::string> literal(arith::ConstantOp constant);
  std::string name(Value value);
  std::string fresh() { return "v" + std::to_string(counter++); }
  LogicalResult printWhile(scf::WhileOp loop, unsigned indent);
  bool rebinding = false; // printing a while loop's condition block again
  DenseMap<Operation *, std::string> combiners; // tl.scan combine -> its function
  LogicalResult printBlock(Block &block, unsigned indent);
  LogicalResult printOp(Operation *op, unsigned indent);
  FailureOr<std::string> expression(Operation *op);
  InFlightDiagnostic unsupported(Operation *op) {
    return op->emitOpError("cannot be printed as Triton");
  }

  func::FuncOp kernel;
  raw_ostream &os;
  int64_t indexBits;
  unsigned counter = 0;
  DenseMap<Value, std::string> names;
};

FailureOr<std::string> KernelPrinter::dtype(Type type) {
  type = getElementTypeOrSelf(type);
  if (type.isIndex())
    return std::string(indexBits == 64 ? "tl.int64" : "tl.int32");
  if (type.isF32())
    return std::string("tl.float32");
  if (type.isF16())
    return std::string("tl.float16");
  if (type.isBF16())
    return std::string("tl.bfloat16");
  if (type.isF64())
    return std::string("tl.float64");
  if (type.isInteger(1))
    return std::string("tl.int1");
  if (auto integer = dyn_cast<IntegerType>(type))
    if (llvm::is_contained({8u, 16u, 32u, 64u}, integer.getWidth()))
      return "tl.int" + std::to_string(integer.getWidth());
  return failure();
}

FailureOr<std::string> KernelPrinter::literal(arith::ConstantOp constant) {
  Attribute value = constant.getValue();
  Type type = constant.getType();
  std::string text;
  if (auto floatAttr = dyn_cast<FloatAttr>(value)) {
    double number = floatAttr.getValueAsDouble();
    if (std::isnan(number)) // its sign kept (a float min atomic needs a negative NaN)
      text = std::signbit(number) ? "-float(\"nan\")" : "float(\"nan\")";
    else if (std::isinf(number))
      text = number > 0 ? "float(\"inf\")" : "float(\"-inf\")";
    else {
      char buffer[32];
      snprintf(buffer, sizeof(buffer), "%.17g", number);
      text = buffer;
      if (text.find_first_of(".en") == std::string::npos)
        text += ".0";
    }
    if (type.isF32())
      return text;
  } else if (auto intAttr = dyn_cast<IntegerAttr>(value)) {
    if (type.isInteger(1))
      return std::string(intAttr.getValue().isZero() ? "False" : "True");
    text = std::to_string(type.isIndex() ? intAttr.getInt() : intAttr.getValue().getSExtValue());
    if (type.isIndex() || type.isInteger(32))
      return text;
  } else {
    return failure();
  }
  FailureOr<std::string> typeName = dtype(type);
  if (failed(typeName))
    return failure();
  return "tl.full([], " + text + ", " + *typeName + ")";
}

std::string KernelPrinter::name(Value value) {
  auto it = names.find(value);
  if (it != names.end())
    return it->second;
  return "<unnamed>";
}

FailureOr<std::string> KernelPrinter::expression(Operation *op) {
  auto operand = [&](unsigned i) { return name(op->getOperand(i)); };
  auto binary = [&](StringRef symbol) {
    return "(" + operand(0) + " " + symbol.str() + " " + operand(1) + ")";
  };
  // Triton's interpreter cannot combine a block of booleans with a broadcast scalar
  // boolean (a comparison of a loaded scalar): those go through int8. Compiled Triton
  // folds the casts.
  auto logical = [&](StringRef symbol) {
    bool scalarBool = getElementTypeOrSelf(op->getResult(0).getType()).isInteger(1) &&
                      llvm::any_of(op->getOperands(), [](Value v) {
                        auto splat = v.getDefiningOp<tl::SplatOp>();
                        return splat && !splat.getValue().getDefiningOp<arith::ConstantOp>();
                      });
    if (!scalarBool)
      return binary(symbol);
    return "((" + operand(0) + ".to(tl.int8) " + symbol.str() + " " + operand(1) +
           ".to(tl.int8)) != 0)";
  };
  auto call = [&](StringRef function) {
    std::string text = function.str() + "(";
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      text += (i ? ", " : "") + operand(i);
    return text + ")";
  };
  // The prelude's helpers take tensors (they read .dtype): a constant operand, printed
  // as a bare Python number, becomes a 0-d tensor.
  auto helperCall = [&](StringRef function) -> FailureOr<std::string> {
    std::string text = function.str() + "(";
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      Value value = op->getOperand(i);
      std::string argument = name(value);
      auto splat = value.getDefiningOp<tl::SplatOp>();
      bool constant = value.getDefiningOp<arith::ConstantOp>() ||
                      (splat && splat.getValue().getDefiningOp<arith::ConstantOp>());
      if (constant && !StringRef(argument).starts_with("tl.full")) {
        FailureOr<std::string> type = dtype(getElementTypeOrSelf(value.getType()));
        if (failed(type))
          return failure();
        argument = "tl.full([], " + argument + ", " + *type + ")";
      }
      text += (i ? ", " : "") + argument;
    }
    return text + ")";
  };
  auto castTo = [&](Type type, bool bitcast = false) -> FailureOr<std::string> {
    FailureOr<std::string> target = dtype(type);
    if (failed(target))
      return failure();
    return "tl.cast(" + operand(0) + ", " + *target + (bitcast ? ", bitcast=True)" : ")");
  };
  auto unsignedView = [&](Value value) -> std::string {
    unsigned width = getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth();
    if (width == 1)
      return name(value);
    return "tl.cast(" + name(value) + ", tl.uint" + std::to_string(width) + ", bitcast=True)";
  };
  Type resultType = op->getNumResults() ? op->getResult(0).getType() : Type();
  bool isIndex = resultType && getElementTypeOrSelf(resultType).isIndex();
  using R = FailureOr<std::string>;
  return llvm::TypeSwitch<Operation *, R>(op)
      .Case<arith::AddFOp, arith::AddIOp>([&](auto) { return R(binary("+")); })
      .Case<arith::SubFOp, arith::SubIOp>([&](auto) { return R(binary("-")); })
      .Case<arith::MulFOp, arith::MulIOp>([&](auto) { return R(binary("*")); })
      .Case<arith::DivFOp>([&](auto division) {
        // Triton's f32 `/` is PTX div.full (2 ulp); a floored, truncated or compared
        // quotient must be correctly rounded (ExactQuotients.h). div_rn takes f32 only
        // (f64's `/` is div.rn already; f16/bf16 are computed in f32 and rounded).
        if (dyno::quotientIsRoundedOrCompared(division) &&
            getElementTypeOrSelf(division.getType()).isF32())
          return R("tl.math.div_rn(" + operand(0) + ", " + operand(1) + ")");
        return R(binary("/"));
      })
      .Case<arith::DivSIOp>([&](auto) { return R(binary("//")); }) // C semantics in Triton
      .Case<arith::RemSIOp, arith::RemFOp>([&](auto) { return R(binary("%")); })
      .Case<arith::FloorDivSIOp>([&](auto) {
        // Triton's // truncates; step down where the signs differ and it was inexact.
        std::string a = operand(0), b = operand(1);
        return R("tl.where(((" + a + " % " + b + ") != 0) & ((" + a + " < 0) != (" + b +
                 " < 0)), " + a + " // " + b + " - 1, " + a + " // " + b + ")");
      })
      .Case<arith::CeilDivSIOp>([&](auto) {
        std::string a = operand(0), b = operand(1);
        return R("tl.where(((" + a + " % " + b + ") != 0) & ((" + a + " < 0) == (" + b +
                 " < 0)), " + a + " // " + b + " + 1, " + a + " // " + b + ")");
      })
      .Case<arith::DivUIOp>([&](auto) { return isIndex ? R(binary("//")) : R(failure()); })
      .Case<arith::RemUIOp>([&](auto) { return isIndex ? R(binary("%")) : R(failure()); })
      .Case<arith::NegFOp>([&](auto) { return R("(-" + operand(0) + ")"); })
      .Case<arith::AndIOp>([&](auto) { return R(logical("&")); })
      .Case<arith::OrIOp>([&](auto) { return R(logical("|")); })
      .Case<arith::XOrIOp>([&](auto) { return R(logical("^")); })
      .Case<arith::ShLIOp>([&](auto) { return R(binary("<<")); })
      .Case<arith::ShRSIOp>([&](auto) { return R(binary(">>")); })
      .Case<arith::ShRUIOp>([&](arith::ShRUIOp shift) -> R {
        // Triton's >> is arithmetic on signed integers: shift the unsigned view (math
        // expansions of round and friends shift float bit patterns this way).
        FailureOr<std::string> type = dtype(resultType);
        if (failed(type))
          return failure();
        return "tl.cast(" + unsignedView(shift.getLhs()) + " >> " +
               unsignedView(shift.getRhs()) + ", " + *type + ", bitcast=True)";
      })
      .Case<arith::MaximumFOp>([&](auto) { return R(call("_dyno_max")); })
      .Case<arith::MinimumFOp>([&](auto) { return R(call("_dyno_min")); })
      .Case<arith::MaxNumFOp>([&](auto) { return R(call("_dyno_maxnum")); })
      .Case<arith::MinNumFOp>([&](auto) { return R(call("_dyno_minnum")); })
      .Case<arith::MaxSIOp>([&](auto) { return R(call("tl.maximum")); })
      .Case<arith::MinSIOp>([&](auto) { return R(call("tl.minimum")); })
      .Case<arith::SelectOp>([&](auto) { return R(call("tl.where")); })
      .Case<arith::CmpIOp>([&](arith::CmpIOp cmp) -> R {
        bool indexOperands = getElementTypeOrSelf(cmp.getLhs().getType()).isIndex();
        switch (cmp.getPredicate()) {
        case arith::CmpIPredicate::eq: return binary("==");
        case arith::CmpIPredicate::ne: return binary("!=");
        case arith::CmpIPredicate::slt: return binary("<");
        case arith::CmpIPredicate::sle: return binary("<=");
        case arith::CmpIPredicate::sgt: return binary(">");
        case arith::CmpIPredicate::sge: return binary(">=");
        default: break;
        }
        std::string lhs = indexOperands ? operand(0) : unsignedView(cmp.getLhs());
        std::string rhs = indexOperands ? operand(1) : unsignedView(cmp.getRhs());
        switch (cmp.getPredicate()) {
        case arith::CmpIPredicate::ult: return "(" + lhs + " < " + rhs + ")";
        case arith::CmpIPredicate::ule: return "(" + lhs + " <= " + rhs + ")";
        case arith::CmpIPredicate::ugt: return "(" + lhs + " > " + rhs + ")";
        case arith::CmpIPredicate::uge: return "(" + lhs + " >= " + rhs + ")";
        default: return failure();
        }
      })
      .Case<arith::CmpFOp>([&](arith::CmpFOp cmp) -> R {
        std::string a = operand(0), b = operand(1);
        // NaN tests of operands that may be NaN: a constant that is not NaN is left out
        // (`0.0 != 0.0` on 0-d blocks also breaks the interpreter's `|`).
        SmallVector<Value> mayBeNaN;
        for (Value value : {cmp.getLhs(), cmp.getRhs()}) {
          Value scalar = value;
          if (auto splat = value.getDefiningOp<tl::SplatOp>())
            scalar = splat.getOperand();
          FloatAttr constant;
          if (!matchPattern(scalar, m_Constant(&constant)) || constant.getValue().isNaN())
            mayBeNaN.push_back(value);
        }
        std::string unordered = "False", ordered = "True";
        for (auto [i, value] : llvm::enumerate(mayBeNaN)) {
          std::string x = name(value);
          unordered = (i ? unordered + " | " : "") + "(" + x + " != " + x + ")";
          ordered = (i ? ordered + " & " : "") + "(" + x + " == " + x + ")";
        }
        auto cmpText = [&](StringRef symbol) { return "(" + a + " " + symbol.str() + " " + b + ")"; };
        auto orUnordered = [&](std::string text) {
          return mayBeNaN.empty() ? text : "(" + text + " | " + unordered + ")";
        };
        auto andOrdered = [&](std::string text) {
          return mayBeNaN.empty() ? text : "(" + text + " & " + ordered + ")";
        };
        switch (cmp.getPredicate()) {
        case arith::CmpFPredicate::OEQ: return cmpText("==");
        case arith::CmpFPredicate::OGT: return cmpText(">");
        case arith::CmpFPredicate::OGE: return cmpText(">=");
        case arith::CmpFPredicate::OLT: return cmpText("<");
        case arith::CmpFPredicate::OLE: return cmpText("<=");
        case arith::CmpFPredicate::ONE: return andOrdered(cmpText("!="));
        case arith::CmpFPredicate::ORD:
          return mayBeNaN.empty() ? "(" + a + " == " + a + ")" : "(" + ordered + ")";
        case arith::CmpFPredicate::UEQ: return orUnordered(cmpText("=="));
        case arith::CmpFPredicate::UGT: return orUnordered(cmpText(">"));
        case arith::CmpFPredicate::UGE: return orUnordered(cmpText(">="));
        case arith::CmpFPredicate::ULT: return orUnordered(cmpText("<"));
        case arith::CmpFPredicate::ULE: return orUnordered(cmpText("<="));
        case arith::CmpFPredicate::UNE: return cmpText("!=");
        case arith::CmpFPredicate::UNO:
          return mayBeNaN.empty() ? "(" + a + " != " + a + ")" : "(" + unordered + ")";
        case arith::CmpFPredicate::AlwaysTrue: return "((" + a + " == " + a + ") | True)";
        case arith::CmpFPredicate::AlwaysFalse: return "((" + a + " == " + a + ") & False)";
        }
        return failure();
      })
      // (f32 <-> bf16 are casts: `cvt.rn.bf16.f32` rounds as eager does on sm80 and later;
      // the Triton runtime makes the interpreter's casts exact.)
      .Case<arith::TruncFOp, arith::ExtFOp, arith::SIToFPOp, arith::FPToSIOp, arith::ExtSIOp,
            arith::TruncIOp, arith::IndexCastOp>([&](auto) { return castTo(resultType); })
      .Case<arith::BitcastOp>([&](auto) { return castTo(resultType, /*bitcast=*/true); })
      .Case<arith::ExtUIOp, arith::UIToFPOp, arith::IndexCastUIOp>([&](auto) -> R {
        FailureOr<std::string> target = dtype(resultType);
        if (failed(target))
          return failure();
        return "tl.cast(" + unsignedView(op->getOperand(0)) + ", " + *target + ")";
      })
      .Case<math::ExpOp>([&](auto) { return R(call("tl.exp")); })
      .Case<math::Exp2Op>([&](auto) { return R(call("tl.exp2")); })
      .Case<math::LogOp>([&](auto) { return R(call("tl.log")); })
      .Case<math::Log2Op>([&](auto) { return R(call("tl.log2")); })
      .Case<math::Log10Op>([&](auto) {
        return R("(tl.log(" + operand(0) + ") * 0.43429448190325182)");
      })
      .Case<math::SqrtOp>([&](auto) -> R {
        // IEEE-rounded square roots: sqrt_rn takes float32 only; tl.sqrt of float64 is
        // sqrt.rn.f64; half precision rounds the float32 root (exact: 24 > 2 * 11 + 2).
        Type element = getElementTypeOrSelf(resultType);
        if (element.isF64())
          return call("tl.sqrt");
        if (element.isF32())
          return call("tl.sqrt_rn");
        FailureOr<std::string> target = dtype(resultType);
        if (failed(target))
          return failure();
        return "tl.sqrt_rn(" + operand(0) + ".to(tl.float32)).to(" + *target + ")";
      })
      .Case<math::RsqrtOp>([&](auto) { return R(call("tl.rsqrt")); })
      .Case<math::ErfOp>([&](auto) { return R(call("tl.erf")); })
      .Case<math::SinOp>([&](auto) { return R(call("tl.sin")); })
      .Case<math::CosOp>([&](auto) { return R(call("tl.cos")); })
      .Case<math::FloorOp>([&](auto) { return R(call("tl.floor")); })
      .Case<math::CeilOp>([&](auto) { return R(call("tl.ceil")); })
      .Case<math::AbsFOp, math::AbsIOp>([&](auto) { return R(call("tl.abs")); })
      .Case<math::FmaOp>([&](auto) { return R(call("tl.fma")); })
      .Case<math::IsNaNOp>([&](auto) { return R("(" + operand(0) + " != " + operand(0) + ")"); })
      .Case<math::IsInfOp>([&](auto) {
        return R("(tl.abs(" + operand(0) + ") == float(\"inf\"))");
      })
      .Case<math::IsFiniteOp>([&](auto) {
        return R("(tl.abs(" + operand(0) + ") < float(\"inf\"))");
      })
      .Case<math::CopySignOp>([&](auto) { return helperCall("_dyno_copysign"); })
      .Case<math::SinhOp>([&](auto) { return helperCall("_dyno_sinh"); })
      .Case<math::CoshOp>([&](auto) { return helperCall("_dyno_cosh"); })
      .Case<math::TanhOp>([&](auto) { return helperCall("_dyno_tanh"); })
      .Case<math::AsinhOp>([&](auto) { return helperCall("_dyno_asinh"); })
      .Case<math::AcoshOp>([&](auto) { return helperCall("_dyno_acosh"); })
      .Case<math::AtanhOp>([&](auto) { return helperCall("_dyno_atanh"); })
      .Case<math::RoundEvenOp>([&](auto) { return helperCall("_dyno_roundeven"); })
      .Case<math::RoundOp>([&](auto) { return helperCall("_dyno_round"); })
      .Case<math::PowFOp>([&](auto) { return helperCall("_dyno_pow"); })
      .Case<tl::ProgramIdOp>([&](tl::ProgramIdOp pid) {
        std::string text = "tl.program_id(" + std::to_string(pid.getAxis()) + ")";
        return R(indexBits == 64 ? "tl.cast(" + text + ", tl.int64)" : text);
      })
      .Case<tl::BlockSizeOp>([&](tl::BlockSizeOp size) { return R(size.getName().str()); })
      .Case<tl::RangeOp>([&](tl::RangeOp range) {
        // With 64-bit indices every offset is computed in int64: a range times a row
        // length (`r * 800000000`) would otherwise wrap in int32 past 2**31.
        std::string text = "tl.arange(0, " + range.getBlock().str() + ")";
        if (indexBits == 64)
          text = "tl.cast(" + text + ", tl.int64)";
        int64_t rank = range.getResult().getType().getRank();
        if (rank == 2)
          text += range.getDim() == 0 ? "[:, None]" : "[None, :]";
        return R(text);
      })
      .Case<tl::FullOp>([&](tl::FullOp full) -> R {
        FailureOr<std::string> type = dtype(full.getValue().getType());
        if (failed(type))
          return failure();
        SmallVector<std::string> sizes;
        for (Attribute size : full.getShape())
          sizes.push_back(cast<StringAttr>(size).getValue().str());
        // tl.full takes a Python scalar: an integer constant's literal is a 0-d tensor
        // (tl.full([], c, tl.int64), for its type), which the interpreter rejects here.
        std::string value = operand(0);
        if (auto constant = full.getValue().getDefiningOp<arith::ConstantOp>())
          if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
            value = integer.getType().isInteger(1)
                        ? (integer.getValue().isZero() ? "False" : "True")
                        : std::to_string(integer.getValue().getSExtValue());
        return "tl.full([" + llvm::join(sizes, ", ") + "], " + value + ", " + *type + ")";
      })
      .Case<tl::LoadOp>([&](tl::LoadOp load) {
        std::string text = "tl.load(" + operand(0) + " + " + operand(1);
        if (load.getMask())
          text += ", mask=" + operand(2) + ", other=0";
        return R(text + ")");
      })
      .Case<tl::ReduceOp>([&](tl::ReduceOp reduce) -> R {
        std::string axis = std::to_string(reduce.getAxis());
        std::string input = operand(0);
        StringRef kind = reduce.getKind();
        std::string combiner = llvm::StringSwitch<std::string>(kind)
                                   .Case("sum", "_dyno_sum")
                                   .Case("maxsi", "_dyno_int_max")
                                   .Case("minsi", "_dyno_int_min")
                                   .Case("xor", "_dyno_xor")
                                   .Case("max", "_dyno_max")
                                   .Case("min", "_dyno_min")
                                   .Case("maxnum", "_dyno_maxnum")
                                   .Case("minnum", "_dyno_minnum")
                                   .Case("prod", "_dyno_prod")
                                   .Case("and", "_dyno_and")
                                   .Case("or", "_dyno_or")
                                   .Default("");
        if (combiner.empty())
          return failure();
        return "tl.reduce(" + input + ", " + axis + ", " + combiner + ", keep_dims=True)";
      })
      .Case<tl::AnyOp>([&](tl::AnyOp any) {
        // tl.reduce with the prelude's combiner, one axis at a time, not tl.max: the
        // interpreter cannot call triton.language's own jit functions unless
        // TRITON_INTERPRET was set when triton was imported (Dyno sets it only while
        // loading kernels).
        std::string text = operand(0) + ".to(tl.int32)";
        for (int64_t axis = any.getMask().getType().getRank() - 1; axis >= 0; --axis)
          text = "tl.reduce(" + text + ", " + std::to_string(axis) + ", _dyno_or)";
        return R("(" + text + " != 0)");
      })
      .Case<tl::ScanOp>([&](tl::ScanOp scan) {
        std::string combiner = llvm::StringSwitch<std::string>(scan.getKind())
                                   .Case("sum", "_dyno_sum")
                                   .Case("prod", "_dyno_prod")
                                   .Case("maxsi", "_dyno_scan_int_max")
                                   .Case("minsi", "_dyno_scan_int_min")
                                   .Default(combiners.lookup(scan));
        return R("tl.associative_scan(" + operand(0) + ", " + std::to_string(scan.getAxis()) +
                 ", " + combiner + ")");
      })
      .Case<tl::SortOp>([&](tl::SortOp sort) {
        if (sort.getAxis() != 1 || sort.getInput().getType().getRank() != 2)
          return R(failure()); // _dyno_sort sorts the rows of 2-d blocks
        return R("_dyno_sort(" + operand(0) + ")");
      })
      .Default([](Operation *) { return R(failure()); });
}

LogicalResult KernelPrinter::printOp(Operation *op, unsigned indent) {
  std::string pad(indent, ' ');
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    FailureOr<std::string> text = literal(constant);
    if (failed(text))
      return unsupported(op);
    names[constant.getResult()] = *text;
    return success();
  }
  if (auto splat = dyn_cast<tl::SplatOp>(op)) {
    names[splat.getResult()] = name(splat.getValue()); // Triton broadcasts scalars
    return success();
  }
  if (auto store = dyn_cast<tl::StoreOp>(op)) {
    os << pad << "tl.store(" << name(store.getPtr()) << " + " << name(store.getOffsets())
       << ", " << name(store.getValue());
    if (store.getMask())
      os << ", mask=" << name(store.getMask());
    os << ")\n";
    return success();
  }
  if (auto assertion = dyn_cast<tl::AssertOp>(op)) {
    // Masked lanes hold no index: the condition holds there.
    os << pad << "tl.device_assert(";
    if (assertion.getMask())
      os << "(" << name(assertion.getCondition()) << ") | ~(" << name(assertion.getMask())
         << ")";
    else
      os << name(assertion.getCondition());
    // (launch.py's CHECK_MESSAGE_PREFIX: an interpreted failure is told by it)
    os << ", " << pythonString(("dyno check failed: " + assertion.getMessage()).str())
       << ")\n";
    return success();
  }
  if (auto atomic = dyn_cast<tl::AtomicOp>(op)) {
    os << pad << "tl.atomic_" << atomic.getKind() << "(" << name(atomic.getPtr()) << " + "
       << name(atomic.getOffsets()) << ", " << name(atomic.getValue());
    if (atomic.getMask())
      os << ", mask=" << name(atomic.getMask());
    os << ")\n";
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    SmallVector<std::string> carried;
    for (auto [init, arg, result] :
         llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(), loop.getResults())) {
      std::string variable = fresh();
      os << pad << variable << " = " << name(init) << "\n";
      names[arg] = variable;
      names[result] = variable;
      carried.push_back(variable);
    }
    std::string induction = fresh();
    names[loop.getInductionVar()] = induction;
    os << pad << "for " << induction << " in range(" << name(loop.getLowerBound()) << ", "
       << name(loop.getUpperBound()) << ", " << name(loop.getStep()) << "):\n";
    if (failed(printBlock(*loop.getBody(), indent + 4)))
      return failure();
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    if (!carried.empty()) {
      SmallVector<std::string> values;
      for (Value value : yield.getOperands())
        values.push_back(name(value));
      os << pad << "    " << llvm::join(carried, ", ") << " = " << llvm::join(values, ", ")
         << "\n";
    } else {
      os << pad << "    pass\n";
    }
    return success();
  }
  if (auto loop = dyn_cast<scf::WhileOp>(op))
    return printWhile(loop, indent);
  if (isa<func::ReturnOp, scf::YieldOp, scf::ConditionOp, tl::YieldOp>(op))
    return success();
  if (auto pick = dyn_cast<tl::PickReduceOp>(op)) {
    std::string value = fresh(), position = fresh();
    names[pick.getPickedValue()] = value;
    names[pick.getPickedPosition()] = position;
    os << pad << value << ", " << position << " = tl.reduce((" << name(pick.getValue())
       << ", " << name(pick.getPosition()) << "), " << pick.getAxis() << ", _dyno_pick_"
       << pick.getKind() << (pick.getFirst() ? "_first" : "_last") << ", keep_dims=True)\n";
    return success();
  }
  if (op->getNumResults() != 1)
    return unsupported(op);
  FailureOr<std::string> text = expression(op);
  if (failed(text))
    return unsupported(op);
  // Re-printing a while loop's condition block assigns the variables of its first print.
  auto existing = names.find(op->getResult(0));
  std::string variable =
      rebinding && existing != names.end() ? existing->second : fresh();
  names[op->getResult(0)] = variable;
  os << pad << variable << " = " << *text << "\n";
  return success();
}

/// A block-level scf.while (a per-element loop, see dyno-convert-kernels-to-triton-level):
///   v = init; <condition block>; while any: <body>; v = yielded; <condition block again>
/// The condition block is printed twice into the same variables; Triton's `while` then
/// re-tests the scalar it computes.
LogicalResult KernelPrinter::printWhile(scf::WhileOp loop, unsigned indent) {
  std::string pad(indent, ' ');
  SmallVector<std::string> carried;
  for (auto [init, argument] : llvm::zip(loop.getInits(), loop.getBeforeArguments())) {
    std::string variable = fresh();
    os << pad << variable << " = " << name(init) << "\n";
    names[argument] = variable;
    carried.push_back(variable);
  }
  Block &before = loop.getBefore().front();
  if (failed(printBlock(before, indent)))
    return failure();
  scf::ConditionOp condition = loop.getConditionOp();
  os << pad << "while " << name(condition.getCondition()) << ":\n";
  Block &after = loop.getAfter().front();
  for (auto [argument, value] : llvm::zip(after.getArguments(), condition.getArgs()))
    names[argument] = name(value);
  if (failed(printBlock(after, indent + 4)))
    return failure();
  SmallVector<std::string> yielded;
  for (Value value : cast<scf::YieldOp>(after.getTerminator()).getOperands())
    yielded.push_back(name(value));
  os << pad << "    " << llvm::join(carried, ", ") << " = " << llvm::join(yielded, ", ")
     << "\n";
  bool outer = rebinding;
  rebinding = true;
  LogicalResult printed = printBlock(before, indent + 4);
  rebinding = outer;
  if (failed(printed))
    return failure();
  for (auto [result, value] : llvm::zip(loop.getResults(), condition.getArgs()))
    names[result] = name(value);
  return success();
}

LogicalResult KernelPrinter::printBlock(Block &block, unsigned indent) {
  for (Operation &op : block)
    if (failed(printOp(&op, indent)))
      return failure();
  return success();
}

LogicalResult KernelPrinter::print() {
  auto configs = kernel->getAttrOfType<ArrayAttr>(tl::kConfigsAttr);
  if (!configs || configs.empty())
    return kernel.emitOpError("lacks ") << tl::kConfigsAttr;
  // The launch table needs both index-space sizes.
  for (StringRef size : {tl::kXNumelAttr, tl::kRNumelAttr})
    if (!kernel->getAttrOfType<IntegerAttr>(size))
      return kernel.emitOpError("lacks the integer attribute ") << size;
  SmallVector<std::string> parameters;
  for (BlockArgument argument : kernel.getArguments()) {
    if (!isa<tl::PtrType, IntegerType, IndexType>(argument.getType()))
      return kernel.emitOpError("has an argument that is neither a pointer nor an integer");
    std::string variable = "arg" + std::to_string(argument.getArgNumber());
    names[argument] = variable;
    parameters.push_back(variable);
  }
  SmallVector<std::string> blockNames;
  for (NamedAttribute entry : cast<DictionaryAttr>(configs[0]))
    if (entry.getName() != "num_warps")
      blockNames.push_back(entry.getName().str());
  // XBLOCK before RBLOCK, whatever the dictionary's (sorted) order.
  llvm::sort(blockNames, [](const std::string &a, const std::string &b) {
    return a == "XBLOCK" || (b != "XBLOCK" && a < b);
  });
  for (const std::string &block : blockNames)
    parameters.push_back(block + ": tl.constexpr");
  // Scans with combiners of their own: a @triton.jit function each, before the kernel.
  WalkResult walked = kernel.walk([&](tl::ScanOp scan) {
    if (scan.getKind() != "combine")
      return WalkResult::advance();
    std::string function =
        "_dyno_combine_" + kernel.getName().str() + "_" + std::to_string(combiners.size());
    combiners[scan] = function;
    Block &block = scan.getCombiner().front();
    names[block.getArgument(0)] = "a";
    names[block.getArgument(1)] = "b";
    // Constants the combiner reads from the kernel (canonicalization hoists them there)
    // are literals in the function.
    for (Operation &op : block)
      for (Value operand : op.getOperands())
        if (auto constant = operand.getDefiningOp<arith::ConstantOp>())
          if (constant->getBlock() != &block) {
            FailureOr<std::string> text = literal(constant);
            if (failed(text))
              return WalkResult(unsupported(constant));
            names[operand] = *text;
          }
    os << "\n\n@triton.jit\ndef " << function << "(a, b):\n";
    if (failed(printBlock(block, 4)))
      return WalkResult::interrupt();
    os << "    return " << name(block.getTerminator()->getOperand(0)) << "\n";
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  // A kernel that asserts compiles in Triton's debug mode, where tl.device_assert is
  // kept (every launch turns Triton's integer overflow checks off: launch.py).
  bool asserts = kernel.walk([](tl::AssertOp) { return WalkResult::interrupt(); })
                     .wasInterrupted();
  os << "\n\n@triton.jit" << (asserts ? "(debug=True)" : "") << "\ndef " << kernel.getName()
     << "(" << llvm::join(parameters, ", ") << "):\n";
  uint64_t start = os.tell();
  // Triton passes an integer argument below 2**31 as int32: products of sizes (a
  // dynamic numel) must not wrap there either.
  if (indexBits == 64)
    for (BlockArgument argument : kernel.getArguments())
      if (isa<IndexType>(argument.getType()))
        os << "    " << names[argument] << " = tl.cast(" << names[argument]
           << ", tl.int64)\n";
  if (failed(printBlock(kernel.getBody().front(), 4)))
    return failure();
  // A kernel left with nothing to do (e.g. one whose only work a canonicalization
  // folded away) still needs a body.
  if (os.tell() == start)
    os << "    pass\n";
  return success();
}

std::string pythonDict(DictionaryAttr dict) {
  SmallVector<std::string> entries;
  for (NamedAttribute entry : dict)
    if (auto value = dyn_cast<IntegerAttr>(entry.getValue()))
      entries.push_back("\"" + entry.getName().str() + "\": " + std::to_string(value.getInt()));
  return "{" + llvm::join(entries, ", ") + "}";
}

// A kernel argument's entry in the launch table's "args": the torch dtype of the tensor
// a pointer points to, "int" for an integer (a size), or None where no torch dtype is
// known (a signless i8 is int8 or uint8; unsigned types).
std::string launchArgument(Type type) {
  auto pointer = dyn_cast<tl::PtrType>(type);
  if (!pointer)
    return "\"int\"";
  Type element = pointer.getElementType();
  StringRef name = TypeSwitch<Type, StringRef>(element)
                       .Case([](Float32Type) { return "float32"; })
                       .Case([](Float16Type) { return "float16"; })
                       .Case([](BFloat16Type) { return "bfloat16"; })
                       .Case([](Float64Type) { return "float64"; })
                       .Case([](IntegerType integer) -> StringRef {
                         if (integer.isUnsigned())
                           return "";
                         switch (integer.getWidth()) {
                         case 1:
                           return "bool";
                         case 16:
                           return "int16";
                         case 32:
                           return "int32";
                         case 64:
                           return "int64";
                         default:
                           return "";
                         }
                       })
                       .Default([](Type) { return ""; });
  return name.empty() ? "None" : "\"" + name.str() + "\"";
}

} // namespace

LogicalResult mlir::dyno::translateToTriton(Operation *op, raw_ostream &os) {
  SmallVector<func::FuncOp> kernels;
  op->walk([&](func::FuncOp kernel) {
    if (kernel->hasAttr(tl::kConfigsAttr))
      kernels.push_back(kernel);
  });
  // Print into a buffer first: a kernel that fails leaves no partial output.
  std::string text;
  llvm::raw_string_ostream buffer(text);
  buffer << "# Triton kernels generated by Dyno (dyno-translate --mlir-to-triton).\n"
         << "# Needs only torch and triton.\n"
         << kPrelude;
  for (func::FuncOp kernel : kernels)
    if (failed(KernelPrinter(kernel, buffer).print()))
      return failure();
  // The launch table: its fields and their meaning are declared once, in
  // python/dyno/targets/triton/runtime.py (LAUNCH_TABLE_FIELDS), which reads it;
  // test/python/launch_table.py checks this printer against that declaration.
  buffer << "\n\n# Launch table: index-space sizes and block-size configurations, the\n"
         << "# heuristic's choice first (fields: dyno/targets/triton/runtime.py).\n"
         << "LAUNCH_TABLE_VERSION = 3\nKERNELS = {\n";
  for (func::FuncOp kernel : kernels) {
    SmallVector<std::string> configs;
    for (Attribute config : kernel->getAttrOfType<ArrayAttr>(tl::kConfigsAttr))
      configs.push_back(pythonDict(cast<DictionaryAttr>(config)));
    SmallVector<std::string> arguments;
    for (Type type : kernel.getArgumentTypes())
      arguments.push_back(launchArgument(type));
    buffer << "    \"" << kernel.getName() << "\": {\"args\": [" << llvm::join(arguments, ", ")
           << "], \"xnumel\": " << kernel->getAttrOfType<IntegerAttr>(tl::kXNumelAttr).getInt()
           << ", \"rnumel\": " << kernel->getAttrOfType<IntegerAttr>(tl::kRNumelAttr).getInt();
    if (auto sizes = kernel->getAttrOfType<DenseI64ArrayAttr>(tl::kXNumelArgsAttr)) {
      SmallVector<std::string> indices;
      for (int64_t index : sizes.asArrayRef())
        indices.push_back(std::to_string(index));
      buffer << ", \"xnumel_args\": [" << llvm::join(indices, ", ") << "]";
    }
    if (auto key = kernel->getAttrOfType<StringAttr>(kKernelKeyAttrName))
      buffer << ", \"key\": \"" << key.getValue() << "\"";
    buffer
           << ",\n        \"configs\": [" << llvm::join(configs, ", ") << "]},\n";
  }
  buffer << "}\n";
  os << text;
  return success();
}

void mlir::dyno::registerToTritonTranslation() {
  TranslateFromMLIRRegistration registration(
      "mlir-to-triton", "Print Dyno's Triton-level kernels as @triton.jit Python source",
      [](Operation *op, raw_ostream &os) { return translateToTriton(op, os); },
      [](DialectRegistry &registry) {
        // The kernels' dialects, and those of the host schedule around them.
        registry.insert<tl::TLDialect, DynoDialect, arith::ArithDialect,
                        cf::ControlFlowDialect, func::FuncDialect, linalg::LinalgDialect,
                        math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
      });
}
