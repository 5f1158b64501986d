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

#endif // DYNO_DIALECT_TRITONLEVEL_IR_TRITONLEVELOPS_TD
