//===- TritonLevelOps.td - Dyno's Triton-level ops ---------*- tablegen -*-===//
#ifndef DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELOPS_TD
#define DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELOPS_TD

include "dyno/Dialect/TritonLevel/IR/TritonLevelDialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TL_PtrType : TL_Type<"Ptr", "ptr"> {
  let summary = "base pointer of a tensor in global memory";
  let description = [{
    A kernel argument: the address of element 0 of a contiguous tensor of
    `elementType`. Loads and stores add element offsets to it.
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def TL_IndexBlock : RankedTensorOf<[Index]>;
def TL_IndexOrBlock : AnyTypeOf<[Index, TL_IndexBlock]>;
def TL_MaskBlock : RankedTensorOf<[I1]>;

def TL_ProgramIdOp : TL_Op<"program_id", [Pure]> {
  let summary = "the program instance's position in the launch grid (tl.program_id)";
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs Index:$result);
  let assemblyFormat = "$axis attr-dict";
}

def TL_BlockSizeOp : TL_Op<"block_size", [Pure]> {
  let summary = "a block size of the kernel's configuration (a tl.constexpr parameter)";
  let arguments = (ins StrAttr:$name);
  let results = (outs Index:$result);
  let assemblyFormat = "$name attr-dict";
  let hasVerifier = 1;
}

def TL_RangeOp : TL_Op<"range", [Pure]> {
  let summary = "0 .. size-1 along one dimension of a block (tl.arange)";
  let description = [{
    `tl.arange(0, XBLOCK)` placed along dimension `dim` of a block of the result's rank,
    every other dimension being 1: in a rank-2 kernel, `tl.range "XBLOCK" along 0` is
    `tl.arange(0, XBLOCK)[:, None]`.

    ```mlir
    %r = tl.range "RBLOCK" along 1 : tensor<?x?xindex>
    ```
  }];
  let arguments = (ins StrAttr:$block, I64Attr:$dim);
  let results = (outs TL_IndexBlock:$result);
  let assemblyFormat = "$block `along` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TL_FullOp : TL_Op<"full", [Pure]> {
  let summary = "a block of the given block sizes filled with a scalar (tl.full)";
  let description = [{
    `shape` names a block size (`XBLOCK`, `RBLOCK`) or `1` per dimension.

    ```mlir
    %acc = tl.full %zero ["XBLOCK", "RBLOCK"] : f32 -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyType:$value, StrArrayAttr:$shape);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$value $shape attr-dict `:` type($value) `->` type($result)";
  let hasVerifier = 1;
}

def TL_SplatOp : TL_Op<"splat", [Pure]> {
  let summary = "a scalar used as a block operand";
  let description = [{
    Gives a scalar a block type so that it can meet blocks in arith and math ops;
    Triton broadcasts scalars itself, so the printer prints the scalar.
  }];
  let arguments = (ins AnyTypeOf<[AnyFloat, AnySignlessInteger, Index]>:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `->` type($result)";
  let hasVerifier = 1;
}

def TL_LoadOp : TL_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "a masked gather from a pointer and element offsets (tl.load)";
  let description = [{
    Reads `ptr[offsets]` for every lane of `offsets` (a block, or a scalar for a single
    element). Lanes whose `mask` is false read 0 and touch no memory.

    ```mlir
    %x = tl.load %in[%offsets] mask %m : !tl.ptr<f32>, tensor<?x?xindex>, tensor<?x?xi1> -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins TL_PtrType:$ptr, TL_IndexOrBlock:$offsets, Optional<TL_MaskBlock>:$mask);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $ptr `[` $offsets `]` (`mask` $mask^)? attr-dict `:` qualified(type($ptr)) `,`
    type($offsets) (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def TL_StoreOp : TL_Op<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "a masked scatter to a pointer and element offsets (tl.store)";
  let description = [{
    Writes `value` (a block that broadcasts to the offsets' shape, or a scalar) to
    `ptr[offsets]` where `mask` is true.
  }];
  let arguments = (ins TL_PtrType:$ptr, TL_IndexOrBlock:$offsets, AnyType:$value,
                       Optional<TL_MaskBlock>:$mask);
  let assemblyFormat = [{
    $value `,` $ptr `[` $offsets `]` (`mask` $mask^)? attr-dict `:` type($value) `,`
    qualified(type($ptr)) `,` type($offsets) (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def TL_ReduceOp : TL_Op<"reduce", [Pure, SameOperandsAndResultType]> {
  let summary = "reduction of a block along one dimension, keeping it as size 1";
  let description = [{
    `kind` is one of `sum`, `prod`, `max`, `min` (NaN-propagating, as
    `arith.maximumf`/`minimumf` and ATen's amax), `maxnum`, `minnum` (NaN-ignoring),
    `maxsi`, `minsi`, `maxui`, `minui`, `and`, `or`, `xor`.

    ```mlir
    %s = tl.reduce sum %x along 1 : tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, StrAttr:$kind, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$kind $input `along` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def TL_PickReduceOp : TL_Op<"pick_reduce", [Pure, AllTypesMatch<["value", "pickedValue"]>,
                                            AllTypesMatch<["position", "pickedPosition"]>]> {
  let summary = "each row's extremum and its first (or last) position, in one reduction";
  let description = [{
    Reduces (value, position) pairs along `axis` to the row's maximum (`kind` "max") or
    minimum ("min") and the smallest (`first`) or largest position holding it, with one
    combine function, instead of a reduction for the extremum and another for its
    position. Lanes without a candidate hold the extremum's identity and a position that
    loses every tie (int64 max for `first`, -1 otherwise). Values are never NaN (a pick
    reduction leaves NaN out of its lanes).

    ```mlir
    %v, %p = tl.pick_reduce "max" first %values, %positions along 1 : tensor<?x?xf32>, tensor<?x?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value, AnyRankedTensor:$position, StrAttr:$kind,
                       UnitAttr:$first, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$pickedValue, AnyRankedTensor:$pickedPosition);
  let assemblyFormat = [{
    $kind (`first` $first^)? $value `,` $position `along` $axis attr-dict `:` type($value) `,`
    type($position)
  }];
  let hasVerifier = 1;
}

def TL_AssertOp : TL_Op<"assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "a device-side assertion (tl.device_assert)";
  let description = [{
    Fails the launch (a device-side assertion, as eager's CUDA kernels assert their
    indices) where `condition` is false and `mask` (the lanes in the iteration space)
    is true. Kernels with an assertion compile in Triton's debug mode, without its
    integer overflow checks (as Inductor compiles its kernels).

    ```mlir
    tl.assert %inBounds mask %xmask, "index out of range" : tensor<?xi1>, tensor<?xi1>
    ```
  }];
  let arguments = (ins AnyTypeOf<[I1, TL_MaskBlock]>:$condition,
                       Optional<TL_MaskBlock>:$mask, StrAttr:$message);
  let assemblyFormat = [{
    $condition (`mask` $mask^)? `,` $message attr-dict `:` type($condition)
    (`,` type($mask)^)?
  }];
}

def TL_AnyOp : TL_Op<"any", [Pure]> {
  let summary = "whether any element of a mask block is set (a scalar)";
  let description = [{
    The condition of a block-level `scf.while` that runs a per-element loop (an
    `scf.while` in an elementwise body): the block loops while any lane still does.

    ```mlir
    %go = tl.any %mask : tensor<?xi1>
    ```
  }];
  let arguments = (ins TL_MaskBlock:$mask);
  let results = (outs I1:$result);
  let assemblyFormat = "$mask attr-dict `:` type($mask)";
}

def TL_ScanOp : TL_Op<"scan", [Pure, SameOperandsAndResultType]> {
  let summary = "inclusive prefix scan of a block along one dimension (tl.associative_scan)";
  let description = [{
    `kind` is `sum`, `prod`, `maxsi` or `minsi`, or `combine` with a `combiner` region
    (two scalar arguments, the running value and the next element, and a `tl.yield` of
    the combined value; it must be associative, as cummax's "the later of the larger,
    NaN first" is): element `i` of the result combines elements `0..i` of the input along
    `axis`, in order.

    ```mlir
    %s = tl.scan sum %x along 1 : tensor<?x?xf64>
    %m = tl.scan combine %x along 1 {
    ^bb0(%prev: f32, %next: f32):
      %r = arith.maximumf %prev, %next : f32
      tl.yield %r : f32
    } : tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, StrAttr:$kind, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region AnyRegion:$combiner);
  let assemblyFormat = "$kind $input `along` $axis ($combiner^)? attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def TL_YieldOp : TL_Op<"yield", [Pure, Terminator, HasParent<"ScanOp">]> {
  let summary = "yields the combined value of a tl.scan combiner";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def TL_SortOp : TL_Op<"sort", [Pure, SameOperandsAndResultType]> {
  let summary = "sorts a block of integers ascending along one dimension";
  let description = [{
    Printed as Dyno's bitonic sort of a 2-d block's rows (`_dyno_sort` in the kernels'
    prelude; Triton's own `tl.sort` cannot run in a kernel interpreted on its own). A
    sorting network is not stable and sorts one block. Stable
    sorts of values with their positions pack both into one integer key first (see
    `dyno-convert-scans-scatters-sorts-to-triton-level`).

    ```mlir
    %s = tl.sort %keys along 1 : tensor<?x?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `along` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def TL_AtomicOp : TL_Op<"atomic", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a masked atomic read-modify-write at element offsets (tl.atomic_add, ...)";
  let description = [{
    Combines `value` into `ptr[offsets]` with `kind` (`add`; `max`, `min` of integers,
    float32 and float64) atomically,
    lane by lane, where `mask` is true: lanes that hit one element all land.

    ```mlir
    tl.atomic add %v, %out[%offsets] mask %m : tensor<?xf32>, !tl.ptr<f32>, tensor<?xindex>, tensor<?xi1>
    ```
  }];
  let arguments = (ins StrAttr:$kind, TL_PtrType:$ptr, TL_IndexBlock:$offsets,
                       AnyRankedTensor:$value, Optional<TL_MaskBlock>:$mask);
  let assemblyFormat = [{
    $kind $value `,` $ptr `[` $offsets `]` (`mask` $mask^)? attr-dict `:` type($value) `,`
    qualified(type($ptr)) `,` type($offsets) (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

#endif // DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELOPS_TD
