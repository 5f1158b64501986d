//===- DynoOps.td - Dyno operations ------------------------*- tablegen -*-===//
#ifndef DYNO_DIALECT_DYNO_IR_DYNOOPS_TD
#define DYNO_DIALECT_DYNO_IR_DYNOOPS_TD

include "dyno/Dialect/Dyno/IR/DynoDialect.td"
include "mlir/IR/SymbolInterfaces.td"
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
    in order, one index per dynamic dimension (see `dyno-pass-sizes-as-arguments`).

    ```mlir
    %0 = dyno.launch @kernels::@kernel_0(%a, %b)
        : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    %1 = dyno.launch @kernels::@kernel_1(%x, %n) dims(%d0)
        : (tensor<?x16xf32>, i64) -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$callee,
                       Variadic<AnyTypeOf<[AnyRankedTensor, AnySignlessIntegerOrIndex]>>:$args,
                       Variadic<Index>:$dims);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $callee `(` $args `)` (`dims` `(` $dims^ `)`)? attr-dict `:` functional-type($args, $results)
  }];
  let hasVerifier = 1;
}

def Dyno_ExternOp : Dyno_Op<"extern", [Pure]> {
  let summary = "an operation run by a vendor library";
  let description = [{
    Computes `name` with a library (oneDNN/MKL on the CPU, cuBLAS/cuDNN on the GPU, reached
    through PyTorch). Dyno forms kernels around these calls; a template with a fused epilogue
    may replace one where it wins.

    | name           | operands                      | attributes                         |
    | -------------- | ----------------------------- | ---------------------------------- |
    | `matmul`       | A[m,k], B[k,n], C?[m,n]       |                                    |
    | `batch_matmul` | A[b,m,k], B[b,k,n], C?[b,m,n] |                                    |
    | `conv2d`       | X[n,c,h,w], W[f,c/g,kh,kw], bias?[f] | strides, padding, dilations, groups |

    When `C` is present the result is `C + A @ B`. `conv2d`'s optional third operand is a
    per-channel bias.

    ```mlir
    %0 = dyno.extern "matmul"(%a, %b) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Variadic<AnyRankedTensor>:$args,
                       OptionalAttr<DenseI64ArrayAttr>:$strides,
                       OptionalAttr<DenseI64ArrayAttr>:$padding,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       OptionalAttr<I64Attr>:$groups);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name `(` $args `)` attr-dict `:` functional-type($args, $result)
  }];
  let hasVerifier = 1;
}

#endif // DYNO_DIALECT_DYNO_IR_DYNOOPS_TD
