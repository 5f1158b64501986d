//===- DynoOps.td - Dyno operations ------------------------*- tablegen -*-===//
#ifndef DYNO_DIALECT_DYNO_IR_DYNOOPS_TD
#define DYNO_DIALECT_DYNO_IR_DYNOOPS_TD

include "dyno/Dialect/Dyno/IR/DynoDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Dyno_LaunchOp : Dyno_Op<"launch", [
    AttrSizedOperandSegments, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs a Dyno-generated kernel";
  let description = [{
    Runs the kernel `callee` (a function in the nested `module @kernels`) on `args` and
    returns fresh tensors. The runtime allocates one contiguous buffer per result and passes
    the arguments and the results' buffers to the kernel, in that order. `args` are
    tensors or scalars (integers and indices, e.g. a symbolic size of the graph).

    A result with dynamic dimensions takes its sizes from `dims`, one index per `?` of the
    result types, in order: the runtime allocates before it launches.

    Before lowering, the callee is a `func.func` on tensors whose signature matches the
    launch. After CPU lowering it is an `llvm.func` taking one pointer per tensor argument
    and result, the scalars in their places, and then, for every tensor argument and result
    in order, one index per dynamic dimension (see `dyno-pass-sizes-as-arguments`). This
    launch ABI is declared once, in `dyno/Dialect/Dyno/IR/LaunchAbi.h`, for both targets.

    `initial_values`, where present, names per result the argument (its position in
    `args`, of the result's type) whose contents the result starts with, or -1 for an
    uninitialized buffer: a Triton scatter updates a copy of its original in place.

    ```mlir
    %0 = dyno.launch @kernels::@kernel_0(%a, %b)
        : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    %1 = dyno.launch @kernels::@kernel_1(%x, %n) dims(%d0)
        : (tensor<?x16xf32>, i64) -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$callee,
                       Variadic<AnyTypeOf<[AnyRankedTensor, AnySignlessIntegerOrIndex]>>:$args,
                       Variadic<Index>:$dims,
                       OptionalAttr<DenseI64ArrayAttr>:$initial_values);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $callee `(` $args `)` (`dims` `(` $dims^ `)`)? attr-dict `:` functional-type($args, $results)
  }];
  let hasVerifier = 1;
}

def Dyno_LibraryCallOp : Dyno_Op<"library_call"> {
  let summary = "an ATen routine (LAPACK, pocketfft...) called on whole tensors";
  let description = [{
    Calls the ATen operator `name` (an overload, e.g. `aten.linalg_cholesky_ex.default`)
    through PyTorch on the host, as the wrapper calls `dyno.contraction`'s libraries: for the
    linear algebra and long FFTs that PyTorch reaches through LAPACK and pocketfft, which
    Dyno calls rather than reimplements; and torch.distributed's functional collectives
    (`_c10d_functional.all_reduce.default`, ..., `_c10d_functional.wait_tensor.default`),
    which start where the call is and complete at the wait. `arguments` are the call's arguments in order:
    `unit` stands for the next tensor operand; booleans, integers, floats, strings and
    `array<i64: ...>` are passed as such; the type `none` is Python's None. The results
    are the operator's tensor results, with the strides the library gives them.

    Not pure: a call may raise (aten._linalg_check_errors has no result at all).

    ```mlir
    %l, %info = dyno.library_call "aten.linalg_cholesky_ex.default"(%a)
        {arguments = [unit, false, false]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
    ```
  }];
  let arguments = (ins StrAttr:$name, Variadic<AnyRankedTensor>:$args, ArrayAttr:$arguments);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $name `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// A torch.distributed functional collective (handed dense tensors); every other
    /// call is an ATen routine, which takes strided tensors as eager does.
    bool isCollective() { return getName().starts_with("_c10d_functional."); }
  }];
}

def Dyno_ContractionOp : Dyno_Op<"contraction", [Pure]> {
  let summary = "a matrix product or convolution computed by a vendor library";
  let description = [{
    Computes the contraction `name` with a library (oneDNN/MKL on the CPU, cuBLAS/cuDNN on
    the GPU, reached through PyTorch). Dyno forms kernels around these calls; a template
    with a fused epilogue may replace one where it wins.

    | name           | operands                      | attributes                         |
    | -------------- | ----------------------------- | ---------------------------------- |
    | `matmul`       | A[m,k], B[k,n], C?[m,n]       |                                    |
    | `batch_matmul` | A[b,m,k], B[b,k,n], C?[b,m,n] |                                    |
    | `conv2d`       | X[n,c,h,w], W[f,c/g,kh,kw], bias?[f] | strides, padding, dilations, groups |

    When `C` is present the result is `C + A @ B`. `conv2d`'s optional third operand is a
    per-channel bias.

    `epilogue` (`matmul` only, with no `C` or a bias `C[n]`) applies an activation to the
    accumulator before it is rounded to the result type, in the library's GEMM
    (`dyno-fuse-matmul-epilogues` sets it on bf16 calls): `"gelu"` is GELU with erf,
    `0.5 x (1 + erf(x / sqrt 2))`.

    ```mlir
    %0 = dyno.contraction "matmul"(%a, %b) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Variadic<AnyRankedTensor>:$args,
                       OptionalAttr<DenseI64ArrayAttr>:$strides,
                       OptionalAttr<DenseI64ArrayAttr>:$padding,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       OptionalAttr<I64Attr>:$groups,
                       OptionalAttr<StrAttr>:$epilogue);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name `(` $args `)` attr-dict `:` functional-type($args, $result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Scans, scatters and sorts
//===----------------------------------------------------------------------===//

// Operations whose elements depend on one another in order, which linalg cannot
// express. torch-mlir lowers cumsum/cumprod, scatter/index_put and sort/topk to its
// TMTensor dialect; the hand-off (`dyno-import-torch-mlir-output`) turns
// `tm_tensor.scan|scatter|sort|yield` into these ops, which have the same operands,
// properties, attributes and region semantics. `dyno-lower-scans-scatters-sorts` lowers
// them to loops on the CPU target.

class Dyno_ScanScatterSortOp<string mnemonic, list<Trait> traits = []>
    : Dyno_Op<mnemonic, !listconcat(traits, [
        Pure, AttrSizedOperandSegments, SingleBlock,
        DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>])> {
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let hasVerifier = 1;
}

def Dyno_ScanOp : Dyno_ScanScatterSortOp<"scan"> {
  let summary = "an inclusive or exclusive scan along one dimension";
  let description = [{
    Scans `input` along `dimension` with the binary operation in the region, whose
    arguments are the previous output and the current input element:

    inclusive: `out[0] = in[0]`, `out[i] = f(out[i-1], in[i])`;
    exclusive: `out[0] = acc[...]`, `out[i] = f(out[i-1], in[i-1])`.

    `outputs` are the output (the input's shape) and the accumulator (the input's shape
    without `dimension`), which holds the last value of each scan on return (and the
    initial value of an exclusive scan). The results are the updated outputs.

    ```mlir
    %r:2 = dyno.scan dimension(1) inclusive(true)
        ins(%x : tensor<3x5xf32>) outs(%o, %acc : tensor<3x5xf32>, tensor<3xf32>) {
    ^bb0(%prev: f32, %in: f32):
      %s = arith.addf %prev, %in : f32
      dyno.yield %s : f32
    } -> tensor<3x5xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       Variadic<AnyRankedTensor>:$outputs,
                       I64Attr:$dimension, BoolAttr:$inclusive);
  let assemblyFormat = [{
    `dimension` `(` $dimension `)` `inclusive` `(` $inclusive `)`
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    $region attr-dict `->` type($results)
  }];
}

def Dyno_ScatterOp : Dyno_ScanScatterSortOp<"scatter"> {
  let summary = "combines update slices into a tensor at data-dependent indices";
  let description = [{
    `inputs` are `updates` (first dimension: one row per update) and `indices`
    (`N x depth` integers); `outputs` is the `original` tensor. For each position
    `(i, u...)` of `updates`, the trailing coordinates `u...` address the trailing
    dimensions of `original`; then for each `k < depth`, `indices[i, k]` is added to
    coordinate `dimension_map[k]` (or sets it, where no update dimension maps there).
    The region combines the update (first argument) with the current element (second)
    and its result is stored there, in order of `i`: repeated indices accumulate.
    An index outside `original` is undefined behaviour here;
    `dyno-check-gather-bounds` asserts the bounds on the host first.

    ```mlir
    %r = dyno.scatter dimension_map([0]) unique_indices(false)
        ins(%upd, %idx : tensor<4x1x3xf32>, tensor<4x1xi64>) outs(%orig : tensor<6x3xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %o, %u : f32
      dyno.yield %s : f32
    } -> tensor<6x3xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       Variadic<AnyRankedTensor>:$outputs,
                       DenseI64ArrayAttr:$dimension_map, BoolAttr:$unique_indices);
  let assemblyFormat = [{
    `dimension_map` `(` $dimension_map `)` `unique_indices` `(` $unique_indices `)`
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    $region attr-dict `->` type($results)
  }];
  let extraClassDeclaration = [{
    Value getUpdates() { return getInputs()[0]; }
    Value getIndices() { return getInputs()[1]; }
    Value getOriginal() { return getOutputs()[0]; }
  }];
}

def Dyno_SortOp : Dyno_ScanScatterSortOp<"sort"> {
  let summary = "sorts tensors together along one dimension";
  let description = [{
    Sorts every `outputs` tensor (all of one shape) along `dimension`, in place, by the
    comparator in the region: it takes two elements of every output (`a0, b0, a1, b1,
    ...`) and yields whether `a` may precede `b`. The sort is stable. Ordered float
    comparisons (`ole`, `olt` ascending; `oge`, `ogt` descending) order NaN as eager
    does, as the largest value.

    With `prefix(k)`, only the first k elements of each line are its k first in sorted
    order (what topk reads); the rest of the line is unspecified.

    ```mlir
    %r:2 = dyno.sort dimension(1) outs(%v, %i : tensor<3x7xf32>, tensor<3x7xi64>) {
    ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
      %le = arith.cmpf ole, %a, %b : f32
      dyno.yield %le : i1
    } -> tensor<3x7xf32>, tensor<3x7xi64>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       Variadic<AnyRankedTensor>:$outputs, I64Attr:$dimension,
                       OptionalAttr<I64Attr>:$prefix);
  let assemblyFormat = [{
    `dimension` `(` $dimension `)` (`prefix` `(` $prefix^ `)`)?
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)` $region attr-dict `->` type($results)
  }];
}

def Dyno_YieldOp : Dyno_Op<"yield", [Pure, Terminator,
    ParentOneOf<["ScanOp", "ScatterOp", "SortOp"]>]> {
  let summary = "yields the value a scan, scatter or sort region computes";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

//===----------------------------------------------------------------------===//
// Checks inside kernels
//===----------------------------------------------------------------------===//

def Dyno_CheckOp : Dyno_Op<"check", [NoMemoryEffect,
    DeclareOpInterfaceMethods<ConditionallySpeculatable>,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a value that must satisfy a condition (an index in range)";
  let description = [{
    Returns `value`; where `condition` is false the program fails as eager's kernel
    would (a device-side assertion on a GPU, as eager's CUDA gathers assert their
    indices). `dyno-keep-assertions-in-kernels` attaches each per-element index check of
    a kernel body to the index it guards: the check lives exactly as long as the read
    that uses the index (fusion clones it with its reader, dead code elimination drops
    it with it) and costs no launch of its own. A check whose condition folds to true
    folds to its value. It has no memory effect (CSE merges equal checks, an unread one
    is dead) but is not speculatable: hoisted above the branch that guards it, it could
    fail where the program never reads the index.

    ```mlir
    %ok = arith.andi %nonNegative, %belowSize : i1
    %checked = dyno.check %index if %ok, "index out of range" : index
    %element = tensor.extract %table[%checked, %column] : tensor<50x8xf32>
    ```
  }];
  let arguments = (ins AnyType:$value, I1:$condition, StrAttr:$message);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$value `if` $condition `,` $message attr-dict `:` type($value)";
  let hasFolder = 1;
}

#endif // DYNO_DIALECT_DYNO_IR_DYNOOPS_TD
