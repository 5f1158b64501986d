//===- NumericsPasses.td - Dyno's passes on how floats are computed -*- tablegen -*-===//
//
// Included by Passes.td: the passes that decide how float arithmetic is done (long
// sums' blocks, low precisions computed in f32 and rounded as eager rounds, math
// approximations, reciprocals). Passes.td holds the rest (kernel formation, checks,
// layouts, library calls).
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_NUMERICSPASSES_TD
#define DYNO_DIALECT_DYNO_TRANSFORMS_NUMERICSPASSES_TD

include "mlir/Pass/PassBase.td"

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
    benchmarks/experiments/accuracy_cost.py).

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
    f32 by the 16-bit shift it is. f64 goes through f32, as eager's
    `static_cast<BFloat16>(double)` does: rounded to f32, then to bf16 (two roundings
    to nearest, eager's bits); widened to f32 exactly, then extended. (LLVM lowers
    f64 -> bf16 to compiler-rt's `__truncdfbf2`, which GCC 12's libgcc lacks: on AMD
    Zen 4 the kernels of a bf16 cumsum, whose long sums keep f64 partials, did not
    load.) The CPU target runs it (the rounding costs a few
    vectorized integer operations per stored element); the Triton target does not:
    a GPU's `cvt.rn.bf16.f32` rounds as eager does in one instruction, and the Triton
    runtime makes the interpreter's casts exact.

    A narrowing whose f32 operand is a bf16 value already (a widened bf16, a constant
    whose low 16 bits are zero, or a select, max/min, negation or absolute value of
    such values: a ReLU, clamp or max pool of bf16 values) takes the upper 16 bits
    without rounding, which would change nothing (a NaN keeps its bits, unquieted).
    ResNet's bf16 stem (batch norm, ReLU, 3x3 max pool) rounded twice per element
    before the pool and once per pooled element.

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

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_NUMERICSPASSES_TD
