//===- Passes.td - The CPU target's passes ------------------*- tablegen -*-===//
//
// The passes only dyno-cpu-lowering-pipeline runs (after kernel formation, down to the
// LLVM dialect): library epilogues and layouts around library calls, tiling and loop
// shapes, the kernels' memref conventions, and LLVM tuning. Kernel formation's passes,
// which both targets share, are in dyno/Dialect/Dyno/Transforms/Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_TARGET_CPU_PASSES_TD
#define DYNO_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def DynoFuseMatmulEpilogues : Pass<"dyno-fuse-matmul-epilogues", "ModuleOp"> {
  let summary = "Fuse a GELU that follows a bf16 library matmul into the library call";
  let description = [{
    After `dyno-form-kernels`, on the host schedule: a `dyno.contraction "matmul"` of bf16
    operands (with no accumulator, or a bias of rank 1) whose only user is a launch
    of a kernel that does nothing but apply GELU (erf form, as PyTorch decomposes
    `F.gelu`) to it, elementwise, in its own type, becomes one `dyno.contraction "matmul"`
    with `epilogue = "gelu"`; the launch goes, and the kernel with it when nothing else
    launches it. The CPU wrapper calls oneDNN's linear with a GELU post-op, which applies
    it to the f32 accumulator in the GEMM's loop over its output: one pass over the
    activations instead of the GEMM's write, the kernel's read and write, and one
    rounding to bf16 instead of two (results are within bf16 rounding of eager's, and
    closer to the exact values).

    Measured on 2 threads (benchmarks/experiments/cpu_library_calls.py): bf16 linear + GELU, 64x512 ->
    1024, 147 us (addmm, then the GELU) against 95 us fused; 512x768 -> 3072, 3.36 ms
    against 1.48 ms. Only GELU: oneDNN's ReLU post-op maps NaN to 0 where eager keeps it.
    f16 is not fused: a product beyond f16's range is +-inf in eager before its GELU
    (GELU(-inf) is NaN there), where the accumulator's GELU is finite. f32 matmuls stay
    MKL's (oneDNN's fused f32 linear + GELU measured 0.91x-1.15x against MKL's GEMM and
    Dyno's GELU kernel).

    Input and output: the host function with its `module @kernels`, on tensors.

    ```mlir
    // Before
    %y = dyno.contraction "matmul"(%x, %wt, %b) : (...) -> tensor<64x1024xbf16>
    %g = dyno.launch @kernels::@gelu(%y) : (tensor<64x1024xbf16>) -> tensor<64x1024xbf16>
    // After
    %g = dyno.contraction "matmul"(%x, %wt, %b) {epilogue = "gelu"} : (...) -> tensor<64x1024xbf16>
    ```
  }];
}

def DynoPreferVectorWidth : Pass<"dyno-prefer-vector-width", "ModuleOp"> {
  let summary = "Let LLVM vectorize kernel loops with vectors of a given width";
  let description = [{
    Sets LLVM's `prefer-vector-width` function attribute to `width` bits on every defined
    `llvm.func` (the CPU kernels, after conversion to the LLVM dialect). LLVM's x86 tuning
    keeps loops at 256-bit vectors on Intel's AVX-512 CPUs, where PyTorch's own kernels
    use 512-bit ones (its CPU capability "AVX512"): compute-bound loops then take twice
    eager's time. The CPU target passes `vector-width=512` to the lowering pipeline when
    PyTorch runs its AVX-512 kernels. Measured on 2 threads (Sapphire Rapids), one kernel
    over 512x1024 floats: exp 192 -> 88 us, SiLU(x) * x 236 -> 177 us, softmax
    235 -> 174 us, GELU 152 -> 129 us. `width = 0` leaves the CPU's default.

    Input and output: the LLVM dialect.
  }];
  let options = [
    Option<"width", "width", "unsigned", /*default=*/"0",
           "Vector width in bits (a power of two, at least 128); 0: the CPU's default">
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def DynoStridedCopiesAsLoops : Pass<"dyno-strided-copies-as-loops", "func::FuncOp"> {
  let summary = "Copy non-contiguous memref views in loops, not through memrefCopy";
  let description = [{
    Bufferization writes a `tensor.pad` or a concatenation as `memref.copy` into a
    strided view of a larger buffer (and a slice of one as a copy out of such a view).
    The LLVM lowering turns a copy between contiguous buffers into `llvm.memcpy`, but any
    other into a call to the runner library's `memrefCopy`, which walks the indices
    generically and calls `memcpy` once per element: in the bf16 ResNet on 2 threads
    (its max pooling's padding) those calls and memcpy took 5% of the run, and Llama's
    rotary-embedding concatenations make ten of them per call.

    This pass rewrites every `memref.copy` whose source or target is not contiguous (an
    identity layout, or a static view that happens to be row-major contiguous) into
    `linalg.copy`, which
    `convert-linalg-to-loops` turns into loops that LLVM vectorizes. Contiguous copies
    are left to `llvm.memcpy`.

    ```mlir
    // Before
    memref.copy %block, %view : memref<64x16xbf16> to memref<64x16xbf16, strided<[18, 1], offset: 19>>
    // After
    linalg.copy ins(%block : memref<64x16xbf16>) outs(%view : memref<64x16xbf16, strided<[18, 1], offset: 19>>)
    ```

    Input and output: bufferized IR (the CPU lowering runs it after bufferization,
    before the conversion of linalg to loops).
  }];
  let dependentDialects = ["linalg::LinalgDialect", "memref::MemRefDialect"];
}

def DynoWidenBoolMemrefs : Pass<"dyno-widen-bool-memrefs", "ModuleOp"> {
  let summary = "Store booleans as bytes: memref<...xi1> becomes memref<...xi8>";
  let description = [{
    PyTorch stores `torch.bool` as one byte per element, and LLVM 22's memref lowering
    cannot store `i1`. This pass gives every `i1` buffer an `i8` element type: loads are
    followed by `arith.trunci`, stores preceded by `arith.extui`, constant globals are
    re-encoded, and function signatures, allocations and views change type with them.

    ```mlir
    // Before
    memref.store %flag, %mask[%i] : memref<8xi1>
    // After
    %byte = arith.extui %flag : i1 to i8
    memref.store %byte, %mask[%i] : memref<8xi8>
    ```

    Input: bufferized code with loops (after convert-linalg-to-loops). Output: no memref
    of `i1` remains.
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def DynoBf16AsI16 : Pass<"dyno-bf16-as-i16", "ModuleOp"> {
  let summary = "Move, select and compare bf16 values as their bits in the LLVM dialect";
  let description = [{
    After conversion to the LLVM dialect (CPU). Every `llvm.load` and `llvm.store` of bf16
    (scalar or vector) becomes one of i16 with an `llvm.bitcast`, every `llvm.select` of
    bf16 a select of i16, and every `llvm.fcmp` of bf16 operands a comparison of the f32
    values their bits widen to exactly (the 16-bit shift `dyno-expand-bf16-conversions`
    uses; subnormals and NaNs included). The canonicalizer then folds the bitcast pairs:
    a kernel that only moves bf16 values (a roll, a transpose, a gather, a sort's swaps)
    has no bfloat in its LLVM IR, and no other kernel loads or stores bfloat.

    Why: LLVM's loop vectorizer treats masked loads and stores of bfloat as legal on x86
    CPUs with AVX512-BF16 (Cooper Lake, Sapphire Rapids, Granite Rapids, Zen 4 and 5)
    and makes them for strided accesses (`kthvalue`'s gather, `roll` along the last
    dimension, `transpose(...).contiguous()` of 5x5x5 bf16 tensors); X86's code
    generator then aborts the process with LegalizeDAG's "Unexpected illegal type!" on
    such a `<36 x bfloat>` whose mask leaves one active lane in a part (issue 52). And
    bfloat values that LLVM carries through f32 come back through vcvtneps2bf16, which
    flushes subnormals (`topk` and `sort` along an outer dimension returned 0 for a
    bf16 3e-39).

    ```mlir
    // Before
    %v = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> bf16
    %c = llvm.fcmp "olt" %v, %w : bf16
    llvm.store %v, %q : bf16, !llvm.ptr
    // After (and canonicalized)
    %bits = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> i16
    %wide = llvm.zext %bits : i16 to i32
    %f = llvm.bitcast (llvm.shl %wide, 16) : i32 to f32
    %c = llvm.fcmp "olt" %f, %g : f32
    llvm.store %bits, %q : i16, !llvm.ptr
    ```

    Input and output: the LLVM dialect.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def DynoPassSizesAsArguments : Pass<"dyno-pass-sizes-as-arguments", "ModuleOp"> {
  let summary = "Dynamically shaped kernel buffers become a base pointer plus size arguments";
  let description = [{
    Kernels use the bare-pointer calling convention (one pointer per buffer), which
    cannot carry the sizes of a dynamically shaped buffer. For every public function of
    the module, each argument of a dynamically shaped, identity-layout memref type
    becomes a rank-0 memref (its base pointer) and the function gains one trailing
    `index` argument per dynamic dimension, for every such argument in order. At entry a
    `memref.reinterpret_cast` rebuilds the contiguous buffer from the pointer and the
    sizes, with row-major strides. Statically shaped functions are left alone.

    ```mlir
    // Before
    func.func @k(%x: memref<?x16xf32>, %out: memref<?x16xf32>) { ... }
    // After
    func.func @k(%xp: memref<f32>, %outp: memref<f32>, %n: index, %m: index) {
      %x = memref.reinterpret_cast %xp to offset: [0], sizes: [%n, 16], strides: [16, 1]
          : memref<f32> to memref<?x16xf32>
      %out = memref.reinterpret_cast %outp to offset: [0], sizes: [%m, 16], strides: [16, 1]
          : memref<f32> to memref<?x16xf32>
      ...
    }
    ```

    Input: bufferized kernels (after `buffer-results-to-out-params`). Output: kernels
    whose memref arguments all have static shapes. `dyno.launch` documents the order in
    which the runtime passes the sizes.
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def DynoCollapseShortInnerLoops
    : Pass<"dyno-collapse-short-inner-loops", "func::FuncOp"> {
  let summary = "Merge a buffer op's short trailing loops where its operands are contiguous";
  let description = [{
    An elementwise op on a 16x64x16x16 image tiled by rows loops over channels, rows and
    16 columns. LLVM's loop vectorizer leaves a 16-iteration loop to full unrolling, and
    the SLP vectorizer then vectorized the loads and arithmetic of `relu(2x + 1)` but
    stored its 16 results one by one: the kernel took 243 us per call on the CPU where
    the same op on a 1024x256 tensor took 35 us.

    For each `linalg.generic` on buffers without `linalg.index`, whose innermost loop
    has a static extent below `min-inner-extent`, this pass merges the fewest trailing
    loops (all of the innermost loop's iterator type, static extents) whose combined
    extent reaches it, provided every operand indexes those loops together and in
    order (or not at all, as a per-channel parameter), and its layout keeps the
    dimensions they index contiguous (`memref.collapse_shape` is then a view).
    Operands that cannot be viewed so leave the op alone. Sibling ops of one shape
    merge the same loops, so dyno-fuse-sibling-loops still lines them up.

    ```mlir
    // Before: loops 64 x 16 x 16
    linalg.generic {maps = [(d0, d1, d2) -> (d0, d1, d2), (d0, d1, d2) -> (d0)], ...}
        ins(%x, %scale : memref<64x16x16xf32, strided<...>>, memref<64xf32>)
    // After: loops 64 x 256
    %xc = memref.collapse_shape %x [[0], [1, 2]]
    linalg.generic {maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0)], ...}
        ins(%xc, %scale : memref<64x256xf32, strided<...>>, memref<64xf32>)
    ```
  }];
  let options = [
    Option<"minInnerExtent", "min-inner-extent", "int64_t", /*default=*/"64",
           "Innermost extent below which trailing loops are merged">,
  ];
  let dependentDialects = ["memref::MemRefDialect"];
}

def DynoUnswitchInnerLoops : Pass<"dyno-unswitch-inner-loops", "func::FuncOp"> {
  let summary = "An innermost loop's branch on a loop-invariant condition taken outside it";
  let description = [{
    After the loops are formed (linalg to loops). A padded channels-last image (the max
    pool of ResNet's stem pads its input, dyno-pads-as-generics) is written by a loop
    over channels whose body reads the source only where the row and column are inside
    it: `scf.if` on a condition of the outer loops. LLVM neither unswitched nor
    vectorized that loop: bf16 elements copied one by one, 42 us of the 121 us stem
    kernel per call (AMD Zen 4, 2 threads).

    For each innermost `scf.for` without loop-carried values, the loop-invariant code of
    its body is hoisted, and the first `scf.if` of its body whose condition is defined
    outside the loop (and that holds no loop) is taken outside: `scf.if %c { loop with
    the then-branch inlined } else { loop with the else-branch }`. Each copy is then a
    straight-line loop (a contiguous copy, a fill) that LLVM can vectorize: the fill
    was at once; the copy, between two of the kernel's allocations, once
    dyno-mark-distinct-kernel-buffers gave allocations alias scopes (together: the stem
    kernel 121 -> 68 us). Values are unchanged.

    ```mlir
    // Before
    scf.for %c = %c0 to %c64 step %c1 {
      %v = scf.if %inside -> (bf16) { %x = memref.load ... scf.yield %x } else { scf.yield %zero }
      memref.store %v, %out[%n, %h, %w, %c]
    }
    // After
    scf.if %inside {
      scf.for %c = %c0 to %c64 step %c1 { %x = memref.load ... ; memref.store %x, ... }
    } else {
      scf.for %c = %c0 to %c64 step %c1 { memref.store %zero, ... }
    }
    ```
  }];
  let dependentDialects = ["scf::SCFDialect"];
}

def DynoVectorizeShortInnerLoops
    : Pass<"dyno-vectorize-short-inner-loops", "func::FuncOp"> {
  let summary = "Short contiguous innermost loops kept rolled for LLVM's loop vectorizer";
  let description = [{
    After the loops are formed (linalg to loops). A channels-last image's per-channel
    op (batch norm and ReLU over 16 channels: `x[n, h, w, c] * scale[c]`) loops
    innermost over 16 contiguous channels, a loop that dyno-collapse-short-inner-loops
    cannot merge (the scale indexes the channel loop alone). LLVM fully unrolls such a
    loop before its loop vectorizer runs, leaves the unrolled body scalar and vectorizes
    the loop around it instead, with gathers of stride 16: SmallCNN's batch norm, ReLU
    and max pool in channels-last float32 took 65 us per call (the kernel called
    repeatedly) against 12 us for the same kernel NCHW (AMD Zen 4, 2 threads).

    Each innermost `scf.for` with constant bounds, step 1 and an extent in
    [`min-extent`, `max-extent`), no loop-carried values and no nested region, whose
    loads and stores use its induction variable only as their last index (contiguous
    accesses or loop-invariant ones) and that stores at least once, is marked
    `llvm.loop.unroll.disable`: the loop vectorizer then vectorizes it (16 f32 lanes
    in one 512-bit vector) where full unrolling would have come first; LLVM still
    decides whether to vectorize. Elementwise loops keep their values bit for bit; a
    sum accumulated at one address (a 4x4 average pool's 16 values, merged into one
    loop by dyno-collapse-short-inner-loops) may be vectorized as a reduction, its
    order reassociated as dyno-reassociate-floats allows (ResNet's float32 logits
    moved by one ulp, 1.8e-7 -> 1.2e-7 from float64). The kernel above went from
    65 us to 19 us; paired over the zoo (`benchmarks/ab_dyno_opt.py`, Zen 4, 2
    threads) the models gained 0-4% in float32 and 0-7% in bf16.

    ```mlir
    // After
    scf.for %c = %c0 to %c16 step %c1 {
      %x = memref.load %in[%n, %h, %w, %c] : memref<...>
      %s = memref.load %scale[%c] : memref<16xf32>
      ...
      memref.store %y, %out[%n, %h, %w, %c] : memref<...>
    } {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    ```
  }];
  let options = [
    Option<"minExtent", "min-extent", "int64_t", /*default=*/"8",
           "Shortest extent marked (shorter loops are left to full unrolling)">,
    Option<"maxExtent", "max-extent", "int64_t", /*default=*/"64",
           "Extent from which loops are left alone (LLVM does not unroll them fully)">,
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def DynoBlockTransposes : Pass<"dyno-block-transposes", "func::FuncOp"> {
  let summary = "Tile transposing loops on buffers into blocks of one cache line a side";
  let description = [{
    A kernel that writes `x.t().contiguous()` for a 1024x1024 float tensor walks its
    output rows and reads the input down its columns: each element read is a cache line
    (and, 4 KiB apart, a page) of its own, and a block of rows used 4 of each line's 16
    floats before it was evicted. It took 5.8 ms per call where eager takes 0.75.

    For each all-parallel `linalg.generic` on buffers without `linalg.index`, whose
    innermost loop indexes some operand (with a unit-stride last dimension) in another
    dimension than its last one, while another loop walks that operand's last dimension
    (all such operands along the same loop), this pass tiles those two loops by one
    cache line of the narrowest such operand (16 floats, 32 bf16 values) with `scf.for`
    loops (the innermost when its static extent is above that, the other only where
    it is too: a row block is often one block already). Inside a block every line read or
    written is used whole. dyno-tile-kernels gives such a root row blocks of at least a
    cache line along the transposed loop, so that the blocks exist.

    ```mlir
    // Before
    linalg.generic {maps = [(d0, d1) -> (d1, d0), (d0, d1) -> (d0, d1)], parallel x2}
        ins(%x : memref<64x1024xf32>) outs(%y : memref<1024x64xf32>)
    // After
    scf.for %i = 0 to 1024 step 16 { scf.for %j = 0 to 64 step 16 {
      linalg.generic ... ins(subview %x[%j, %i] [16, 16]) outs(subview %y[%i, %j] [16, 16])
    } }
    ```
  }];
  let dependentDialects = ["memref::MemRefDialect", "scf::SCFDialect"];
}

def DynoPadsAsGenerics : Pass<"dyno-pads-as-generics", "func::FuncOp"> {
  let summary = "Constant pads as parallel generics that read their source in bounds";
  let description = [{
    A `tensor.pad` bufferizes to a fill of the padded buffer and a copy of the source
    into it, two loops outside any `scf.forall`: one thread runs them. A ResNet stem's
    max pooling pads its 16x64x16x16 input this way, and the kernel holding it took
    685 us per call on the CPU, ten times the convolution beside it.

    This pass rewrites a pad whose value is one value (a constant or a value defined
    above) and whose shapes are static into a `linalg.generic` over the padded shape:
    each element reads the source at its index minus the low padding where that index
    is inside the source, and yields the padding value elsewhere. The read sits in an
    `scf.if`, so that along the innermost dimension it is contiguous and LLVM
    vectorizes it as a masked load (a read at a clamped index had stayed scalar: 168 us
    where eager takes 38 for the pad alone; 41 us this way). Empty sources are left
    alone. dyno-tile-kernels then tiles the generic like any other root. The stem
    kernel went from 685 to 196 us with dyno-collapse-short-inner-loops.

    ```mlir
    // Before
    %p = tensor.pad %x low[0, 1] high[0, 1] { tensor.yield %ninf : f32 }
        : tensor<4x8xf32> to tensor<4x10xf32>
    // After
    %p = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1)], parallel, parallel}
        outs(%empty : tensor<4x10xf32>) {
      %j = linalg.index 1 ; %s = %j - 1 ; %in = %s ult 8
      %v = scf.if %in { tensor.extract %x[%i, %s] } else { %ninf }
      linalg.yield %v
    }
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "scf::SCFDialect", "tensor::TensorDialect"];
}

def DynoWindowTapsAsReads : Pass<"dyno-window-taps-as-reads", "func::FuncOp"> {
  let summary = "Pooling windows' strided taps read from what is under the pad";
  let description = [{
    A max pooling is an elementwise maximum over its window's taps: strided slices of
    its input, padded with -inf where the window reaches past the image. The input (a
    batch norm and ReLU after a convolution) was computed into a buffer of its own, the
    pad copied it into a second, larger one, and the pooling read the taps from that:
    three loops over the image and two allocations of its size in one kernel (ResNet's
    stem: 16x64x16x16). Inductor computes each tap from the convolution's output.

    This pass rewrites a static slice with a stride (a tap), taken through other static
    slices from a constant `tensor.pad` or from a cheap all-parallel generic (one
    result, its result laid out as its loops, inputs read through projected
    permutations, at most 12 ops, no transcendental function, no index check), and read
    only by generics, as inputs, into a generic over the slice's shape that computes
    each element: the slice's index is `offset + stride * index`, a pad's element is its
    source's where the index is inside it (in an `scf.if`, as dyno-pads-as-generics
    reads it) and the padding value elsewhere, and a generic's element is its body on
    its inputs' elements (computed the same way through pads, slices and generics, read
    otherwise). dyno-fuse-elementwise then fuses the taps into the pooling: one loop
    that reads the convolution's output, each element of the batch norm computed by
    every window that holds it (2.25 times for 3x3 windows of stride 2).

    ```mlir
    // Before
    %bn = linalg.generic ... ins(%conv, %scale : ...) -> tensor<1x16x16x64xf32>
    %p = tensor.pad %bn low[0, 1, 1, 0] high[0, 1, 1, 0] { tensor.yield %ninf }
    %rows = tensor.extract_slice %p[0, 0, 0, 0] [1, 8, 17, 64] [1, 2, 1, 1]
    %tap = tensor.extract_slice %rows[0, 0, 0, 0] [1, 8, 8, 64] [1, 1, 2, 1]
    // After: %tap is
    linalg.generic outs(%empty : tensor<1x8x8x64xf32>) {
      %h = 2 * index 1 - 1 ; %w = 2 * index 2 - 1 ; %in = %h ult 16 and %w ult 16
      %v = scf.if %in { bn's body on tensor.extract %conv[0, %h, %w, %c], ... }
           else { %ninf }
      linalg.yield %v
    }
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "scf::SCFDialect", "tensor::TensorDialect"];
}

def DynoTileKernels : Pass<"dyno-tile-kernels", "ModuleOp"> {
  let summary = "Tile each kernel into parallel row blocks and fuse producers into them";
  let description = [{
    For every `func.func` kernel, tiles the last linalg op (the root) along its first
    parallel loop into an `scf.forall` of blocks of about `block-iterations` loop
    iterations each (so a block's slices stay in L1 at any size), and fuses into the
    block every producer whose slice follows the root's rows (so a softmax computes max,
    sum and division of a block of rows while the rows are in cache). Producers that
    would need their whole tensor in each block (a reduction over the tiled dimension)
    become roots of their own. Ops with no parallel loop, or too little work for two
    blocks, are left alone.

    ```mlir
    // Before: two full-tensor ops
    %s = linalg.generic {parallel, reduction} ins(%x : tensor<256x1024xf32>)
    %d = linalg.generic {parallel, parallel} ins(%x, %s)
    // After (block-iterations=4096): one parallel loop over 4-row blocks, both ops
    // inside on 4x1024 slices
    %d = scf.forall (%i) = (0) to (256) step (4) shared_outs(%o = %init) {
      %xs = tensor.extract_slice %x[%i * 4, 0] [4, 1024] [1, 1]
      %ss = linalg.generic {parallel, reduction} ins(%xs)
      %ds = linalg.generic {parallel, parallel} ins(%xs, %ss)
      scf.forall.in_parallel { tensor.parallel_insert_slice %ds into %o[...] }
    }
    ```

    Input: kernels on tensors (after `dyno-form-kernels`). Output: the same kernels with
    `scf.forall` loops that the CPU lowering turns into OpenMP worksharing loops.
  }];
  let options = [
    Option<"blockIterations", "block-iterations", "int64_t", "1024",
           "Loop iterations of the root per block: a block's slices and temporaries stay "
           "in L1 (1024: the 256x1024 layernorm+GELU+softmax kernel ran 7% faster than "
           "with 4096, whose three 4-row temporaries overflow a 32 KiB L1)">,
    Option<"minBlocks", "min-blocks", "int64_t", "8",
           "Fewest blocks a tiled kernel is split into, so that every thread has work">
  ];
  let dependentDialects = ["scf::SCFDialect", "tensor::TensorDialect",
                           "affine::AffineDialect", "arith::ArithDialect"];
}

def DynoFuseSiblingLoops : Pass<"dyno-fuse-sibling-loops", "func::FuncOp"> {
  let summary = "Merge consecutive loops whose iterations touch the same elements";
  let description = [{
    After linalg-to-loops each op of a kernel block is its own loop nest: GELU writes a
    row buffer in one loop and softmax's max reads it in the next; exp writes a buffer
    and the sum reads it. This pass merges two consecutive `scf.for` loops with the same
    bounds and step, the second's body after the first's, when that keeps every
    dependence: for each buffer one loop writes and the other touches (same buffer after
    subviews and casts), both access it through the same memref with the induction
    variable itself as one of the indices, so an iteration only meets the elements of
    its own iteration. A reduction's accumulator (indexed without the induction
    variable) that one loop writes and the other reads keeps them apart: softmax's sum
    still waits for the max. Two loops of one iteration each always merge. Ops between
    the loops move above the first when they use nothing defined after it and touch no
    buffer it writes (a fill of the next accumulator), or below the second when it
    neither uses them nor touches a buffer they touch (the epilogue of the first's
    blocked sum). Nests are fused from the outside in. The fused loop reads each element
    once and LLVM forwards the stored value to the load.

    Parallel loops over rows (`scf.forall`, one per kernel root after dyno-tile-kernels)
    merge when every buffer one writes and the other touches is reached in both only
    through the iteration's own rows: a subview at rows `iv * c` of at most `c` rows,
    under reshapes that keep the leading dimension. Iteration i then runs the first
    body, then the second, on rows no other iteration touches; the two bodies' identical
    views are then one. A variance's three blocked sums over rows of 4M read each row
    twice instead of three times (0.89x the unblocked time, was 1.34x).

    ```mlir
    // Before
    scf.for %j = %c0 to %c1024 step %c1 {
      memref.store %g, %t[%j] : memref<1024xf32>
    }
    scf.for %j = %c0 to %c1024 step %c1 {
      %v = memref.load %t[%j] : memref<1024xf32>
      ... memref.store %m, %max[%c0] ...
    }
    // After: one loop, the store then the load of %t[%j]
    ```

    Input and output: loops over memrefs (after `convert-linalg-to-loops`).
  }];
  let dependentDialects = ["scf::SCFDialect", "memref::MemRefDialect"];
}

def DynoMarkDistinctKernelBuffers : Pass<"dyno-mark-distinct-kernel-buffers", "ModuleOp"> {
  let summary = "Tell LLVM that a CPU kernel's buffers do not overlap";
  let description = [{
    The host wrapper passes a kernel fresh buffers for its results (`_empty`) and never
    lets a kernel write its inputs (they are `bufferization.writable = false`): within
    a call, memory written through one pointer argument is reached through no other.
    LLVM cannot know this, so a loop that stores its result and reloads an index (an
    embedding's token id, inner loop after inner loop) or reads a table at that index
    stayed scalar. For every public `llvm.func` with two or more pointer arguments, each
    `llvm.load` and `llvm.store` whose address is a getelementptr chain from pointer
    argument `i` gets alias scope `i` and is declared not to alias the other arguments'
    scopes (LLVM's scoped-noalias metadata, which survives the outlining of OpenMP
    regions, unlike `noalias` on the arguments). Measured on 2 threads
    (Sapphire Rapids), embedding + RMSNorm of 4x128 tokens, width 256: the kernel
    went from 363 to 43 us in bf16 and from 79 to 30 us in fp32.

    A kernel's heap allocations (`malloc`, its intermediates too large for the stack,
    used directly or aligned by `ptrtoint`/`inttoptr` arithmetic) are fresh memory:
    each is a buffer with a scope of its own too. (Through the OpenMP outlining their
    pointers reach the loops as loads from a context struct, and LLVM judged a padded
    copy from one into another "not beneficial" to vectorize with runtime checks:
    ResNet's bf16 stem kernel went from 121 to 68 us per call with this and
    dyno-unswitch-inner-loops, AMD Zen 4.) Stack slots and calls are left unmarked.

    Input and output: the LLVM dialect (OpenMP regions still inline, as the kernels
    reach the JIT).
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def DynoSplitAtConcatenations : Pass<"dyno-split-at-concatenations", "func::FuncOp"> {
  let summary = "Split elementwise generics where the pieces of a concatenation they read meet";
  let description = [{
    A kernel that reads a `tensor.concat` (rotary embeddings' `rotate_half`:
    `cat(-x[..., d/2:], x[..., :d/2])`) wrote every piece, then copied the pieces into
    the concatenation, then read it: Llama's query rotation was a transposed copy of the
    projection, a negated copy of its second half and the concatenation, before the one
    loop that used them. This pass (CPU lowering, on the kernels, before tiling):

    * splits an all-parallel `linalg.generic` with static shapes that reads a static
      concatenation through a loop dimension into one generic per piece (upstream's
      `linalg::splitOp`), each writing its slice of the result (`tensor.insert_slice`);
    * folds a slice of a concatenation that covers whole pieces into those pieces;
    * computes a slice of an elementwise generic's result on its own (the generic on the
      slices of its operands) when all the generic's users are unit-stride slices that do
      not overlap: nothing is computed twice.

    `dyno-fuse-elementwise`, run next, then fuses the pieces' producers into the parts:
    the rotation becomes two loops that read the projection where it is.

    Input and output: linalg-on-tensors (a kernel's body).

    ```mlir
    // Before
    %t = linalg.generic ... ins(%x) ... -> tensor<4x64xf32>          // transposed copy
    %a = tensor.extract_slice %t[0, 0] [4, 32] [1, 1]
    %b = tensor.extract_slice %t[0, 32] [4, 32] [1, 1]
    %n = linalg.generic ... ins(%b) { negf } -> tensor<4x32xf32>
    %c = tensor.concat dim(1) %n, %a
    %r = linalg.generic ... ins(%x, %cos, %c, %sin) ... -> tensor<4x64xf32>
    // After (and fused): two generics over [4, 32], each reading slices of %x
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def DynoRelaxSoftmaxMaximum : Pass<"dyno-relax-softmax-maximum", "func::FuncOp"> {
  let summary = "Mark a softmax's row maximum nnan nsz where no result can tell";
  let description = [{
    A softmax computes `m = max(x)` per row only to keep `exp(x - m)` in range. Eager's
    maximum propagates NaN and orders -0.0 below +0.0, and `arith.maximumf` does the
    same, which costs five x86 instructions per vector (two blends for the zeros, an
    unordered compare and a blend for NaN, the max) on the loop that also computes the
    softmax's input: a quarter of the fused layernorm+GELU+softmax loop's
    floating-point work on AVX2.

    Neither property can reach the results when the maximum is used only like this:
    every use of `m` is an elementwise `e = exp(x - m)` (reading the same `x` as the
    maximum, row by row), every `e` is summed over the same rows (`s`), and otherwise
    used only as `e / s` or `e * r` with `r = 1 / s` (dyno-multiply-by-reciprocals). A
    NaN in a row makes its `e`, hence `s` and every result of the row, NaN whatever `m`
    is; without NaN, `m` is the same value up to the sign of a zero, and `x - (+0.0)`
    and `x - (-0.0)` differ only in the sign of a zero, which exp maps to 1 alike. For
    such a maximum this pass adds `nnan` and `nsz` to the `arith.maximumf`, and LLVM
    emits one `vmaxps` per vector. Anything else (another use of `m` or `e`, a
    reduction over other dimensions, log-softmax's `x - m - log(s)`, where the sign of
    a zero can reach the result) is left exact.

    ```mlir
    // Before
    %m = linalg.generic {... ["parallel", "reduction"]} ins(%x) outs(%neg_inf) {
      %0 = arith.maximumf %in, %out : f32
    %e = linalg.generic ins(%x, %m) ... { exp(%in - %in_m) }
    %s = linalg.generic {... ["parallel", "reduction"]} ins(%e) outs(%zero) { addf }
    %r = linalg.generic ins(%s) ... { 1 / %in }
    %y = linalg.generic ins(%e, %r) ... { %in * %in_r }
    // After: the same, with
      %0 = arith.maximumf %in, %out fastmath<nnan,nsz> : f32
    ```

    Every `exp(x - m)` with `m` the maximum of `x`'s row (relaxed or not: it is at least
    every element that is not NaN) also gets the unit attribute
    `dyno.nonpositive_argument`: its argument is at most 0 or NaN, and
    `dyno-approximate-math` drops the two upper clamps of its exp expansion.

    Input and output: linalg-on-tensors (the CPU lowering runs it on the kernels before
    tiling). Results are bit-identical to the exact maximum's.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect"];
}

def DynoReassociateFloats : Pass<"dyno-reassociate-floats", "func::FuncOp"> {
  let summary = "Allow reassociation, contraction and reciprocals in kernel float math";
  let description = [{
    Adds fast-math flags to the arith ops of kernel loops (after linalg-to-loops):
    * `contract` everywhere but on float conversions (with it on both, arith folds
      extf(truncf(x)) to x and drops an explicit rounding): LLVM forms FMAs.
    * `reassoc` on a reduction's update only (an op whose operand is loaded from the
      element its result is stored to): LLVM vectorizes the reduction with partial sums.
      Elsewhere reassociation would reorder computations whose rounding is the point
      (eager's floor division, `(a - fmod(a, b)) / b`, was off by one), and on a
      multiplication it lets instcombine sink a reciprocal computed once per row back
      into the loop (`x * (1 / y)` -> `x / y`).
    * `arcp` on divisions only (on other ops it licenses folds into neighbouring
      divisions: `-(1 / sqrt(x))` became `(-1) / sqrt(x)` with the negation's `arcp`,
      the rsqrt estimate): a division by a constant becomes a multiplication by its
      reciprocal. Not on a quotient that is floored, truncated,
      rounded, converted to an integer or compared (ExactQuotients.h): `x * (1 / c)`
      may be one ulp below an exact integer quotient (`trunc(1083 * 0.3 / 0.3)` gave
      1082). Not on square roots and divisions by them: LLVM turned `1 / sqrt(x)` into
      x86's rsqrt estimate with a Newton step, which returned NaN for 0 and infinity and
      -inf for subnormals.
    Results differ from strict evaluation by rounding only, as in Inductor's vectorized
    kernels. Flags that change semantics (`nnan`, `ninf`, `nsz`, `afn`) are never added:
    NaN and infinity propagate exactly as in eager.

    ```mlir
    // Before
    %s = arith.addf %a, %b : f32
    // After
    %s = arith.addf %a, %b fastmath<contract> : f32
    ```

    Input and output: any IR with arith ops.
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

def DynoLowerScansScattersSorts : Pass<"dyno-lower-scans-scatters-sorts", "func::FuncOp"> {
  let summary = "Lower dyno.scan, dyno.scatter and dyno.sort to loops on tensors";
  let description = [{
    Rewrites each scan, scatter and sort into `scf.for` loops that read with `tensor.extract` and
    write with `tensor.insert` into loop-carried tensors, which one-shot bufferization
    turns into loads and stores in place (CPU target).

    Scans and sorts treat each line along their dimension independently: an
    `scf.forall` over the other dimensions (OpenMP threads on the CPU) cuts each line
    out of the outputs (`tensor.extract_slice`) and inserts it back
    (`tensor.parallel_insert_slice`).

    - `dyno.scan`: one loop along the scanned dimension per position of the others. A
      scan whose region is one `arith.addf` or `arith.mulf` of a float type narrower
      than f64 accumulates in f64 and rounds each output, as eager's CPU cumsum and
      cumprod do (their accumulator type is double).
    - `dyno.scatter`: one loop over the updates in order (repeated indices accumulate
      in order), with the update slice's positions inside.
    - `dyno.sort`: a stable bottom-up merge sort (O(n log n)) of each line along the
      dimension, with a scratch tensor per output. A comparator that is an ordered float
      comparison of the first output's two elements orders NaN as the largest value, as
      eager does (`ole`/`olt`: NaN last; `oge`/`ogt`: NaN first).

    ```mlir
    // Before
    %r = dyno.scatter dimension_map([0]) unique_indices(false)
        ins(%u, %i : tensor<4x3xf32>, tensor<4x1xi64>) outs(%o : tensor<6x3xf32>) {...}
    // After
    %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%t = %o) -> (tensor<6x3xf32>) {
      %r1 = scf.for %c = %c0 to %c3 step %c1 iter_args(%t1 = %t) -> (tensor<6x3xf32>) {
        %v = tensor.extract %u[%k, %c]
        %row = tensor.extract %i[%k, %c0] ... index_cast
        %old = tensor.extract %t1[%row, %c]
        %new = <region>(%v, %old)
        %t2 = tensor.insert %new into %t1[%row, %c]
        scf.yield %t2
      } ...
    ```

    Input: kernels on tensors. Output: the same, without scans, scatters and sorts.
  }];
  let dependentDialects = ["arith::ArithDialect", "bufferization::BufferizationDialect",
                           "scf::SCFDialect", "tensor::TensorDialect"];
}

#endif // DYNO_TARGET_CPU_PASSES_TD
