//===- KernelOutlining.h - Cloning ops into a kernel function ---*- C++ -*-===//
//
// Shared by kernel formation (dyno-form-kernels) and the passes that rewrite kernels
// and their launches (dyno-split-kernels-for-triton builds kernels from ops of another
// function; it and others find a kernel's launches).
//
//===----------------------------------------------------------------------===//
#ifndef DYNO_DIALECT_DYNO_TRANSFORMS_KERNELOUTLINING_H
#define DYNO_DIALECT_DYNO_TRANSFORMS_KERNELOUTLINING_H

#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dyno {

/// Clones `ops`, in order, to the end of `entry` (a kernel's entry block). A value they
/// use that is defined elsewhere is cloned with its defining op (recursively) when
/// `rematerialize` holds for that op, and otherwise becomes a new argument of `entry`;
/// `outerValues` receives, per new argument, the value it stands for.
void cloneIntoKernel(ArrayRef<Operation *> ops, Block *entry, IRMapping &mapping,
                     SmallVectorImpl<Value> &outerValues,
                     function_ref<bool(Operation *)> rematerialize);

/// The dynamic sizes of `tensors`, in order, as `tensor.dim`s created at `builder`'s
/// insertion point and resolved through the shapes ops reify (down to arguments' sizes
/// and the scalars that size `tensor.empty`s). `alsoResolve` (other `tensor.dim`s) are
/// resolved on the way. A size that cannot be resolved stays a `tensor.dim`.
SmallVector<Value> resolvedDynamicSizes(OpBuilder &builder, ArrayRef<Value> tensors,
                                        ArrayRef<Operation *> alsoResolve = {});

/// The `dyno.launch`es in `module` (host functions) that run `kernel`.
SmallVector<LaunchOp> launchesOf(ModuleOp module, func::FuncOp kernel);

} // namespace mlir::dyno

#endif // DYNO_DIALECT_DYNO_TRANSFORMS_KERNELOUTLINING_H
