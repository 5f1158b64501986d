//===- TritonLoweringPipeline.cpp - dyno-triton-lowering-pipeline -*- C++ -*-===//
//
// The Triton target's pass pipeline: module @kernels, formed by kernel formation, to
// Triton-level block programs, which dyno-write-triton prints as Python.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Triton/Passes.h"

#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dyno::buildTritonLoweringPipeline(OpPassManager &pm,
                                       const LoweringPipelineOptions &options) {
  // Kernels around bf16/f16 convolutions read and write channels-last tensors: cuDNN runs
  // those convolutions NHWC (NCHW ones transpose in and out around every call).
  if (!options.channelsLastConvolutions.empty()) {
    DynoChannelsLastConvolutionsOptions channelsLast;
    channelsLast.elementTypes = llvm::to_vector(options.channelsLastConvolutions);
    pm.addPass(createDynoChannelsLastConvolutions(channelsLast));
  }
  // Long float sums as sums of blocks: errors grow as eager's cascade's (issue 19); the
  // blocks' partial sums are also several programs per long row.
  if (options.blockLongSums)
    pm.nest<ModuleOp>().addNestedPass<func::FuncOp>(createDynoBlockLongSums());
  // Fills, reductions and other named ops become linalg.generic, the one form lowered.
  pm.nest<ModuleOp>().addNestedPass<func::FuncOp>(createLinalgGeneralizeNamedOpsPass());
  // A reduction of a large tensor to one value runs as partials, then their reduction.
  pm.nest<ModuleOp>().addNestedPass<func::FuncOp>(createDynoSplitFullReductions());
  // Constant tensors of distinct elements are read from memory, passed by the host.
  pm.addPass(createDynoHoistKernelConstants());
  // Ops that meet through a reshape (a residual add, then a layer norm over its
  // flattened rows) share one index space: the readers' loops take the producer's shape.
  pm.addPass(createDynoExpandLoopsThroughReshapes());
  // A kernel whose ops need several index spaces becomes several kernels (host too).
  pm.addPass(createDynoSplitKernelsForTriton());
  // Everything below runs on the nested `module @kernels`; the host function stays.
  OpPassManager &kernels = pm.nest<ModuleOp>();
  kernels.addPass(createCanonicalizerPass());
  // Math Triton lacks: closed forms over exp/log (tanh, sinh, pow, ...) ...
  math::MathExpandOpsPassOptions expand;
  // (Rounding, hyperbolic functions and powf are printed as careful helpers instead:
  // upstream computes round as trunc(x + 0.5), which rounds 0.49999997 to 1, asinh(-1e4)
  // as -inf, sinh, tanh and atanh of 1e-8 as 0 and pow(-2, 3) as NaN. See
  // TranslateToTriton.cpp.)
  expand.opMnemonics = {"tan", "fpowi", "ctlz", "clampf"};
  kernels.addNestedPass<func::FuncOp>(math::createMathExpandOpsPass(expand));
  // ... and polynomials for the rest (exp, log, erf, sqrt, sin, cos stay native).
  DynoApproximateMathOptions approximate;
  approximate.opNames = {"atan", "atan2", "asin", "acos", "log1p", "expm1", "cbrt", "erfc"};
  kernels.addNestedPass<func::FuncOp>(createDynoApproximateMath(approximate));
  // f32 <-> bf16 stay casts: one `cvt.rn.bf16.f32` on the GPU (sm80 and later), which
  // rounds to nearest even and keeps subnormals as eager does; the runtime makes
  // Triton's interpreter cast the same way (triton/runtime.py, _round_casts_into_bf16).
  // (dyno-expand-bf16-conversions' integer rounding was ten ALU operations per stored
  // element: GPT-2's GELU kernel is bound by its arithmetic.)
  // One block program per kernel: scans, sorts and scatters, then linalg kernels.
  kernels.addPass(createDynoConvertScansScattersSortsToTritonLevel());
  kernels.addPass(createDynoConvertKernelsToTritonLevel());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  // Kernels equal up to their names (a model's repeated layers): compiled once.
  pm.addPass(createDynoDeduplicateKernels());
  // Each kernel's key, printed in the launch table: the runtime shares launchers by it.
  pm.addPass(createDynoKeyKernels());
}
