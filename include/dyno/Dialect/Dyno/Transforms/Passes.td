//===- Passes.td - Dyno transformation passes --------------*- tablegen -*-===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_PASSES_TD
#define DYNO_DIALECT_DYNO_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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

def DynoMultiplyByReciprocals : Pass<"dyno-multiply-by-reciprocals", "func::FuncOp"> {
  let summary = "Divide by a broadcast divisor as one reciprocal and many multiplications";
  let description = [{
    In a `linalg.generic` that reads an f32 or f64 operand through a broadcasting indexing map
    (softmax's `x / sum(x)`, a normalization by per-row statistics) and uses it only as a
    divisor, every element of that operand divides `min-reuse` or more elements.
    This pass computes the operand's reciprocals once, in a new elementwise
    `linalg.generic`, and replaces the divisions by multiplications with them. A vector
    division costs about ten multiplications; LLVM does not hoist the reciprocal out
    of the loop itself. Eager PyTorch's softmax also multiplies by `1 / sum`. The result
    differs from the quotient by at most one more rounding (about 1 ulp).

    Runs after `dyno-fuse-elementwise`, so that the reciprocals are not fused back into
    the loop; kernel formation puts them in the consumer's kernel, where tiling computes
    them once per row block.

    ```mlir
    // Before
    %y = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0), ...]}
        ins(%x, %sum : tensor<256x1024xf32>, tensor<256xf32>) ... {
      %q = arith.divf %in, %s : f32
    // After
    %r = linalg.generic ... ins(%sum : tensor<256xf32>) ... { arith.divf %one, %s }
    %y = linalg.generic ... ins(%x, %r : tensor<256x1024xf32>, tensor<256xf32>) ... {
      %q = arith.mulf %in, %r : f32
    ```

    Input and output: linalg-on-tensors.
  }];
  let options = [
    Option<"minReuse", "min-reuse", "unsigned", "8",
           "Fewest divisions by each element of the divisor for the rewrite to pay off "
           "(sizes not known statically always do)">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
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

def DynoApproximateMath : Pass<"dyno-approximate-math", "func::FuncOp"> {
  let summary = "Replace f32 transcendental math ops with vectorizable polynomials";
  let description = [{
    Applies upstream MLIR's polynomial approximations (exp, expm1, log, log1p, log2,
    tanh, atan, atan2, sin, cos, ...; accurate to a few ulp in f32) so that kernel loops
    contain only arithmetic and LLVM's loop vectorizer can vectorize them. Left alone,
    `math.erf` becomes a scalar libm call per element. f32 `erf` uses the rational
    approximation of Eigen, XLA and JAX instead: x clamped to [-4, 4], then
    `x * P(x^2) / Q(x^2)` (degrees 6 and 4), no exp and no select; 4.5e-7 maximal
    error (7.5 ulp) against float64 erf. Upstream's needs three rational polynomials,
    ATen's Abramowitz-Stegun formula an exp and a division; on the 256x1024 GELU this
    made the CPU kernel 2.4x faster (360 to 150 us on one thread) than the latter. An
    f32 `exp` marked `dyno.nonpositive_argument` (a softmax's, see
    dyno-relax-softmax-maximum) gets upstream's expansion without the clamps its
    argument never reaches (x <= 88.8, k <= 127): the same results, two vector
    instructions fewer per element.

    ```mlir
    // Before
    %y = math.erf %x : f32
    // After: arith.mulf / arith.addf / math.fma / bit casts, no call
    ```

    `ops=atan,log1p` approximates only the named ops (the Triton target keeps the
    ops Triton has natively, such as exp and erf, and approximates the others).

    Input and output: any IR with math ops on f32 scalars or vectors.
  }];
  let options = [
    ListOption<"opNames", "ops", "std::string",
               "Mnemonics of the math ops to approximate (all when empty)">
  ];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
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

def DynoBlockLongSums : Pass<"dyno-block-long-sums", "func::FuncOp"> {
  let summary = "Sum long float reductions in blocks, then the blocks' sums";
  let description = [{
    A float sum accumulated element after element loses about a bit per doubling of
    its length; on data with a large mean (values near 1e4) the accumulator's rounding
    stops being random once it is thousands of times the addends, and the error grows
    linearly: a sum of 1M such values was off by 1.8e-4 relative where eager (cascade
    summation) is off by 9e-8, and a variance by 4e1 (issue 19).

    This pass bounds the additions any one accumulator sees. A `linalg.generic` whose
    results are all float sums (`out + v`, `out` read nowhere else), with static
    extents, summing more than twice a block of elements per result element, becomes:
    - partial sums: the innermost reduction loops that fit in a block stay reductions,
      the next loop `k` (extent n) is split into (p, c), p parallel and c of
      block / inner elements (its inputs sliced to [0, p * c) and expanded), and the
      reduction loops outside `k` become parallel; the partials start from -0.0;
    - the tail [p * c, n) of `k`, summed by the original body into the original inits
      (when n is not a multiple of c);
    - the sum of the partials into the tail's results (or the inits).
    The partials' sum and the tail are blocked again while still too long, so every
    accumulator adds at most a block of values: the error grows with the logarithm of
    the length (base about a block), as eager's cascade does.

    A sum is blocked when it adds more than 8192 elements per result with the innermost
    loop a reduction (the CPU target vectorizes it into 8-64 accumulators, a Triton
    program into RBLOCK lanes), in blocks of 4096 elements, or more than 512 when not (a
    column sum: each addition goes to one accumulator), in blocks of 256. An f32 sum's
    blocks are shorter, 512 elements (32 values per AVX-512 lane) or 64, and its
    partials are added in f64 and rounded to f32 once: f32 partials of 4096-element blocks summed in
    f32 were less accurate than eager's cascade over millions of values, and
    accumulating every element in f64 halved the lanes (long rows took up to 1.74x).

    ```mlir
    // Before: a row of 10000
    %s = linalg.generic {["parallel", "reduction"]} ins(%x : tensor<4x10000xf32>)
           outs(%zero : tensor<4xf32>) { addf }
    // After: 19 blocks of 512 (p parallel, c reduction), a tail of 272, the blocks'
    // sum in f64 into the tail's sums widened, rounded once
    %main = tensor.extract_slice %x[0, 0] [4, 9728] [1, 1]
    %blocks = tensor.expand_shape %main [[0], [1, 2]] : tensor<4x19x512xf32>
    %partials = linalg.generic {["parallel", "parallel", "reduction"]} ins(%blocks)
                  outs(%negzero : tensor<4x19xf32>) { addf }
    %tail = linalg.generic {["parallel", "reduction"]} ins(%x[0, 9728] [4, 272])
              outs(%zero) { addf }
    %wide = <%tail extended to f64>
    %s64 = linalg.generic {["parallel", "reduction"]} ins(%partials) outs(%wide)
             { extf, addf : f64 }
    %s = <%s64 truncated to f32>
    ```

    With `expand-producers` (the CPU lowering), an all-parallel producer of the summed
    values that the sum reads whole (no tail) is computed in the blocks' shape as well,
    its other users reading it collapsed back: a softmax's exp then writes the block the
    partial sum reads, in the same loops after tiling (dyno-fuse-sibling-loops), instead
    of the row being written in one pass and read again for the partials in the next
    (a 16x262144 softmax took 1.25x its unblocked time, now 1.00x:
    benchmarks/accuracy_cost.py).

    With `dynamic-extents` (the CPU lowering), a row of symbolic length (one innermost
    reduction loop of dynamic extent) is blocked whatever its length turns out to be:
    n / block blocks (none for a short row), a tail of the rest, and the partials' sum
    blocked once more. Other dynamic reductions, and all
    of them without the option, are left as they are.

    Input and output: linalg-on-tensors (both lowerings run it on the kernels, before
    tiling and before Triton's split of full reductions).
  }];
  let options = [
    Option<"expandProducers", "expand-producers", "bool", "false",
           "Compute an all-parallel producer of a blocked sum in the blocks' shape">,
    Option<"dynamicExtents", "dynamic-extents", "bool", "false",
           "Block rows of symbolic length (the Triton target reads no dynamic reshape "
           "inside a kernel yet)">,
  ];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect",
                           "tensor::TensorDialect"];
}

def DynoExpandBf16Conversions : Pass<"dyno-expand-bf16-conversions", "func::FuncOp"> {
  let summary = "Convert between f32 and bf16 in integer arithmetic, as eager does";
  let description = [{
    Eager converts with integer arithmetic (c10::BFloat16) and keeps subnormals (bf16
    values below 1.2e-38). The targets' own conversions do not all do so:
    - on x86 CPUs with AVX512-BF16, LLVM lowers `fptrunc float to bfloat` to
      vcvtneps2bf16, which flushes subnormal inputs and results to zero whatever MXCSR
      says: a bf16 `x * 3` of 3e-39 returned 0 on the CPU target (eager: 9e-39), and
      copysign/nextafter/frexp of bf16 subnormals came out wrong;
    - Triton's interpreter (what CI runs) truncates instead of rounding to nearest even,
      and widens bf16 subnormals to wrong values (copysign of 3e-39 gave 3.7e-40).
    This pass replaces every `arith.truncf` from f32 to bf16 (scalar or vector) by
    `(bits + 0x7FFF + ((bits >> 16) & 1)) >> 16`, a NaN keeping its sign and upper
    payload, quieted (`(bits >> 16) | 0x40`; eager's scalar and vector conversions
    disagree on NaN bits, 0x7FC0 against 0xFFFF), and every `arith.extf` from bf16 to
    f32 by the 16-bit shift it is. The CPU target runs it (the rounding costs a few
    vectorized integer operations per stored element); the Triton target does not:
    a GPU's `cvt.rn.bf16.f32` rounds as eager does in one instruction, and the Triton
    runtime makes the interpreter's casts exact.

    ```mlir
    // Before
    %b = arith.truncf %x : f32 to bf16
    %y = arith.extf %b : bf16 to f32
    // After
    %bits = arith.bitcast %x : f32 to i32
    ... round to nearest even on %bits, a quieted NaN for a NaN ...
    %b = arith.bitcast %rounded : i16 to bf16
    %narrow = arith.bitcast %b : bf16 to i16
    %wide = arith.extui %narrow : i16 to i32
    %y = arith.bitcast (arith.shli %wide, 16) : i32 to f32
    ```

    Input and output: any IR with arith ops (both lowerings run it on the kernels'
    loops: the CPU before the conversion to LLVM, Triton before the conversion to its
    ops). Conversions from f64 and to f64 are left as they are.
  }];
  let dependentDialects = ["arith::ArithDialect"];
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
    The Triton target runs it (`row-bias-in-library=true` of the kernel-formation
    pipeline); the CPU target does not: MKL's addmm copies the bias into its output
    first, which the kernel that adds it instead saves.

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

def DynoWidenLowPrecisionFloats : Pass<"dyno-widen-low-precision-floats", "func::FuncOp"> {
  let summary = "Compute bf16/f16 linalg bodies in f32, rounding where eager rounds";
  let description = [{
    Eager PyTorch computes each bf16/f16 op in float32 (ATen's opmath type) and rounds
    its result once; reductions accumulate in float32. torch-mlir lowers such ops to
    bodies that compute in the low precision itself: every arithmetic op rounds, a sum
    accumulates in bf16, and Triton's GPU compiler rejects `tl.erf`/`tl.exp` of bf16
    blocks. This pass rewrites every linalg.generic that computes in bf16/f16:

    * low-precision block arguments widen (`arith.extf`) at entry; arithmetic,
      comparisons, selects and math ops compute in f32; yields of low-precision
      results narrow (`arith.truncf`), so each op's result is rounded once, as eager
      rounds it (after fusion the tensors between ops become a truncf/extf pair);
    * an explicit truncation to bf16/f16 (a `.to(torch.bfloat16)`) stays: the value is
      rounded, then used in f32;
    * a reduction whose accumulator is a low-precision init becomes a reduction into
      an f32 init (a constant fill refilled, anything else widened) followed by one
      rounding of the result (named reductions such as max pooling are generalized
      first; library contractions are not);
    * other ops (integer casts, index arithmetic) keep their types; bodies with nested
      regions are left alone;
    * a matmul or convolution whose operands are bf16/f16 tensors widened elementwise
      to f32 (torch-mlir's mm) reads the low-precision tensors directly (linalg
      contractions extend their inputs to the accumulator's type: the same values), so
      dyno-form-kernels calls the library in the low precision;
    * such a matmul into zeros followed by an add of a widened bf16/f16 bias on every
      row (torch-mlir's addmm) accumulates into the broadcast bias instead: the library
      call becomes addmm, which rounds once as eager's does (a separate add rounds the
      product and then the sum).

    ```mlir
    // Before
    %s = linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x32xbf16>) outs(%zero : tensor<4xbf16>) {
    ^bb0(%in: bf16, %acc: bf16):
      %0 = arith.addf %in, %acc : bf16
      linalg.yield %0 : bf16
    }
    // After
    %wide = linalg.fill ins(%cst : f32) outs(%e : tensor<4xf32>)
    %s32 = linalg.generic ... ins(%x : tensor<4x32xbf16>) outs(%wide : tensor<4xf32>) {
    ^bb0(%in: bf16, %acc: f32):
      %0 = arith.extf %in : bf16 to f32
      %1 = arith.addf %0, %acc : f32
      linalg.yield %1 : f32
    }
    %s = linalg.generic ... ins(%s32 : tensor<4xf32>) outs(%e2 : tensor<4xbf16>) { truncf }
    ```

    Input and output: linalg-on-tensors (both targets; before fusion).
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def DynoFoldFusedRoundings : Pass<"dyno-fold-fused-roundings", "func::FuncOp"> {
  let summary = "Keep bf16/f16 intermediates of a fused body in f32";
  let description = [{
    dyno-widen-low-precision-floats rounds every bf16/f16 op result (`arith.truncf`
    tagged `dyno.op_rounding`). After elementwise fusion a consumer in the same body
    widens that value again: `extf(truncf(x))` becomes `x`, so intermediates that never
    reach memory stay f32 (loads widen, stores narrow, as Inductor computes; eager rounds
    every op, a decomposed batch norm or GELU several times). An explicit cast in the
    program (`.to(torch.bfloat16)`) is not tagged and keeps its rounding.

    ```mlir
    // Before
    %t = arith.truncf %x {dyno.op_rounding} : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    %y = arith.mulf %w, %w : f32
    // After
    %y = arith.mulf %x, %x : f32
    ```

    Input and output: linalg-on-tensors, after fusion.
  }];
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
