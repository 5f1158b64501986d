//===- Pipelines.cpp - Dyno's named pass pipelines --------------*- C++ -*-===//
#include "dyno/Pipelines/Pipelines.h"

#include "dyno/Dialect/Dyno/Transforms/Passes.h"
#include "dyno/Target/Cpu/Passes.h"
#include "dyno/Target/Triton/Passes.h"
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

void dyno::buildKernelFormationPipeline(OpPassManager &pm,
                                        const KernelFormationOptions &options) {
  // torch-mlir's scans, scatters and sorts (TMTensor, parsed as unregistered ops) become
  // Dyno's; any op Dyno does not know is an error naming it.
  pm.addPass(createDynoImportTorchMlirOutput());
  // Before canonicalization acts on them: sizes a dynamic graph assumes, checked.
  pm.addNestedPass<func::FuncOp>(createDynoCheckStaticSizes());
  pm.addPass(createCanonicalizerPass());
  // No kernel computes (or is passed) a tensor with no elements.
  pm.addNestedPass<func::FuncOp>(createDynoFoldEmptyTensors());
  // Per-element index checks (torch-mlir's, and Dyno's for gathers): on GPUs checks of
  // the index in the kernels that read it (device assertions); otherwise, and where no
  // read is guarded, reductions asserted on the host before the ops.
  pm.addNestedPass<func::FuncOp>(createDynoCheckGatherBounds());
  if (options.assertionsInKernels)
    pm.addNestedPass<func::FuncOp>(createDynoKeepAssertionsInKernels());
  pm.addNestedPass<func::FuncOp>(createDynoHoistKernelAssertions());
  // Checks that the indices' ranges prove (sort positions, bins, loop indices) go.
  pm.addNestedPass<func::FuncOp>(createDynoRemoveProvenAssertions());
  // bf16/f16 bodies compute in f32 and round once per op, as eager does.
  pm.addNestedPass<func::FuncOp>(createDynoWidenLowPrecisionFloats());
  // A float32 addmm's bias that no kernel would read goes to the library with its
  // product (cuBLAS's epilogue; MKL's addmm, oneDNN's linear on the CPU).
  if (options.rowBiasInLibrary)
    pm.addNestedPass<func::FuncOp>(createDynoRowBiasIntoMatmuls());
  // Sizes of computed tensors in terms of the graph's inputs (dynamic shapes).
  pm.addPass(memref::createResolveShapedTypeResultDimsPass());
  // Keep-dim reductions write through (d0, 0) maps, which tiling cannot slice.
  pm.addNestedPass<func::FuncOp>(createLinalgFoldUnitExtentDimsPass());
  // GPUs: histograms sum their few bins as rows, not with atomics on the same addresses.
  if (options.scatterAddsAsReductions)
    pm.addNestedPass<func::FuncOp>(createDynoScatterAddsAsReductions());
  // Fuse elementwise chains (recomputing cheap producers) before partitioning.
  DynoFuseElementwiseOptions fusion;
  fusion.rotationsAsReads = options.rotationsAsReads;
  pm.addNestedPass<func::FuncOp>(createDynoFuseElementwise(fusion));
  // Returned results computed from shared intermediates: one generic, whose shared
  // producers then fuse in (CSE first: siblings read one tensor through equal reshapes).
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createDynoMergeSiblingGenerics());
  pm.addNestedPass<func::FuncOp>(createDynoFuseElementwise(fusion));
  // One division per element of a broadcast divisor, not per element of the loop.
  pm.addNestedPass<func::FuncOp>(createDynoMultiplyByReciprocals());
  // bf16/f16 values that stay inside a fused body are not rounded.
  pm.addNestedPass<func::FuncOp>(createDynoFoldFusedRoundings());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // topk: sort only the prefix its slices read.
  pm.addNestedPass<func::FuncOp>(createDynoSortPrefixes());
  // Kernels that only library calls read (attention's q, k, v) write in the order they
  // read; the calls take transposed views.
  pm.addNestedPass<func::FuncOp>(createDynoLibraryOperandLayouts());
  // Host schedule: library calls, views, and outlined kernels in module @kernels.
  pm.addPass(createDynoFormKernels(
      DynoFormKernelsOptions{options.convolutionBiasInLibrary.getValue()}));
}

void dyno::registerDynoPipelines() {
  PassPipelineRegistration<KernelFormationOptions>(
      "dyno-kernel-formation-pipeline",
      "Fuse and partition a linalg-on-tensors graph into a host schedule and kernels",
      [](OpPassManager &pm, const KernelFormationOptions &options) {
        buildKernelFormationPipeline(pm, options);
      });
  PassPipelineRegistration<LoweringPipelineOptions>(
      "dyno-cpu-lowering-pipeline",
      "Lower module @kernels to LLVM with OpenMP-parallel loops (bare-pointer ABI)",
      [](OpPassManager &pm, const LoweringPipelineOptions &options) {
        buildCpuLoweringPipeline(pm, options);
      });
  PassPipelineRegistration<LoweringPipelineOptions>(
      "dyno-cpu-pipeline", "The whole CPU path: kernel formation, then CPU lowering",
      [](OpPassManager &pm, const LoweringPipelineOptions &options) {
        // The CPU target's kernel formation (python/dyno/targets/cpu PASSES).
        KernelFormationOptions formation;
        formation.rowBiasInLibrary = true;
        buildKernelFormationPipeline(pm, formation);
        buildCpuLoweringPipeline(pm, options);
      });
  PassPipelineRegistration<LoweringPipelineOptions>(
      "dyno-triton-lowering-pipeline",
      "Lower module @kernels to Triton-level block programs (then dyno-translate "
      "--mlir-to-triton prints them)",
      [](OpPassManager &pm, const LoweringPipelineOptions &options) {
        buildTritonLoweringPipeline(pm, options);
      });
  PassPipelineRegistration<LoweringPipelineOptions>(
      "dyno-triton-pipeline",
      "The whole GPU path up to printing: kernel formation, then Triton lowering",
      [](OpPassManager &pm, const LoweringPipelineOptions &options) {
        KernelFormationOptions formation;
        formation.convolutionBiasInLibrary = false;
        formation.rowBiasInLibrary = true;
        formation.rotationsAsReads = true;
        formation.scatterAddsAsReductions = true;
        formation.assertionsInKernels = true;
        buildKernelFormationPipeline(pm, formation);
        buildTritonLoweringPipeline(pm, options);
      });
}
