//===- Passes.td - Dyno conversion passes ------------------*- tablegen -*-===//
#ifndef DYNO_CONVERSION_PASSES_TD
#define DYNO_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def DynoConvertKernelsToTritonLevel
    : Pass<"dyno-convert-kernels-to-triton-level", "ModuleOp"> {
  let summary = "Lower each kernel (linalg on tensors) to a Triton-level block program";
  let description = [{
    Rewrites every `func.func` kernel of the module into a `tl` block program: one
    program instance computes a block of `XBLOCK` rows of the kernel's parallel index
    space (its *X slots*, flattened) and, in a kernel with reductions, the reduced
    extent (its *R slots*) in blocks of `RBLOCK` lanes.

    Loops of different ops that meet through an intermediate tensor share a slot, so a
    fused chain is computed on blocks without touching memory; kernel arguments (and
    static reshapes and slices of them) are read with masked loads at offsets computed
    from the ops' indexing maps, so broadcast, transposed and strided reads need no
    copy; `tensor.extract` in a body becomes a gather. A reduction is computed whole in
    registers when its extent is at most `persistent-rnumel` (`RBLOCK` covers the row,
    every intermediate is computed once); beyond that each reduction walks the row in
    an `scf.for` with a block accumulator, and row-wise outputs are computed in a final
    loop (recomputing their producers from memory rather than keeping rows).

    ```mlir
    // Before: softmax's max reduction of a kernel
    func.func @kernel_0(%x: tensor<256x1024xf32>) -> tensor<256xf32> {
      %m = linalg.generic {..., iterator_types = ["parallel", "reduction"]}
          ins(%x) outs(%init) { arith.maximumf }
      return %m
    }
    // After
    func.func @kernel_0(%x: !tl.ptr<f32>, %out: !tl.ptr<f32>) attributes {
        tl.configs = [{XBLOCK = 2, RBLOCK = 1024, num_warps = 8}, ...],
        tl.xnumel = 256, tl.rnumel = 1024, tl.index_bits = 32} {
      %pid = tl.program_id 0
      %xs = tl.range "XBLOCK" along 0 : tensor<?x?xindex>
      %rs = tl.range "RBLOCK" along 1 : tensor<?x?xindex>
      %v = tl.load %x[%offsets] mask %mask : ... -> tensor<?x?xf32>
      %masked = arith.select %mask, %v, %minus_inf
      %m = tl.reduce max %masked along 1 : tensor<?x?xf32>
      tl.store %m, %out[%row] mask %xmask : ...
      return
    }
    ```

    Input: `func.func` kernels of `linalg.generic` ops on static tensors (after
    `dyno-form-kernels` and `linalg-generalize-named-ops`). Output: kernels of `tl`,
    `arith`, `math` and `scf.for` ops with one `!tl.ptr` per argument and result, ready
    for `dyno-translate --mlir-to-triton`. A kernel the lowering cannot express gets an
    error naming the op.
  }];
  let options = [
    Option<"persistentRNumel", "persistent-rnumel", "int64_t", "4096",
           "Largest reduced extent held whole in registers (else a loop over RBLOCK lanes)">
  ];
  let dependentDialects = ["::mlir::dyno::tl::TLDialect", "arith::ArithDialect",
                           "scf::SCFDialect"];
}

#endif // DYNO_CONVERSION_PASSES_TD
