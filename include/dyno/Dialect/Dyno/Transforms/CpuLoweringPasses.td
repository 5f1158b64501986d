//===- CpuLoweringPasses.td - Passes of the CPU lowering only ---*- tablegen -*-===//
//
// The passes only dyno-cpu-lowering-pipeline runs (after kernel formation, before and
// during the lowering to LLVM): library epilogues and layouts around library calls,
// memref conventions of the kernels, and LLVM tuning. Included by Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_CPULOWERINGPASSES_TD
#define DYNO_DIALECT_DYNO_TRANSFORMS_CPULOWERINGPASSES_TD

include "mlir/Pass/PassBase.td"

def DynoFuseMatmulEpilogues : Pass<"dyno-fuse-matmul-epilogues", "ModuleOp"> {
  let summary = "Fuse a GELU that follows a bf16 library matmul into the library call";
  let description = [{
    After `dyno-form-kernels`, on the host schedule: a `dyno.extern "matmul"` of bf16
    operands (with no accumulator, or a bias of rank 1) whose only user is a launch
    of a kernel that does nothing but apply GELU (erf form, as PyTorch decomposes
    `F.gelu`) to it, elementwise, in its own type, becomes one `dyno.extern "matmul"`
    with `epilogue = "gelu"`; the launch goes, and the kernel with it when nothing else
    launches it. The CPU wrapper calls oneDNN's linear with a GELU post-op, which applies
    it to the f32 accumulator in the GEMM's loop over its output: one pass over the
    activations instead of the GEMM's write, the kernel's read and write, and one
    rounding to bf16 instead of two (results are within bf16 rounding of eager's, and
    closer to the exact values).

    Measured on 2 threads (benchmarks/cpu_library_calls.py): bf16 linear + GELU, 64x512 ->
    1024, 147 us (addmm, then the GELU) against 95 us fused; 512x768 -> 3072, 3.36 ms
    against 1.48 ms. Only GELU: oneDNN's ReLU post-op maps NaN to 0 where eager keeps it.
    f16 is not fused: a product beyond f16's range is +-inf in eager before its GELU
    (GELU(-inf) is NaN there), where the accumulator's GELU is finite. f32 matmuls stay
    MKL's (oneDNN's fused f32 linear + GELU measured 0.91x-1.15x against MKL's GEMM and
    Dyno's GELU kernel).

    Input and output: the host function with its `module @kernels`, on tensors.

    ```mlir
    // Before
    %y = dyno.extern "matmul"(%x, %wt, %b) : (...) -> tensor<64x1024xbf16>
    %g = dyno.launch @kernels::@gelu(%y) : (tensor<64x1024xbf16>) -> tensor<64x1024xbf16>
    // After
    %g = dyno.extern "matmul"(%x, %wt, %b) {epilogue = "gelu"} : (...) -> tensor<64x1024xbf16>
    ```
  }];
}

def DynoChannelsLastConvolutions : Pass<"dyno-channels-last-convolutions", "ModuleOp"> {
  let summary = "Kernels read and write convolutions' tensors in channels-last order";
  let description = [{
    After `dyno-form-kernels` (CPU). For each `dyno.extern "conv2d"` of a type listed in
    `element-types` (the runtime runs those channels-last), with static shapes: kernels
    reading its result take an NHWC host view of it (`linalg.transpose`, a `permute`
    that copies nothing) through maps permuted to (n, h, w, c); the kernel computing its
    input writes it NHWC through a permuted output map (when only convolutions, kernels
    and the return read it on the host), the convolution taking an NCHW view; inside
    such kernels, an NCHW intermediate that reaches other generics only through pads
    and slices (a max pool's padded window slices) is computed NHWC too, with the pads
    and slices permuted; and a generic given such maps has its channel loop moved
    innermost where most of its 4-d accesses end in it. Values are unchanged; the
    wrapper's two copies per convolution go. See docs/CpuTarget.md, "Library calls in
    bf16/f16 (CPU)".

    ```mlir
    // Before
    %r = dyno.launch @kernels::@relu(%y) : (tensor<8x16x32x32xbf16>) -> tensor<8x16x32x32xbf16>
    // After
    %t = linalg.transpose ins(%y : tensor<8x16x32x32xbf16>) outs(%e : tensor<8x32x32x16xbf16>) permutation = [0, 2, 3, 1]
    %r = dyno.launch @kernels::@relu(%t) : (tensor<8x32x32x16xbf16>) -> tensor<8x16x32x32xbf16>
    ```
  }];
  let options = [
    ListOption<"elementTypes", "element-types", "std::string",
               "Element types (bf16, f16, f32) of the convolutions the runtime runs "
               "channels-last; none: the pass does nothing">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
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

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_CPULOWERINGPASSES_TD
