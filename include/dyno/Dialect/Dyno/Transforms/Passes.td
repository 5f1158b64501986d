//===- Passes.td - Dyno transformation passes --------------*- tablegen -*-===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_PASSES_TD
#define DYNO_DIALECT_DYNO_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"
// How floats are computed: accuracy against eager and float64, low precisions, math
// approximations. (TableGen orders the passes by name, wherever they are defined.)
include "dyno/Dialect/Dyno/Transforms/NumericsPasses.td"

def DynoMergeSiblingGenerics : Pass<"dyno-merge-sibling-generics", "func::FuncOp"> {
  let summary = "Merge elementwise generics that read a common tensor and are written anyway";
  let description = [{
    All-parallel `linalg.generic`s of one static iteration space whose results are written
    through identity maps and to memory anyway, and that read a common tensor, become one
    generic with all their results. Written anyway: only returned by the graph (directly
    or through reshapes), or transcendental and read by several ops, which
    `dyno-fuse-elementwise` computes once instead of in each consumer (a rotary
    embedding's cos and sin of the same angles: one kernel instead of two). Kernel
    formation puts a producer into a consumer's kernel only when all its users are in
    it, so graph outputs computed from shared intermediates were separate kernels that
    each read the inputs and the intermediates through memory: max pooling with indices,
    whose values and indices follow the same running maximum, was three kernels and
    host copies of strided slices. Once merged, the shared producers have a single user,
    and `dyno-fuse-elementwise`, run again after this pass, fuses them in. Other generics
    are left alone: merging them could keep a result from fusing into its consumer's
    kernel. Users of a member that precede the merged generic move after it.

    Input and output: linalg-on-tensors.

    ```mlir
    // Before
    %v = linalg.generic ins(%x, %m : ...) outs(%e0 : ...) { ... }   // returned
    %i = linalg.generic ins(%x, %m, %p : ...) outs(%e1 : ...) { ... } // returned
    return %v, %i
    // After
    %vi:2 = linalg.generic ins(%x, %m, %x, %m, %p : ...) outs(%e0, %e1 : ...) { ... }
    return %vi#0, %vi#1
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def DynoFuseElementwise : Pass<"dyno-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse elementwise producers into their consumers, recomputing cheap ones";
  let description = [{
    Runs upstream linalg's elementwise fusion and reshape propagation with Dyno's policy:
    an all-parallel `linalg.generic` producer is fused into every consumer, even when it
    has several users, as long as its body is cheap (at most `max-recompute-ops` ops, no
    transcendental math such as exp or erf). A producer with transcendental math is fused
    only into a single consumer that reads it without broadcasting, so a per-row
    `rsqrt(var + eps)` is not recomputed for every element of the row. Costlier shared producers stay
    separate; `dyno-tile-kernels` later computes them once per row block. A producer
    that reads no tensor (a function of its indices: masks built from aranges) may be
    4x that size, and gets a copy per reshape that reads it, so that each copy fuses
    into its reader (Swin's shifted-window regions).
    Recomputing `x - mean` in both the variance and the normalization of a layernorm
    costs an instruction per element and saves writing and re-reading a whole tensor. Transposes
    and broadcasts that do not feed a library operation are generalized first so that they
    fold into their consumers' indexing maps. Reshapes are not propagated through
    matmuls and convolutions, which would turn them into generic contractions that no
    library call matches.

    Input: linalg-on-tensors. Output: the same, with fewer, larger `linalg.generic`s.

    ```mlir
    // Before
    %c = linalg.generic {...parallel, parallel} ins(%x, %mean) { arith.subf }
    %v = linalg.generic {...parallel, reduction} ins(%c) { arith.mulf; arith.addf }
    %n = linalg.generic {...parallel, parallel} ins(%c, %v) { arith.mulf }
    // After
    %v = linalg.generic {...parallel, reduction} ins(%x, %mean) { subf; mulf; addf }
    %n = linalg.generic {...parallel, parallel} ins(%x, %mean, %v) { subf; mulf }
    ```
  }];
  let options = [
    Option<"maxRecomputeOps", "max-recompute-ops", "unsigned", "8",
           "Largest producer body (in ops) that is recomputed in several consumers">,
    Option<"rotationsAsReads", "rotations-as-reads", "bool", "false",
           "A rotation (torch.roll: the concat of x[a:] and x[:a]) becomes a generic "
           "reading x[(i + a) mod n], which its readers take in (through reshapes): "
           "the Triton target, whose kernels cannot read a concat. The CPU target "
           "writes concats' pieces into place and tiles only monotonic maps">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "affine::AffineDialect"];
}

def DynoFormKernels : Pass<"dyno-form-kernels", "ModuleOp"> {
  let summary = "Partition each graph function into kernels, library calls and views";
  let description = [{
    Splits every `func.func` of the module (the graph) into a host schedule:

    * `linalg.matmul`, `linalg.batch_matmul` and the 2-D convolutions
      (`linalg.conv_2d_nchw_fchw`, grouped `linalg.conv_2d_ngchw_gfchw`, depthwise
      `linalg.depthwise_conv_2d_nchw_chw`) become `dyno.contraction` library calls; a
      zero-filled init is dropped, a broadcast bias of a convolution and a zero
      `tensor.pad` of its input become the call's operands and padding (with
      `convolution-bias-in-library=false` the bias is added by the kernels that read
      the call's result), a grouped convolution's group dims merge into its channels. bf16/f16 operands with an f32 accumulator (torch-mlir's form) call the
      library in the low precision (addmm's bias too); the kernels that read the f32
      result read the call's result instead and widen each element, through reshapes,
      and a consumer that only rounds it back disappears.
    * Reshapes, static slices and transposes whose users are not all inside one kernel stay
      in the host function; the runtime performs them as zero-copy views.
    * Every other op joins a kernel. A producer joins its consumer's kernel when all its
      users are in that kernel; `tensor.empty`, `linalg.fill` and scalar constants are
      cloned into each kernel that uses them. Each kernel is outlined into a `func.func`
      in the nested `module @kernels` and called with `dyno.launch`.

    ```mlir
    // Before
    func.func @main(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4x8xf32> {
      %e = tensor.empty() : tensor<4x16xf32>
      %r = linalg.generic ... ins(%x) outs(%e) { math.exp }
      %f = linalg.fill ins(%zero) outs(%e2)
      %m = linalg.matmul ins(%r, %w) outs(%f)
      return %m
    }
    // After
    func.func @main(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4x8xf32> {
      %r = dyno.launch @kernels::@kernel_0(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
      %m = dyno.contraction "matmul"(%r, %w) : (...) -> tensor<4x8xf32>
      return %m
    }
    module @kernels {
      func.func @kernel_0(%x: tensor<4x16xf32>) -> tensor<4x16xf32> { ... }
    }
    ```

    Dynamic shapes: sizes of graph inputs and library results (`tensor.dim`), size
    arithmetic, `cf.assert` shape checks and reshapes of inputs stay on the host; a
    kernel takes such sizes and the graph's integer scalars as arguments. The dynamic
    sizes of a kernel's results are resolved (through the ops' shape reification) to host
    values and passed to `dyno.launch` as `dims`; a size that depends on computed data
    is an error.

    Input: linalg-on-tensors, static or dynamic shapes. Output: host functions made of
    `dyno.launch`, `dyno.contraction`, tensor view ops and host size computations; kernels on
    tensors.
  }];
  let options = [
    Option<"convolutionBiasInLibrary", "convolution-bias-in-library", "bool", "true",
           "A convolution's bias is an operand of its library call (oneDNN adds it in "
           "the accumulator). false: the call convolves only, and the kernels that read "
           "its result add the bias (cuDNN's convolutions add a bias in a kernel of "
           "their own)">
  ];
  let dependentDialects = ["dyno::DynoDialect", "func::FuncDialect"];
}

def DynoDeduplicateKernels : Pass<"dyno-deduplicate-kernels", "ModuleOp"> {
  let summary = "One kernel for the kernels of a graph that are equal up to their names";
  let description = [{
    A model's layers repeat their kernels: a 12-layer GPT-2 makes each of its per-layer
    kernels 12 times, under 12 names. On the top-level module (the host function and
    its nested `module @kernels`), kernels that are the same function under another
    name (the same operation, attributes but the name, and body, up to locations:
    `OperationEquivalence`) become one: every `dyno.launch` of a later copy calls the
    first, and the copies are erased. Each distinct kernel is then compiled once: the
    CPU's JIT and Triton's compiler take most of a cold compile's time.

    On the CPU it runs twice: before the kernels are lowered (after the passes that
    change a kernel for where it is launched, so a 12-layer GPT-2 lowers 16 kernels,
    not 106) and again in the LLVM dialect (before `dyno-mark-distinct-kernel-buffers`,
    whose alias scopes are per kernel). On the Triton target it runs after the block
    programs are formed (earlier passes there split or re-sign one kernel per launch).
    Declarations are left alone.

    ```mlir
    // Before
    %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = dyno.launch @kernels::@kernel_1(%0) : (tensor<4xf32>) -> tensor<4xf32>
    module @kernels { func.func @kernel_0(...) {...}  func.func @kernel_1(...) {...same} }
    // After
    %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = dyno.launch @kernels::@kernel_0(%0) : (tensor<4xf32>) -> tensor<4xf32>
    module @kernels { func.func @kernel_0(...) {...} }
    ```
  }];
}

def DynoKeyKernels : Pass<"dyno-key-kernels", "ModuleOp"> {
  let summary = "Each launched kernel's key, by which graphs and processes share it";
  let description = [{
    On the top-level module (the host function and its nested `module @kernels`), sets
    `dyno.kernel_key` on each kernel a `dyno.launch` calls: a SHA-256 (32 hex digits) of
    the kernel printed in generic form with its name replaced, and of the symbols it
    uses, transitively (KernelIdentity.h). Kernels equal up to their names get one key,
    in any graph and any process. Last in both targets' lowering pipelines: the CPU JIT
    shares compiled kernels between the graphs of a process by it and names them after
    it in the libraries the compile cache stores; the Triton translator prints it in the
    launch table, and the runtime shares launchers by it. A kernel that cannot be shared
    (another symbol calls it, it calls a function defined beside it, it refers to a
    symbol the module lacks, a `dense_resource` constant) gets no key. The same printing
    is what dyno-deduplicate-kernels groups a graph's kernels by.

    ```mlir
    module @kernels {
      llvm.func @kernel_3(...) attributes {dyno.kernel_key = "5f0c1e..."} {...}
    }
    ```
  }];
}

def DynoCheckStaticSizes : Pass<"dyno-check-static-sizes", "func::FuncOp"> {
  let summary = "Check at run time the sizes a dynamically shaped graph assumes";
  let description = [{
    In a graph with dynamic shapes, a linalg op whose operands give one loop a static
    size in one place and a dynamic size in another (or a `tensor.cast` that makes a
    dynamic size static) assumes the dynamic size's value; canonicalization then acts on
    that assumption (it casts the dynamic operand to the static type). Were the
    assumption wrong, compiled code would read or write out of bounds. This pass puts a
    `cf.assert` right after the definition of each such dynamic operand (before anything
    can rely on its size), which kernel formation leaves on the host: a wrong assumption
    raises an error (and the graph runs eagerly) instead.

    Found necessary: torch-mlir 20261001 lowers a `[s0, s1, 256] * [s0, s1, 1]` multiply
    of a transformer block compiled with `dynamic=True` to a result of type
    `tensor<?x1x256xf32>`.

    ```mlir
    // Before
    %r = linalg.generic ... ins(%x : tensor<?x?x256xf32>) outs(%e : tensor<?x1x256xf32>)
    // After (%x defined above)
    %d = tensor.dim %x, %c1 : tensor<?x?x256xf32>
    %ok = arith.cmpi eq, %d, %c1_0 : index
    cf.assert %ok, "dyno: the lowered graph assumes size 1 for dimension 1 of ..."
    ...
    %r = linalg.generic ... ins(%x : tensor<?x?x256xf32>) outs(%e : tensor<?x1x256xf32>)
    ```

    Input and output: linalg-on-tensors. Statically shaped graphs are unchanged.
  }];
  let dependentDialects = ["arith::ArithDialect", "cf::ControlFlowDialect",
                           "tensor::TensorDialect"];
}

def DynoFoldEmptyTensors : Pass<"dyno-fold-empty-tensors", "func::FuncOp"> {
  let summary = "Fold computations on tensors with no elements";
  let description = [{
    A tensor with a static zero-size dimension holds no data. Before kernel formation
    this pass replaces
    * a linalg op with a zero-size loop (no iterations) by its inits: a sum over an
      empty dimension is its fill;
    * a side-effect-free op whose tensor results have no elements by `tensor.empty`s;
    * a `tensor.insert_slice` of an empty source by its destination;
    * a `tensor.concat`'s empty pieces (also behind `tensor.cast`s) by nothing.
    No kernel is then formed for an empty tensor, nor passed one. (The CPU kernels'
    bare-pointer ABI cannot lower a zero-size memref: before this pass, every op of the
    OpInfo sweep with a `[1, 0, 3]` sample input fell back.)

    ```mlir
    // Before
    %r = linalg.generic ... ins(%x : tensor<1x0x3xf32>) outs(%e : tensor<1x0x3xf32>)
    // After
    %r = tensor.empty() : tensor<1x0x3xf32>
    ```

    Input and output: linalg-on-tensors.
  }];
  let dependentDialects = ["tensor::TensorDialect"];
}

def DynoKeepAssertionsInKernels
    : Pass<"dyno-keep-assertions-in-kernels", "func::FuncOp"> {
  let summary = "Per-element index checks stay in their kernels, as checks of the index";
  let description = [{
    GPUs (the Triton target). A per-element index check (`cf.assert` in a linalg body:
    torch-mlir's embedding check, `dyno-check-gather-bounds`' gather checks) becomes a
    `dyno.check` of the index it guards, a device-side assertion in the kernel that
    reads through it, as eager's CUDA gathers and Inductor's kernels assert their
    indices. On the host (`dyno-hoist-kernel-assertions`) the same check costs two GPU
    launches (a reduction and `torch._assert_async`) for every call; here it costs
    none, and it is cloned, fused and dropped with the read it guards.

    The guarded read is the first `tensor.extract` after the assertion in the same body
    (torch-mlir and `dyno-check-gather-bounds` assert right before the read they
    guard); the check goes on its index that depends on a value the condition reads and
    that itself depends on the op's inputs. An assertion whose read has no such index
    stays (the host pass hoists it). Fusion never recomputes a checked gather on a
    slice only (`dyno-fuse-elementwise`): every index is checked, as eager checks them.

    ```mlir
    // Before
    ^bb0(%i: i64, %o: f32):
      %ok = arith.cmpi slt, %i, %c10 : i64
      cf.assert %ok, "index must be smaller than dim size"
      %idx = arith.index_cast %i : i64 to index
      %v = tensor.extract %table[%idx, %j] : tensor<10x4xf32>
    // After
    ^bb0(%i: i64, %o: f32):
      %ok = arith.cmpi slt, %i, %c10 : i64
      %idx = arith.index_cast %i : i64 to index
      %checked = dyno.check %idx if %ok, "index must be smaller than dim size" : index
      %v = tensor.extract %table[%checked, %j] : tensor<10x4xf32>
    ```

    Input and output: linalg-on-tensors.
  }];
  let dependentDialects = ["dyno::DynoDialect"];
}

def DynoHoistKernelAssertions : Pass<"dyno-hoist-kernel-assertions", "func::FuncOp"> {
  let summary = "Check per-element assertions on the host before the op runs";
  let description = [{
    torch-mlir checks indices per element with `cf.assert` inside linalg bodies (an
    embedding's or gather's "index must be smaller than dim size"). Inside a kernel a
    failed assertion can only abort the process, and an out-of-range index would be
    read first. For the assertions of one op this pass builds one reduction computing
    their conditions for every element (`and` over the loops the conditions read),
    extracts the result on the host and asserts it there, right before the op, and
    removes the assertions from the body. The wrapper then raises before the kernel that would read
    out of bounds; the graph runs eagerly, and eager raises its own error (IndexError).

    ```mlir
    // Before
    %r = linalg.generic ... ins(%idx : tensor<3xi64>) outs(%e : tensor<3x4xf32>) {
    ^bb0(%i: i64, %o: f32):
      %ok = arith.cmpi slt, %i, %c10 : i64
      cf.assert %ok, "index must be smaller than dim size"
      ...
    // After
    %all = linalg.generic {iterator_types = ["reduction"]} ins(%idx : tensor<3xi64>)
        outs(%true : tensor<i1>) {
    ^bb0(%i: i64, %acc: i1):
      %ok = arith.cmpi slt, %i, %c10 : i64
      %and = arith.andi %acc, %ok : i1
      linalg.yield %and : i1
    }
    %holds = tensor.extract %all[] : tensor<i1>
    cf.assert %holds, "index must be smaller than dim size"
    %r = linalg.generic ... (no assertion)
    ```

    An assertion whose condition reads the op's outputs, or a loop no input it reads
    spans, stays where it is. Input and output: linalg-on-tensors.
  }];
  let dependentDialects = ["arith::ArithDialect", "cf::ControlFlowDialect",
                           "linalg::LinalgDialect", "tensor::TensorDialect"];
}

def DynoRemoveProvenAssertions : Pass<"dyno-remove-proven-assertions", "func::FuncOp"> {
  let summary = "Remove index checks that the values' ranges prove";
  let description = [{
    Bounds scalars and tensor elements (integer ranges by upstream's
    `InferIntRangeInterface`, float intervals rounded outward) and removes each
    `cf.assert` whose condition holds for every value in those bounds, with the check's
    own computation (a hoisted reduction and its extract). On a GPU each hoisted check
    costs two launches (the reduction, then the device-side assert); a mixture of
    experts gathers and scatters at indices that are sort positions, sort positions
    divided by k, and histogram bins of expert numbers, all provably in range.

    Bounds come from: constants (scalar and dense), `linalg.index` (below the loop's
    static size), `tensor.extract` and tensor reshapes and slices (their tensor's
    elements), linalg bodies (their yields, with outputs read by the body taken to a
    fixed point), `dyno.sort` (a permutation of its operands), `dyno.scatter` and
    `dyno.scan` (their combiner to a fixed point), `aten.sort`/`aten.topk` library calls
    (values of the input, positions below its largest size), integer ops through their
    range inference, and monotone float ops (conversions, add, subtract, multiply,
    divide by a range without zero, floor/ceil/trunc/round, min/max), each rounded
    outward and quotients widened by two units in the last place (a GPU's f32
    division). Anything else (function arguments, library results, transcendental
    functions) is unbounded: the checks of user-given indices stay.

    With the same bounds, a `arith.select` in a `linalg.generic` body whose condition
    the bounds decide becomes the operand it always picks: a negative index's
    wraparound (`i < 0 ? i + n : i`) of sort positions is gone from every kernel that
    reads them, and a generic that only wrapped them (Mixtral's inverse permutation: a
    kernel per layer) is an identity that canonicalization erases.

    ```mlir
    // Before: a gather at sort positions (dyno-hoist-kernel-assertions' form)
    %s:2 = dyno.library_call "aten.sort.stable"(%x) ... -> (tensor<8xi64>, tensor<8xi64>)
    %all = linalg.generic {iterator_types = ["reduction"]} ins(%s#1 : tensor<8xi64>)
        outs(%true : tensor<i1>) { ... 0 <= i < 8 ... }
    %holds = tensor.extract %all[] : tensor<i1>
    cf.assert %holds, "index out of range: dyno checks gather indices like eager"
    // After: no reduction, no assertion
    ```

    Input and output: linalg-on-tensors.
  }];
  let dependentDialects = ["arith::ArithDialect", "cf::ControlFlowDialect"];
}

def DynoCheckGatherBounds : Pass<"dyno-check-gather-bounds", "func::FuncOp"> {
  let summary = "Assert the bounds of reads at data-dependent indices";
  let description = [{
    A linalg body that reads another tensor (`tensor.extract`) at an index computed
    from input values (a gather: index_select, advanced indexing `w[idx]`) would read out
    of bounds where eager raises IndexError: torch-mlir 20261001 checks an embedding's
    indices but not these. This pass puts `cf.assert (0 <= index < size)` before each
    such read; `dyno-hoist-kernel-assertions` then checks it on the host before the op
    runs. Reads at indices computed from loop indices only (padding, slices) are in
    bounds by construction and get no check.

    A `dyno.scatter` writes at its indices: the pass checks them all in one reduction
    over the indices tensor (`0 <= index <= size - extent` per index column, where
    extent is the update slice's size along that dimension) and asserts the result on
    the host before the scatter, so that no kernel writes out of bounds.

    ```mlir
    // Before
    %i = arith.index_cast %in : i64 to index
    %v = tensor.extract %w[%i, %col] : tensor<10x4xf32>
    // After
    %i = arith.index_cast %in : i64 to index
    %d = tensor.dim %w, %c0 : tensor<10x4xf32>
    %ok = arith.andi (%i >= 0), (%i < %d)
    cf.assert %ok, "index out of range: ..."
    %v = tensor.extract %w[%i, %col] : tensor<10x4xf32>
    ```

    Input and output: linalg-on-tensors.
  }];
  let dependentDialects = ["arith::ArithDialect", "cf::ControlFlowDialect",
                           "tensor::TensorDialect"];
}

def DynoLibraryOperandLayouts : Pass<"dyno-library-operand-layouts", "func::FuncOp"> {
  let summary = "Kernels that feed library calls write in the order they read";
  let description = [{
    A library call (attention, LAPACK, FFTs: ATen routines on whole tensors) takes
    strided tensors. When only such calls read the result of an all-parallel
    `linalg.generic` (directly or through reshapes), the generic is rewritten to iterate
    in the order it reads its largest input (loops that input does not index placed
    after the loop before them) and to write its result in that order; the call reads a
    `linalg.transpose` of it, which stays a view on the host.

    Attention's q, k and v are the projections' rows split into heads and transposed,
    [batch, seq, heads, dim] read as [batch, heads, seq, dim]. A kernel that computes
    them (rotary embeddings, repeated grouped-query heads) then reads and writes rows of
    the projection contiguously, and the attention library returns its output in the
    same [batch, seq, heads, dim] order (its output follows q's layout), so the
    transpose back into the output projection's rows is a view as well: no copy kernel
    on either side of the call. torch.distributed's collectives are left alone (they
    are handed dense tensors).

    ```mlir
    // Before
    %q = linalg.generic {maps = [(b, h, s, d) -> (b, s, h, d), identity]} ins(%p) ...
        -> tensor<2x4x8x16xbf16>
    %o = dyno.library_call "aten.scaled_dot_product_attention.default"(%q, ...)
    // After
    %r = linalg.generic {maps = [identity, identity]} ins(%p) ... -> tensor<2x8x4x16xbf16>
    %q = linalg.transpose ins(%r) ... permutation = [0, 2, 1, 3]
    %o = dyno.library_call "aten.scaled_dot_product_attention.default"(%q, ...)
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def DynoSortPrefixes : Pass<"dyno-sort-prefixes", "func::FuncOp"> {
  let summary = "Sort only the leading elements that a sort's users read (topk)";
  let description = [{
    torch-mlir lowers topk(k) to a sort of whole lines followed by slices of their first
    k elements. When every user of a `dyno.sort` is an `tensor.extract_slice` with static
    offset, size and stride along the sorted dimension, this pass sets the sort's
    `prefix` to the number of leading elements they read; `dyno-lower-scans-scatters-sorts`
    then selects those (an insertion into a sorted prefix, O(n) comparisons for small
    k) instead of sorting every line.

    ```mlir
    // Before
    %s:2 = dyno.sort dimension(1) outs(%v, %i : tensor<3x1000xf32>, tensor<3x1000xi64>) {...}
    %top = tensor.extract_slice %s#0[0, 0] [3, 8] [1, 1]
    // After
    %s:2 = dyno.sort dimension(1) prefix(8) outs(...) {...}
    ```
  }];
}

def DynoScatterAddsAsReductions : Pass<"dyno-scatter-adds-as-reductions", "func::FuncOp"> {
  let summary = "Scatter-adds into a few elements (histograms) as one-row-per-element sums";
  let description = [{
    torch.histc, bincount and a mixture-of-experts router's count of tokens per expert
    are `dyno.scatter`s that add thousands of updates into a handful of elements. On a
    GPU each update is an atomic add on one of those few addresses (Mixtral's router: 10
    us per layer on an H200 where Inductor's histogram kernel takes 1.6), and the
    scatter is a kernel of its own after the kernel that computes its indices and the
    one that fills its destination. This pass rewrites such a scatter as a reduction
    with one row per destination element: row d adds the updates whose index is d (the
    others add the identity, -0.0 for floats). The index producer then fuses into the
    reduction, the destination's initial value is the reduction's, and a slice of the
    result (histc's overflow bin dropped) becomes the rows computed.

    Applies to a 1-D static destination of at most `max-destination-elements` elements
    (after the slice), float32/float64 or integer, one index per update, at most
    `max-updates` updates, a region `original + f(update)`. The Triton target enables it
    (dyno-kernel-formation-pipeline's `scatter-adds-as-reductions`); on a CPU the
    sequential scatter is already one pass over the updates.

    ```mlir
    // Before
    %h = dyno.scatter dimension_map([0]) unique_indices(false)
        ins(%ones, %bins : tensor<4096x1xf32>, tensor<4096x1xi64>) outs(%zeros : tensor<5xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %o, %u : f32
      dyno.yield %s : f32
    } -> tensor<5xf32>
    %r = tensor.extract_slice %h[0] [4] [1] : tensor<5xf32> to tensor<4xf32>
    // After
    %z = tensor.extract_slice %zeros[0] [4] [1] : tensor<5xf32> to tensor<4xf32>
    %r = linalg.generic {maps = [(d, n) -> (n, 0), (d, n) -> (n, 0), (d, n) -> (d)],
                         iterator_types = ["parallel", "reduction"]}
        ins(%ones, %bins) outs(%z) {
      // acc + (index_cast(bin) == d ? u : -0.0)
    } -> tensor<4xf32>
    ```
  }];
  let options = [
    Option<"maxDestinationElements", "max-destination-elements", "int64_t", "64",
           "Largest destination (elements, after a slice of the result) rewritten: each "
           "update is compared with every destination element">,
    Option<"maxUpdates", "max-updates", "int64_t", "65536",
           "Most updates a rewritten scatter may have (each destination row reads them all)">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
}

def DynoRowBiasIntoMatmuls : Pass<"dyno-row-bias-into-matmuls", "func::FuncOp"> {
  let summary = "An f32 matmul's row bias becomes its accumulator where no kernel reads the sum";
  let description = [{
    torch-mlir writes `addmm(bias, A, B)` as a matmul into zeros and an elementwise add
    of the bias on every row. Kernel formation fuses that add into the kernels that read
    the product; where only library calls read the sum, through views (GPT-2's fused QKV
    sliced into attention's q, k and v; Swin's and BERT's q, k and v reshaped into
    heads), the bias is added in kernels of their own, one per slice. With this pass a
    float32 matmul whose only reader is such an add, and whose sum only library calls
    (contractions, `dyno.library_call`) and the function's result read through reshapes,
    slices and transposes, accumulates into the broadcast bias instead, and
    dyno-form-kernels calls addmm with the bias vector: cuBLAS adds it in the product's
    epilogue, rounding once as eager's addmm does. A sum that an elementwise kernel reads
    (a GELU, a residual add) keeps the plain product and its add in that kernel: cuBLAS's
    float32 products with a bias epilogue ran slower than plain ones on an H200, by more
    than a saved kernel (Inductor unfuses such an addmm too). (bf16/f16 matmuls always
    accumulate into their bias, in dyno-widen-low-precision-floats, for their rounding.)
    Both targets run it (`row-bias-in-library=true` of the kernel-formation pipeline).
    On the CPU, MKL's addmm copies the bias into its output first, which a kernel that
    reads the sum and adds the bias saves; where no kernel reads it (a classifier's
    logits) addmm's copy replaces a kernel launch and its output tensor (SmallCNN, ViT,
    Swin: 1.5-8% per call, paired, AMD Zen 4).

    ```mlir
    // Before
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>)
    %m = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z)
    %r = linalg.generic {maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1), id]}
           ins(%m, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e) { addf }
    // After
    %rows = linalg.generic {maps = [(d0, d1) -> (d1), id]} ins(%bias) outs(%e) { yield }
    %r = linalg.matmul ins(%a, %b) outs(%rows)
    ```

    Input and output: linalg-on-tensors (before fusion).
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def DynoChannelsLastConvolutions : Pass<"dyno-channels-last-convolutions", "ModuleOp"> {
  let summary = "Kernels read and write convolutions' tensors in channels-last order";
  let description = [{
    After `dyno-form-kernels` (both targets' lowering pipelines run it first). For each
    `dyno.contraction "conv2d"` of a type listed in `element-types` (the runtime runs
    those channels-last: the CPU's oneDNN in bf16/f16, cuDNN on GPUs), with static
    shapes: kernels
    reading its result take an NHWC host view of it (`linalg.transpose`, a `permute`
    that copies nothing) through maps permuted to (n, h, w, c); the kernel computing its
    input writes it NHWC through a permuted output map (when only convolutions, kernels
    and the return read it on the host), the convolution taking an NCHW view; inside
    such kernels, an NCHW intermediate that reaches other generics only through pads
    and slices (a max pool's padded window slices) is computed NHWC too, with the pads
    and slices permuted; and a generic given such maps has its channel loop moved
    innermost where most of its 4-d accesses end in it. With `copy-host-operands` (the
    CPU target), a graph input such a convolution reads as its input or filter, in an
    order channels-last memory does not already have (more than one channel and more
    than one pixel), is copied to NHWC by a kernel of its own launched before the
    convolution's first reader of it (a transposing loop; ATen's strided copy, which
    the runtime made otherwise, took 1.2x-3x as long), the convolution taking an NCHW
    view. Values are unchanged; the wrapper's two copies per convolution go. With
    `packed-host-filters` too (the CPU target's inference graphs, whose runtime keeps
    graph-input filters packed for oneDNN, `host_runtime.PackedWeights.conv2d`), only
    the input is copied: a filter stays as the graph takes it. See docs/CpuTarget.md,
    "Library calls in bf16/f16 (CPU)".

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
               "channels-last; none: the pass does nothing">,
    Option<"copyHostOperands", "copy-host-operands", "bool", /*default=*/"false",
           "Graph inputs such convolutions read (input, filter) are copied to NHWC by "
           "kernels of their own, not by the runtime">,
    Option<"packedHostFilters", "packed-host-filters", "bool", /*default=*/"false",
           "With copy-host-operands: filters that are graph inputs are not copied (the "
           "runtime packs them for its library)">
  ];
  let dependentDialects = ["func::FuncDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def DynoImportTorchMlirOutput : Pass<"dyno-import-torch-mlir-output", "ModuleOp"> {
  let summary = "Take torch-mlir's linalg output into Dyno's ops, or name what cannot be";
  let description = [{
    The first pass of `dyno-kernel-formation-pipeline`, on torch-mlir's output
    (`02-linalg.mlir`), which `dyno-opt` parses with `--allow-unregistered-dialect`
    (Dyno does not link torch-mlir's dialects):
    TMTensor's `tm_tensor.scan`, `scatter`, `sort` and `yield` become `dyno.scan`,
    `scatter`, `sort` and `yield`, which have the same operands, properties, attributes
    and regions (their verifiers run after the pass). Any other operation of an
    unregistered dialect is an error naming it: a torch op torch-mlir did not lower
    ("torch-mlir did not lower 'torch.aten.foo' to linalg"), a TMTensor op Dyno has no
    counterpart for (`tm_tensor.topk`), anything else. After it, every operation is one
    Dyno's context knows, so the graph's text is parsed once, by the process that
    compiles it (the Python process reads none of it).

    ```mlir
    // Before
    %r:2 = "tm_tensor.scan"(%x, %out, %acc) <{dimension = 1 : i64, inclusive = true,
        operandSegmentSizes = array<i32: 1, 2>}> ({
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      "tm_tensor.yield"(%s) : (f32) -> ()
    }) : (...) -> (...)
    // After
    %r:2 = "dyno.scan"(%x, %out, %acc) <{...}> ({ ... "dyno.yield"(%s) ... })
    ```
  }];
  let dependentDialects = ["dyno::DynoDialect"];
}

def DynoWriteIR : Pass<"dyno-write-ir"> {
  let summary = "Write the IR as it is at this point of a pipeline to a file";
  let description = [{
    Prints the operation the pass runs on (normally the top-level module, with its
    resources) to `file`, as `dyno-opt -o` would, and changes nothing. The compiler
    runs all of Dyno's passes for a graph in one `dyno-opt` process
    (`dyno-kernel-formation-pipeline`, this pass, then a target's lowering pipeline):
    the host schedule and kernels that kernel formation made are still written out
    (`03-kernels.mlir`), a stage's dump and the input of a narrower reproducer, without
    a second process parsing them again.

    ```
    dyno-opt --pass-pipeline="builtin.module(dyno-kernel-formation-pipeline,
        dyno-write-ir{file=03-kernels.mlir},dyno-cpu-lowering-pipeline)" 02-linalg.mlir
    ```

    A file that cannot be opened is an error (the pass fails).
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "The file to write (overwritten)">
  ];
}

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_PASSES_TD
