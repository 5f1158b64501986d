//===- Pipelines.h - Dyno's named pass pipelines ----------------*- C++ -*-===//
#ifndef DYNO_PIPELINES_PIPELINES_H
#define DYNO_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dyno {

/// Options of the CPU and Triton lowering pipelines (`dyno-opt
/// --dyno-cpu-lowering-pipeline="block-long-sums=false"`).
struct LoweringPipelineOptions : public PassPipelineOptions<LoweringPipelineOptions> {
  PassOptions::Option<bool> blockLongSums{
      *this, "block-long-sums",
      llvm::cl::desc("Sum long float reductions in blocks (dyno-block-long-sums). Off only "
                     "to measure what the blocks cost: long sums then lose accuracy"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("CPU: the widest vectors (bits) LLVM vectorizes kernel loops with "
                     "(dyno-prefer-vector-width); 0: the CPU's default"),
      llvm::cl::init(0)};
  PassOptions::ListOption<std::string> channelsLastConvolutions{
      *this, "channels-last-convolutions",
      llvm::cl::desc("Element types (bf16, f16, f32) of the convolutions the runtime "
                     "runs channels-last; kernels then read and write their tensors in "
                     "that order (dyno-channels-last-convolutions)")};
  PassOptions::Option<bool> copyConvolutionOperands{
      *this, "copy-convolution-operands",
      llvm::cl::desc("CPU: graph inputs those convolutions read (the image, plain "
                     "filters) are copied channels-last by kernels, not by the runtime "
                     "(dyno-channels-last-convolutions' copy-host-operands)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> packConvolutionFilters{
      *this, "pack-convolution-filters",
      llvm::cl::desc("CPU: filters that are graph inputs stay as they are, not copied "
                     "channels-last by kernels: the runtime keeps them packed for oneDNN "
                     "(dyno-channels-last-convolutions' packed-host-filters)"),
      llvm::cl::init(false)};
};

/// Options of the kernel formation pipeline: what differs between the targets' libraries.
struct KernelFormationOptions : public PassPipelineOptions<KernelFormationOptions> {
  PassOptions::Option<bool> convolutionBiasInLibrary{
      *this, "convolution-bias-in-library",
      llvm::cl::desc("A convolution's bias is an operand of its library call (oneDNN); "
                     "false: the kernels that read its result add it (cuDNN adds a bias "
                     "in a kernel of its own)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> rowBiasInLibrary{
      *this, "row-bias-in-library",
      llvm::cl::desc("A float32 addmm's bias is an operand of its library call where "
                     "no kernel reads the sum (dyno-row-bias-into-matmuls: cuBLAS adds "
                     "it in the product's epilogue, MKL's addmm copies it into its "
                     "output first); false: kernels of their own add it"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> rotationsAsReads{
      *this, "rotations-as-reads",
      llvm::cl::desc("torch.roll's concats become reads at rotated indices that fuse into "
                     "their readers (dyno-fuse-elementwise's rotations-as-reads): the "
                     "Triton target, whose kernels cannot read a concat"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> scatterAddsAsReductions{
      *this, "scatter-adds-as-reductions",
      llvm::cl::desc("Scatter-adds into a few elements (histograms) become one-row-per-"
                     "element sums that their index producers fuse into "
                     "(dyno-scatter-adds-as-reductions): the Triton target, where each "
                     "update would be an atomic add on the same few addresses"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> assertionsInKernels{
      *this, "assertions-in-kernels",
      llvm::cl::desc("Per-element index checks stay in the kernels that read the index, "
                     "as device-side assertions (dyno-keep-assertions-in-kernels): the "
                     "Triton target, where a host check costs two launches per call; "
                     "false: a reduction asserted on the host before the op"),
      llvm::cl::init(false)};
};

/// linalg-on-tensors graph -> host schedule + `module @kernels` on tensors.
void buildKernelFormationPipeline(OpPassManager &pm,
                                  const KernelFormationOptions &options = {});

// The targets' lowering pipelines: buildCpuLoweringPipeline in dyno/Target/Cpu/Passes.h,
// buildTritonLoweringPipeline in dyno/Target/Triton/Passes.h.

/// Registers dyno-kernel-formation-pipeline, dyno-cpu-lowering-pipeline,
/// dyno-cpu-pipeline (the two in a row), dyno-triton-lowering-pipeline and
/// dyno-triton-pipeline.
void registerDynoPipelines();

} // namespace mlir::dyno

#endif // DYNO_PIPELINES_PIPELINES_H
