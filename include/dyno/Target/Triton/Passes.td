//===- Passes.td - The Triton target's passes ---------------*- tablegen -*-===//
//
// The passes only dyno-triton-lowering-pipeline runs (after kernel formation): kernels
// to Triton-level block programs (`tl`), and their translation to Python. Kernel
// formation's passes, which both targets share, are in
// dyno/Dialect/Dyno/Transforms/Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_TARGET_TRITON_PASSES_TD
#define DYNO_TARGET_TRITON_PASSES_TD

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
    A per-element loop (an `scf.while` in an elementwise body) becomes a block-level
    `scf.while` that runs while any lane's condition holds (`tl.any`); lanes whose
    condition fails keep their values.

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

def DynoHoistKernelConstants : Pass<"dyno-hoist-kernel-constants", "ModuleOp"> {
  let summary = "Move constant tensors of distinct elements from kernels to the host";
  let description = [{
    A Triton program reads tensors through pointers and cannot hold a constant tensor
    whose elements differ (torch-mlir writes the gather indices of `as_strided` as one).
    Each such `arith.constant` in a kernel becomes a new last argument of the kernel;
    every launch of the kernel passes the constant, now an inline `dense<...>` attribute
    in the host function (a `dense_resource` blob is copied out), which the host wrapper
    materializes once. Splat constants stay (they lower as scalars).

    ```mlir
    // Before
    %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<5xf32>) -> tensor<3xf32>
    func.func @kernel_0(%arg0: tensor<5xf32>) -> tensor<3xf32> {
      %idx = arith.constant dense<[4, 0, 2]> : tensor<3xi64>
      ...
    // After
    %idx = arith.constant dense<[4, 0, 2]> : tensor<3xi64>
    %0 = dyno.launch @kernels::@kernel_0(%x, %idx)
        : (tensor<5xf32>, tensor<3xi64>) -> tensor<3xf32>
    func.func @kernel_0(%arg0: tensor<5xf32>, %arg1: tensor<3xi64>) -> tensor<3xf32> {
    ```

    Input and output: a graph module after `dyno-form-kernels`.
  }];
  let dependentDialects = ["::mlir::dyno::DynoDialect", "arith::ArithDialect",
                           "func::FuncDialect"];
}

def DynoExpandLoopsThroughReshapes : Pass<"dyno-expand-loops-through-reshapes", "ModuleOp"> {
  let summary = "Keep kernels whose ops meet through reshapes in one Triton index space";
  let description = [{
    A kernel whose generics read a tensor it computes through a `tensor.collapse_shape`
    that merges dimensions (a residual add over batch x tokens x width, then a layer norm
    over (batch * tokens) x width) needs two index spaces, which
    `dyno-split-kernels-for-triton` would make two kernels. For each static kernel that
    does not fit one space (and holds no scan, scatter or sort), the generics reading
    such a reshape are expanded to the computed tensor's shape (upstream's reshape fusion
    by expansion, limited to reshapes of computed tensors); a result the kernel returned
    through reshapes is returned unreshaped and the host reshapes it (a view) after each
    launch. A generic that reads a computed tensor through a map that is not a
    projected permutation (a rotation's mod map), through a collapse or an expansion of
    a copy in another order (Swin's window reversal, shifted back by the residual add),
    reads the copy's source instead, each index split and composed (floordiv, mod), and
    the copy, read only there, is computed in it. The rewrite is kept only where the
    kernel then fits one space.

    ```mlir
    // Before: kernel_0 returns tensor<8x4xf32>, a layer norm over rows of
    // collapse_shape(%sum : tensor<2x4x4xf32>)
    %0 = dyno.launch @kernels::@kernel_0(%a, %b) : (...) -> tensor<8x4xf32>
    // After: the norm's loops are (2, 4, 4); the kernel returns tensor<2x4x4xf32>
    %0 = dyno.launch @kernels::@kernel_0(%a, %b) : (...) -> tensor<2x4x4xf32>
    %1 = tensor.collapse_shape %0 [[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
    ```

    Input and output: a graph module after `dyno-form-kernels`, its kernels' named ops
    generalized.
  }];
  let dependentDialects = ["::mlir::dyno::DynoDialect", "func::FuncDialect",
                           "linalg::LinalgDialect", "tensor::TensorDialect"];
}

def DynoSplitKernelsForTriton : Pass<"dyno-split-kernels-for-triton", "ModuleOp"> {
  let summary = "Split kernels whose ops need several Triton index spaces";
  let description = [{
    A Triton program walks one index space: blocks of rows, and at most one reduced
    extent. Kernel formation groups ops by data flow, so a kernel can hold, say, a column
    reduction and a row reduction of the same tensor. Each kernel that
    `dyno-convert-kernels-to-triton-level` could not lower whole is split into pieces:
    runs of its computing ops, in program order, each as long as it still fits one index
    space (no gather from a tensor the piece computes; scans, scatters and sorts alone);
    intermediates go through memory and the host schedule launches the pieces in order. Kernels that fit one space are left
    alone. Splat tensor constants in kernels (a folded `torch.full`) become fills first,
    which the lowering reads as scalars. A kernel that returns a pad or concatenation,
    an argument or a view (reshape, slice) is split too: those are the host's.

    ```mlir
    // Before
    %r:2 = dyno.launch @kernels::@kernel_0(%x) : (...) -> (tensor<7xf32>, tensor<3xf32>)
    // After (kernel_0 held a reduction over dim 0 and one over dim 1)
    %a = dyno.launch @kernels::@kernel_0_0(%x) : (tensor<3x7xf32>) -> tensor<7xf32>
    %b = dyno.launch @kernels::@kernel_0_1(%x) : (tensor<3x7xf32>) -> tensor<3xf32>
    ```

    Input and output: a graph module after `dyno-form-kernels` (host functions and
    `module @kernels` of `linalg.generic` kernels).
  }];
  let dependentDialects = ["::mlir::dyno::DynoDialect", "func::FuncDialect",
                           "linalg::LinalgDialect", "tensor::TensorDialect"];
}

def DynoConvertScansScattersSortsToTritonLevel
    : Pass<"dyno-convert-scans-scatters-sorts-to-triton-level", "ModuleOp"> {
  let summary = "Lower kernels of one scan, sort or scatter to Triton-level block programs";
  let description = [{
    After `dyno-split-kernels-for-triton` each `dyno.scan`, `dyno.sort` and
    `dyno.scatter` is alone in its kernel, reading contiguous arguments (or reshapes and
    fills of them). Each such kernel becomes a `tl` program; other kernels are left to
    `dyno-convert-kernels-to-triton-level`.

    * Scan: a block of `XBLOCK` lines by `RBLOCK` (the line, whole) per program,
      `tl.scan` (tl.associative_scan) of sums, products, integer maxima and minima, or
      of the scan's own combiner (cummax's, logcumsumexp's: a `combine` region printed as
      a function of its own). Float sums and products accumulate in f64, as eager's CPU
      kernels do. A line longer than 16384 is scanned chunk by chunk in a loop (one line
      per program, one `RBLOCK` chunk per step): each chunk's scan is combined with the
      carry (the line's last value so far, f64 for float sums and products) and the
      chunk's last value becomes the next carry.
    * Sort: each element's key packs an order-preserving integer image of its value
      (NaN largest, -0.0 as +0.0) above its position; `tl.sort` of the keys is then a
      stable sort, and every output is gathered from the sorted positions. Values of at
      most 32 bits; descending comparators invert the value bits.
    * Scatter: one lane per update element. Updates that overwrite are stored; sums
      (and max/min of integers) use `tl.atomic`, so repeated indices all land, in an
      unspecified order as on eager CUDA. Any other combination needs unique indices
      (read, combine, write). The result starts as a copy of the original: the launch's
      `initial_values` names it. A scatter's kernel has one block configuration: the
      autotuner runs a kernel several times on the call's tensors, and a scatter run
      twice combines twice.

    Scans take symbolic sizes (a size argument per dynamic size of each tensor, after the
    kernel's own arguments, as dyno.launch documents; lines of symbolic length take the
    chunk loop) where their input is a kernel argument. Sorted lines longer than one
    program holds (16384), exclusive scans, other combiners, 64-bit sort keys, and sorts
    and scatters of symbolic sizes get an error naming the limit; per-op fallback then
    runs the op eagerly.

    ```mlir
    // Before: cumsum along dimension 1 of a 4x10 tensor
    func.func @kernel_0_0(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
      %r:2 = dyno.scan dimension(1) inclusive(true) ins(%x ...) outs(%o, %acc ...) {...}
      return %r#0 : tensor<4x10xf32>
    }
    // After
    func.func @kernel_0_0(%x: !tl.ptr<f32>, %out: !tl.ptr<f32>) attributes {
        tl.configs = [{XBLOCK = 4, RBLOCK = 16, num_warps = 1} ], tl.xnumel = 4, ...} {
      %v = tl.load %x[%offsets] mask %m : ...
      %w = arith.extf %v : tensor<?x?xf32> to tensor<?x?xf64>
      %s = tl.scan "sum" %w along 1 : tensor<?x?xf64>
      ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::dyno::tl::TLDialect", "arith::ArithDialect",
                           "scf::SCFDialect"];
}

def DynoSplitFullReductions : Pass<"dyno-split-full-reductions", "func::FuncOp"> {
  let summary = "Reduce a large tensor to one value in two stages (Triton target)";
  let description = [{
    A Triton grid runs one program per row block: a reduction of a whole tensor to one
    value has one row, so one program walks every element (a bounds check of a
    scatter's 32M indices took 29 ms on an H100, where the scatter took 0.4 ms). A
    `linalg.generic` whose loops all reduce into a 0-d tensor, of at least 65536
    elements, is split when its first loop's extent N has a power-of-2 factor P >= 8
    (at most 1024): the first stage reduces P slices of N/P (its inputs are expanded
    along that loop) into P partials, in parallel; the second reduces the partials.

    Only where this gives the same value: an idempotent combiner (and, or, max, min,
    whose initial value may enter once per partial) or an integer or float sum from
    zero (floats are reassociated, as a Triton reduction already is within a block).
    Reductions over dynamic extents, with other initial values or combiners, stay whole.

    ```mlir
    // Before: all(x >= 0) over 1M elements
    %r = linalg.generic {iterator_types = ["reduction", "reduction"]}
        ins(%x : tensor<1024x1024xi64>) outs(%true : tensor<i1>) {...}
    // After
    %e = tensor.expand_shape %x [[0, 1], [2]] : ... into tensor<1024x1x1024xi64>
    %partials = linalg.generic {iterator_types = ["parallel", "reduction", "reduction"]}
        ins(%e) outs(%trues : tensor<1024xi1>) {...}
    %r = linalg.generic {iterator_types = ["reduction"]}
        ins(%partials) outs(%true : tensor<i1>) { arith.andi }
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
}

def DynoWriteTriton : Pass<"dyno-write-triton", "ModuleOp"> {
  let summary = "Write the Triton-level kernels as @triton.jit Python source to a file";
  let description = [{
    Prints what `dyno-translate --mlir-to-triton` prints (every Triton-level kernel as a
    `@triton.jit` function, then the `KERNELS` launch table) to `file`, and changes
    nothing. It ends the Triton target's compile of a graph, so that kernel formation,
    Triton lowering and translation run in one `dyno-opt` process:

    ```
    dyno-opt --pass-pipeline="builtin.module(dyno-triton-pipeline,
        dyno-write-triton{file=05-kernels.py})" 02-linalg.mlir -o 04-triton.mlir
    ```

    An op with no Triton spelling is an error (the translation's diagnostic) and leaves
    no file; so does a file that cannot be opened.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "The Python file to write (overwritten)">
  ];
}

#endif // DYNO_TARGET_TRITON_PASSES_TD
