//===- DynoDialect.td - Dyno dialect definition ------------*- tablegen -*-===//
#ifndef DYNO_DIALECT_DYNO_IR_DYNODIALECT_TD
#define DYNO_DIALECT_DYNO_IR_DYNODIALECT_TD

include "mlir/IR/OpBase.td"

def Dyno_Dialect : Dialect {
  let name = "dyno";
  let summary = "Dyno's host-level schedule: kernel launches and library calls";
  let description = [{
    After kernel formation a compiled graph is a host function that runs, in order,
    `dyno.launch` (a kernel Dyno generated, held in the nested `module @kernels`),
    `dyno.contraction` (a matrix product or convolution, which a vendor library computes),
    `dyno.library_call` (any other ATen routine Dyno calls by name: LAPACK, FFTs,
    collectives, attention's fused kernels), plus view-like tensor operations (reshape,
    slice, transpose) that the runtime performs as zero-copy views. The kernels module is lowered per target; the host function is
    turned into the runtime's wrapper.
  }];
  let cppNamespace = "::mlir::dyno";
}

class Dyno_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dyno_Dialect, mnemonic, traits>;

#endif // DYNO_DIALECT_DYNO_IR_DYNODIALECT_TD
