//===- CpuLoweringPipeline.cpp - dyno-cpu-lowering-pipeline ----*- C++ -*-===//
//
// The CPU target's pass pipeline: module @kernels, formed by kernel formation, down to
// the LLVM dialect with OpenMP-parallel loops.
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Cpu/Passes.h"

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

void dyno::buildCpuLoweringPipeline(OpPassManager &pm,
                                    const LoweringPipelineOptions &options) {
  // A GELU after a bf16/f16 library matmul: the library's epilogue, not a kernel.
  pm.addPass(createDynoFuseMatmulEpilogues());
  // Kernels around bf16/f16 convolutions read and write channels-last tensors.
  if (!options.channelsLastConvolutions.empty()) {
    DynoChannelsLastConvolutionsOptions channelsLast;
    channelsLast.elementTypes = llvm::to_vector(options.channelsLastConvolutions);
    // The model's input and plain filters copied channels-last by kernels, not by
    // ATen's strided copy in the runtime.
    channelsLast.copyHostOperands = options.copyConvolutionOperands;
    // Filters the runtime keeps packed (inference graphs) stay as the graph takes them.
    channelsLast.packedHostFilters = options.packConvolutionFilters;
    pm.addPass(createDynoChannelsLastConvolutions(channelsLast));
  }
  // Kernels equal up to their names (a model's repeated layers) become one before they
  // are lowered (from here on each kernel is lowered on its own, whatever launches it):
  // a 12-layer GPT-2's 106 kernels are lowered as 16. Not earlier: the two passes above
  // change a kernel for its one launch (channels-last takes only a kernel launched once).
  pm.addPass(createDynoDeduplicateKernels());
  // Everything below runs on the nested `module @kernels`; the host function stays.
  OpPassManager &kernels = pm.nest<ModuleOp>();
  // A concatenation's reader split where its pieces meet; their producers fuse in.
  kernels.addNestedPass<func::FuncOp>(createDynoSplitAtConcatenations());
  // A pooling window's taps computed from what is under its pad (the batch norm's
  // input), so that fusion below makes the whole stem one loop.
  kernels.addNestedPass<func::FuncOp>(createDynoWindowTapsAsReads());
  kernels.addNestedPass<func::FuncOp>(createDynoFuseElementwise());
  // Scans, scatters and sorts: loops on tensors, bufferized in place below.
  kernels.addNestedPass<func::FuncOp>(createDynoLowerScansScattersSorts());
  // A softmax's row maximum only shifts exp's argument: one vmaxps instead of five.
  kernels.addNestedPass<func::FuncOp>(createDynoRelaxSoftmaxMaximum());
  // Long float sums as sums of blocks: errors grow as eager's cascade's (issue 19).
  // An all-parallel producer of a blocked sum (a softmax's exp) is computed in the
  // blocks' shape, so that it and the partial sums share loops after tiling; rows of
  // symbolic length are blocked too.
  DynoBlockLongSumsOptions blockSums;
  blockSums.expandProducers = true;
  blockSums.dynamicExtents = true;
  if (options.blockLongSums)
    kernels.addNestedPass<func::FuncOp>(createDynoBlockLongSums(blockSums));
  // Pads as generics that read their source in bounds: tiled below, not one thread's
  // fill and copy.
  kernels.addNestedPass<func::FuncOp>(createDynoPadsAsGenerics());
  // Row-block tiling with producer fusion: one scf.forall per kernel root.
  kernels.addPass(createDynoTileKernels());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  // A part computed into a fresh tensor and then inserted into a larger one (the parts of
  // a reader split at a concatenation) is computed in place, in its slice of the larger.
  kernels.addPass(bufferization::createEmptyTensorEliminationPass());
  // Tensors to buffers; kernel results become trailing out-parameters.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  kernels.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  kernels.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // A row block's intermediates (a few KiB) live on the stack instead of malloc/free per
  // block; scf-to-openmp scopes them per iteration (stacksave/stackrestore).
  bufferization::PromoteBuffersToStackPassOptions toStack;
  toStack.maxAllocSizeInBytes = 32 * 1024;
  toStack.maxRankOfAllocatedMemRef = 4;
  kernels.addNestedPass<func::FuncOp>(bufferization::createPromoteBuffersToStackPass(toStack));
  // Free the intermediates a kernel allocates (ownership-based deallocation).
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(kernels, deallocation);
  kernels.addPass(createCanonicalizerPass());
  // Copies into and out of strided views (pads, concatenations) as vectorized loops.
  kernels.addNestedPass<func::FuncOp>(createDynoStridedCopiesAsLoops());
  // Short innermost loops (16-wide image rows) merged with the loops around them where
  // the buffers are contiguous: one long loop for LLVM's vectorizer.
  kernels.addNestedPass<func::FuncOp>(createDynoCollapseShortInnerLoops());
  // Transposing loops in blocks of a cache line a side: each line read is used whole.
  kernels.addNestedPass<func::FuncOp>(createDynoBlockTransposes());
  // Loops: the forall over row blocks is the parallel loop, the rest is sequential.
  kernels.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // A producer's loop and its consumer's become one where their iterations line up.
  kernels.addNestedPass<func::FuncOp>(createDynoFuseSiblingLoops());
  // torch.bool is one byte per element; LLVM cannot store i1.
  kernels.addPass(createDynoWidenBoolMemrefs());
  // Dynamically shaped buffers: a bare pointer plus trailing size arguments.
  kernels.addPass(createDynoPassSizesAsArguments());
  // Polynomial erf/exp/tanh/... so that LLVM vectorizes the loops (no libm calls). Not
  // sin and cos: upstream's error grows with |x| (3e-5 at 1e3, 3e-3 at 1e5; eager 4e-8),
  // which rotary embeddings reach; they call libm.
  // Complex division, abs, exp, log... as real arithmetic (before the approximations,
  // which then cover its exp/log); complex.create/re/im and +,-,* go to LLVM below.
  kernels.addNestedPass<func::FuncOp>(createConvertComplexToStandardPass());
  DynoApproximateMathOptions cpuApproximations;
  cpuApproximations.opNames = {"exp",  "expm1", "log",  "log2", "log1p", "tanh", "erf",
                               "erfc", "atan",  "atan2", "asin", "acos",  "cbrt"};
  kernels.addNestedPass<func::FuncOp>(createDynoApproximateMath(cpuApproximations));
  // Reassociation lets LLVM vectorize reductions; NaN/Inf semantics stay exact.
  kernels.addNestedPass<func::FuncOp>(createDynoReassociateFloats());
  // f32 <-> bf16 in integer arithmetic: x86's vcvtneps2bf16 flushes subnormals.
  kernels.addNestedPass<func::FuncOp>(createDynoExpandBf16Conversions());
  // An innermost loop's branch on a condition of the outer loops (a channels-last pad's
  // "inside the source?") taken outside it: two straight-line loops LLVM vectorizes.
  kernels.addNestedPass<func::FuncOp>(createDynoUnswitchInnerLoops());
  // Short contiguous innermost loops (16 channels of a channels-last image) left rolled:
  // LLVM's loop vectorizer takes them whole where full unrolling would come first.
  kernels.addNestedPass<func::FuncOp>(createDynoVectorizeShortInnerLoops());
  kernels.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  kernels.addPass(createConvertSCFToOpenMPPass());
  kernels.addPass(createCanonicalizerPass());
  // To the LLVM dialect (finalize-memref-to-llvm must precede scf-to-cf, see DESIGN.md).
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createFinalizeMemRefToLLVMConversionPass());
  kernels.addPass(createConvertComplexToLLVMPass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createConvertMathToLibmPass());
  kernels.addPass(createArithToLLVMConversionPass());
  // Bare-pointer kernel signatures; before openmp-to-llvm, which would convert the
  // signatures itself with memref descriptors.
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  kernels.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  // 512-bit vectors where PyTorch uses them (LLVM's x86 tuning stops at 256).
  DynoPreferVectorWidthOptions vectors;
  vectors.width = options.vectorWidth;
  kernels.addPass(createDynoPreferVectorWidth(vectors));
  kernels.addPass(createConvertOpenMPToLLVMPass());
  kernels.addPass(createConvertControlFlowToLLVMPass());
  kernels.addPass(createUBToLLVMConversionPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // bf16 loaded, stored and selected as i16, compared widened: LLVM's vectorizer makes
  // no masked load or store of bfloat vectors, on which X86's code generator asserts for
  // AVX512-BF16 CPUs (issue 52). The canonicalizer folds the bitcast pairs.
  kernels.addPass(createDynoBf16AsI16());
  kernels.addPass(createCanonicalizerPass());
  // Kernels that lowered alike: compiled once.
  pm.addPass(createDynoDeduplicateKernels());
  // Each kernel buffer its own alias scope: LLVM hoists and vectorizes across them.
  pm.nest<ModuleOp>().addPass(createDynoMarkDistinctKernelBuffers());
  // Each kernel's key: the JIT shares compiled kernels across graphs by it.
  pm.addPass(createDynoKeyKernels());
}
