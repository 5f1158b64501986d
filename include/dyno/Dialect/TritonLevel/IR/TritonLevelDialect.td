//===- TritonLevelDialect.td - Dyno's Triton-level dialect -*- tablegen -*-===//
#ifndef DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELDIALECT_TD
#define DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELDIALECT_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"

def TL_Dialect : Dialect {
  let name = "tl";
  let summary = "Dyno's Triton-level kernels: block programs printed as @triton.jit source";
  let description = [{
    The ops mirror `triton.language` (imported as `tl` in Triton programs): a kernel is
    a `func.func` whose arguments are `!tl.ptr<T>` base pointers and whose body computes
    on *blocks*, ranked tensors of dynamic shape holding one program instance's
    elements. Block shapes follow Triton's rules: every block of a kernel has the same
    rank, each dimension is either the block size named by the kernel's configuration
    (`XBLOCK`, `RBLOCK`) or 1, and operands broadcast as in Triton. The static type
    carries only rank and element type; `index` elements are the kernel's index type
    (int32, or int64 when a tensor has 2^31 elements or more).

    arith and math ops on blocks are elementwise; `tl.splat` turns a scalar into a
    block operand. The printer (`dyno-translate --mlir-to-triton`) turns every kernel
    into a `@triton.jit` function and a launch table.

    A kernel `func.func` carries:
    * `tl.xnumel`, `tl.rnumel`: the sizes of its parallel and reduction index spaces;
    * `tl.configs`: block-size configurations, the heuristic's choice first, the
      others autotuning candidates (`{XBLOCK = 8, RBLOCK = 1024, num_warps = 4}`);
    * `tl.index_bits`: 32 or 64.
  }];
  let cppNamespace = "::mlir::dyno::tl";
  let useDefaultTypePrinterParser = 1;
}

class TL_Op<string mnemonic, list<Trait> traits = []>
    : Op<TL_Dialect, mnemonic, traits>;

class TL_Type<string name, string typeMnemonic> : TypeDef<TL_Dialect, name> {
  let mnemonic = typeMnemonic;
}

#endif // DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELDIALECT_TD
