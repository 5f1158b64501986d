//===- ChannelsLastConvolutions.cpp - Kernels in the convolutions' layout -*- C++ -*-===//
//
// The runtimes run bf16/f16 convolutions on channels-last tensors (oneDNN's NCHW path is
// 1.2x-3.4x slower on CPUs; cuDNN's NCHW bf16 convolutions transpose to NHWC and back
// around every call on GPUs), so a convolution's result is channels-last in memory and its
// input is copied to channels-last before the call. Kernels, which read and write
// contiguous NCHW tensors, paid two copies per convolution: the result to NCHW before a
// kernel read it, the kernel's result to channels-last before the next convolution.
// Here kernels take and return those tensors in NHWC order instead; the permutation
// moves into their indexing maps, and the host sees NCHW views. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "dyno-channels-last-convolutions"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOCHANNELSLASTCONVOLUTIONS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;

namespace {

/// NHWC position i holds NCHW dimension kToChannelsLast[i].
constexpr int64_t kToChannelsLast[4] = {0, 2, 3, 1};
/// NCHW position i holds NHWC dimension kFromChannelsLast[i].
constexpr int64_t kFromChannelsLast[4] = {0, 3, 1, 2};

RankedTensorType channelsLastType(RankedTensorType nchw) {
  SmallVector<int64_t> shape;
  for (int64_t dim : kToChannelsLast)
    shape.push_back(nchw.getDimSize(dim));
  return nchw.clone(shape);
}

/// A statically shaped 4-d tensor.
bool isStatic4d(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 4 && tensor.hasStaticShape();
}

/// `map`'s results reordered as a channels-last tensor indexes them.
AffineMap channelsLastMap(AffineMap map) {
  SmallVector<AffineExpr> results;
  for (int64_t dim : kToChannelsLast)
    results.push_back(map.getResult(dim));
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results, map.getContext());
}

/// `linalg.transpose` of `source` into a fresh tensor, with `permutation`.
Value transposed(OpBuilder &builder, Location loc, Value source,
                 ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value init = tensor::EmptyOp::create(builder, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(builder, loc, source, init, permutation)->getResult(0);
}

class ChannelsLastRewriter {
public:
  explicit ChannelsLastRewriter(ModuleOp module) : module(module) {}

  /// The kernel `launch` runs, if nothing else launches it.
  func::FuncOp soleKernel(dyno::LaunchOp launch) {
    auto kernel =
        SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(launch, launch.getCalleeAttr());
    if (!kernel || kernel.isExternal())
      return {};
    std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(kernel, module);
    if (!uses || !llvm::hasSingleElement(*uses))
      return {};
    return kernel;
  }

  /// Argument `index` of `launch` becomes `channelsLast` (the same values, NHWC): the
  /// kernel's generics read it through permuted maps; any other reader in the kernel
  /// reads an NCHW transpose of it made there.
  void readChannelsLast(dyno::LaunchOp launch, unsigned index, Value channelsLast) {
    func::FuncOp kernel = soleKernel(launch);
    if (!kernel)
      return;
    BlockArgument argument = kernel.getArgument(index);
    argument.setType(channelsLast.getType());
    // The uses as they are now: the NCHW transpose made below is one more.
    SmallVector<OpOperand *> uses = llvm::map_to_vector(
        argument.getUses(), [](OpOperand &use) { return &use; });
    Value nchw;
    for (OpOperand *use : uses) {
      auto generic = dyn_cast<linalg::GenericOp>(use->getOwner());
      if (generic && generic.isDpsInput(use)) {
        SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
        unsigned position = use->getOperandNumber();
        maps[position] = channelsLastMap(maps[position]);
        generic.setIndexingMapsAttr(OpBuilder(generic).getAffineMapArrayAttr(maps));
        permuted.insert(generic);
        continue;
      }
      if (!nchw) {
        OpBuilder builder = OpBuilder::atBlockBegin(&kernel.getBody().front());
        nchw = transposed(builder, kernel.getLoc(), argument, kFromChannelsLast);
      }
      use->set(nchw);
    }
    kernel.setFunctionType(FunctionType::get(
        kernel.getContext(), kernel.getBody().front().getArgumentTypes(),
        kernel.getFunctionType().getResults()));
    launch->setOperand(index, channelsLast);
  }

  /// Every kernel that reads `nchw` (an NCHW tensor whose memory is channels-last)
  /// reads `channelsLast`, its NHWC view, instead.
  void readersReadChannelsLast(Value nchw, Value channelsLast) {
    for (OpOperand &use : llvm::make_early_inc_range(nchw.getUses()))
      if (auto launch = dyn_cast<dyno::LaunchOp>(use.getOwner()))
        readChannelsLast(launch, use.getOperandNumber(), channelsLast);
  }

  /// The NHWC view of a convolution's result, for the kernels that read it.
  void convolutionResultToKernels(dyno::ContractionOp conv) {
    Value result = conv.getResult();
    if (llvm::none_of(result.getUsers(), llvm::IsaPred<dyno::LaunchOp>))
      return;
    OpBuilder builder(conv->getContext());
    builder.setInsertionPointAfter(conv);
    Value view = transposed(builder, conv.getLoc(), result, kToChannelsLast);
    readersReadChannelsLast(result, view);
    eraseIfUnused(view);
  }

  /// A copy that only put an NCHW tensor in NHWC order (ViT's patch embedding,
  /// flattened after its convolution) now copies an NHWC tensor as it is: the kernels
  /// this pass changed are simplified (linalg's identity generics erased, bf16 -> f32 ->
  /// bf16 round trips folded), so that no kernel, nor a piece the Triton target splits
  /// off one, copies a tensor unchanged; and the launch of a kernel that then returns
  /// its argument is dropped: the host reads the NHWC view, which the runtime's
  /// channels-last convolution result already is in memory (no copy at all).
  void simplifyChangedKernels() {
    SmallVector<func::FuncOp> kernels;
    for (linalg::GenericOp generic : permuted)
      if (auto kernel = generic->getParentOfType<func::FuncOp>())
        if (!llvm::is_contained(kernels, kernel))
          kernels.push_back(kernel);
    permuted.clear(); // (the generics may be erased below)
    for (func::FuncOp kernel : kernels) {
      RewritePatternSet patterns(kernel.getContext());
      linalg::GenericOp::getCanonicalizationPatterns(patterns, kernel.getContext());
      (void)applyPatternsGreedily(kernel, std::move(patterns));
      forwardReturnedArgument(kernel);
    }
  }

  /// A kernel of one result that returns its argument: its sole launch's result is
  /// that argument.
  void forwardReturnedArgument(func::FuncOp kernel) {
    auto returnOp = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
    auto argument = returnOp.getNumOperands() == 1
                        ? dyn_cast<BlockArgument>(returnOp.getOperand(0))
                        : BlockArgument();
    if (!argument)
      return;
    std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(kernel, module);
    if (!uses || !llvm::hasSingleElement(*uses))
      return;
    auto launch = dyn_cast<dyno::LaunchOp>(uses->begin()->getUser());
    if (!launch || !launch.getDims().empty() || launch.getInitialValuesAttr() ||
        launch->getResult(0).getType() != launch.getArgs()[argument.getArgNumber()].getType())
      return;
    launch->getResult(0).replaceAllUsesWith(launch.getArgs()[argument.getArgNumber()]);
    launch->erase();
    kernel->erase();
  }

  /// A host transpose no kernel took (each reader is launched more than once).
  static void eraseIfUnused(Value view) {
    if (!view.use_empty())
      return;
    auto transpose = view.getDefiningOp<linalg::TransposeOp>();
    Operation *init = transpose.getInit().getDefiningOp();
    transpose->erase();
    if (init && init->use_empty())
      init->erase();
  }

  /// Makes the kernel that computes a convolution's input write it NHWC, when it comes
  /// straight from a generic, and only convolutions, kernels and the graph's results
  /// read it on the host (they read an NCHW view of it; kernels the NHWC tensor).
  void convolutionInputFromKernel(dyno::ContractionOp conv) {
    auto launch = conv.getArgs()[0].getDefiningOp<dyno::LaunchOp>();
    if (!launch || !launch.getDims().empty())
      return;
    auto resultIndex = cast<OpResult>(conv.getArgs()[0]).getResultNumber();
    Value hostResult = launch->getResult(resultIndex);
    for (Operation *user : hostResult.getUsers()) {
      auto contraction = dyn_cast<dyno::ContractionOp>(user);
      bool convolutionInput = contraction && contraction.getName() == "conv2d" &&
                              llvm::all_of(contraction.getArgs().drop_front(), [&](Value v) {
                                return v != hostResult;
                              });
      if (!convolutionInput && !isa<dyno::LaunchOp, func::ReturnOp>(user))
        return;
    }
    func::FuncOp kernel = soleKernel(launch);
    if (!kernel || !writeChannelsLast(kernel, resultIndex))
      return;

    // The launch, with the result's new type.
    OpBuilder builder(launch);
    SmallVector<Type> resultTypes(launch->getResultTypes());
    resultTypes[resultIndex] = kernel.getFunctionType().getResult(resultIndex);
    auto rewritten = dyno::LaunchOp::create(builder, launch.getLoc(), resultTypes,
                                            launch.getCalleeAttr(), launch.getArgs(),
                                            launch.getDims(), launch.getInitialValuesAttr());
    for (auto [index, old] : llvm::enumerate(launch->getResults()))
      if (index != resultIndex)
        old.replaceAllUsesWith(rewritten->getResult(index));
    Value channelsLast = rewritten->getResult(resultIndex);
    Value view = transposed(builder, launch.getLoc(), channelsLast, kFromChannelsLast);
    hostResult.replaceAllUsesWith(view);
    launch->erase();
    readersReadChannelsLast(view, channelsLast);
  }

  /// The convolution's input (operand 0) and filter (operand 1), where either is a
  /// graph input of static shape that channels-last memory would order differently,
  /// read through an NCHW view of an NHWC copy made by a kernel of its own (one per
  /// graph input, launched before its first convolution; later convolutions reuse it):
  /// the runtime passes the view, channels-last in memory, to the library as it is.
  void hostOperandsChannelsLast(dyno::ContractionOp conv, bool filters) {
    for (unsigned operand : {0u, 1u}) {
      if (operand == 1 && !filters)
        continue;
      auto argument = dyn_cast<BlockArgument>(conv->getOperand(operand));
      if (!argument || !isStatic4d(argument.getType()) ||
          argument.getOwner() != conv->getBlock() ||
          !isa<func::FuncOp>(argument.getOwner()->getParentOp()))
        continue;
      auto type = cast<RankedTensorType>(argument.getType());
      // One channel, or one pixel: NCHW memory is channels-last memory already.
      if (type.getDimSize(1) == 1 || type.getDimSize(2) * type.getDimSize(3) == 1)
        continue;
      Value &view = hostCopies[argument];
      if (!view) {
        OpBuilder builder(conv);
        Value channelsLast = copyChannelsLast(builder, conv.getLoc(), argument);
        view = transposed(builder, conv.getLoc(), channelsLast, kFromChannelsLast);
      }
      conv->setOperand(operand, view);
    }
  }

  /// A launch, at `builder`, of a new kernel returning `source` (a static NCHW tensor)
  /// copied to NHWC: a generic over the NHWC result, reading the source through a
  /// permuted map (the transposing loop `dyno-block-transposes` tiles in cache lines).
  Value copyChannelsLast(OpBuilder &builder, Location loc, Value source) {
    MLIRContext *ctx = module.getContext();
    auto kernels = module.lookupSymbol<ModuleOp>(dyno::kKernelsModuleName);
    if (!kernels) { // a graph of library calls only
      OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
      kernels = ModuleOp::create(moduleBuilder, loc, dyno::kKernelsModuleName);
    }
    auto sourceType = cast<RankedTensorType>(source.getType());
    RankedTensorType resultType = channelsLastType(sourceType);
    std::string name;
    do
      name = "kernel_" + std::to_string(nextKernelNumber++);
    while (kernels.lookupSymbol(name));
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(kernels.getBody());
    auto kernel = func::FuncOp::create(moduleBuilder, loc, name,
                                       FunctionType::get(ctx, {sourceType}, {resultType}));
    kernel.setArgAttr(0, "bufferization.writable", BoolAttr::get(ctx, false));
    Block *entry = kernel.addEntryBlock();
    OpBuilder body = OpBuilder::atBlockEnd(entry);
    Value init = tensor::EmptyOp::create(body, loc, resultType.getShape(),
                                         resultType.getElementType());
    // Result (n, h, w, c) = source (n, c, h, w).
    AffineMap read = AffineMap::getPermutationMap(kFromChannelsLast, ctx);
    AffineMap write = AffineMap::getMultiDimIdentityMap(4, ctx);
    SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
    auto copy = linalg::GenericOp::create(
        body, loc, TypeRange{resultType}, ValueRange{entry->getArgument(0)},
        ValueRange{init}, ArrayRef<AffineMap>{read, write}, iterators,
        [](OpBuilder &nested, Location nestedLoc, ValueRange values) {
          linalg::YieldOp::create(nested, nestedLoc, values[0]);
        });
    func::ReturnOp::create(body, loc, copy->getResults());
    auto callee = SymbolRefAttr::get(ctx, dyno::kKernelsModuleName,
                                     {FlatSymbolRefAttr::get(ctx, name)});
    auto launch = dyno::LaunchOp::create(builder, loc, TypeRange{resultType}, callee,
                                         ValueRange{source}, ValueRange{},
                                         /*initial_values=*/DenseI64ArrayAttr());
    return launch->getResult(0);
  }

  /// `generic` writes its result `resultNumber` NHWC: into a fresh NHWC tensor (filled
  /// as `fill`, if given, filled the NCHW one), through its output map permuted. The
  /// old init is left to canonicalization. Returns the new result type.
  RankedTensorType writeResultChannelsLast(linalg::GenericOp generic, unsigned resultNumber,
                                           linalg::FillOp fill = {}) {
    OpOperand *init = generic.getDpsInitOperand(resultNumber);
    RankedTensorType nhwcType =
        channelsLastType(cast<RankedTensorType>(generic.getResult(resultNumber).getType()));
    OpBuilder builder(generic);
    Value newInit = tensor::EmptyOp::create(builder, generic.getLoc(), nhwcType.getShape(),
                                            nhwcType.getElementType());
    if (fill)
      newInit = linalg::FillOp::create(builder, fill.getLoc(), fill.getInputs()[0], newInit)
                    ->getResult(0);
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    unsigned position = init->getOperandNumber();
    maps[position] = channelsLastMap(maps[position]);
    init->set(newInit);
    generic.setIndexingMapsAttr(builder.getAffineMapArrayAttr(maps));
    permuted.insert(generic);
    generic.getResult(resultNumber).setType(nhwcType);
    return nhwcType;
  }

  /// Makes `kernel` return its result `index` NHWC: the generic computing it writes it
  /// through a permuted map into a fresh NHWC tensor. False, and nothing changed, where
  /// the result is not a generic's that only the return reads.
  bool writeChannelsLast(func::FuncOp kernel, unsigned index) {
    auto returnOp = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
    Value value = returnOp.getOperand(index);
    auto generic = value.getDefiningOp<linalg::GenericOp>();
    if (!generic || !value.hasOneUse() || !isStatic4d(value.getType()))
      return false;
    unsigned resultNumber = cast<OpResult>(value).getResultNumber();
    OpOperand *init = generic.getDpsInitOperand(resultNumber);
    // The init: a fresh tensor, or one filled with a constant (a reduction's start).
    auto fill = init->get().getDefiningOp<linalg::FillOp>();
    Value empty = fill ? fill.getOutputs()[0] : init->get();
    if (!empty.getDefiningOp<tensor::EmptyOp>() || !init->get().hasOneUse() ||
        (fill && !empty.hasOneUse()))
      return false;

    RankedTensorType nhwcType = writeResultChannelsLast(generic, resultNumber, fill);
    SmallVector<Type> results(kernel.getFunctionType().getResults());
    results[index] = nhwcType;
    kernel.setFunctionType(FunctionType::get(kernel.getContext(),
                                             kernel.getFunctionType().getInputs(), results));
    return true;
  }

  /// Inside a kernel: an NCHW intermediate that a generic given a channels-last map
  /// computes, and that reaches other generics only through pads and slices (a max
  /// pool's padded window slices), is computed NHWC too, and so are the pads and slices
  /// (their offsets, sizes and strides permuted) and the readers' maps. Otherwise the
  /// kernel would write it transposed and read it back transposed (the ResNet stem's
  /// BN + ReLU + max pool). Repeats for the generics this makes channels-last.
  void internalIntermediatesChannelsLast() {
    for (unsigned i = 0; i < permuted.size(); ++i) // grows as generics are permuted
      if (internalResultReachesOnlyGenerics(permuted[i]))
        rewriteInternalResult(permuted[i]);
  }

  /// Whether `generic`'s one result is a static NCHW intermediate written through an
  /// identity map into a fresh tensor, read only by generics (as inputs), pads with a
  /// constant and rank-keeping static slices, whose own results are read the same way.
  static bool internalResultReachesOnlyGenerics(linalg::GenericOp generic) {
    if (generic.getNumResults() != 1 || !isStatic4d(generic.getResult(0).getType()))
      return false;
    OpOperand *init = generic.getDpsInitOperand(0);
    if (!generic.getMatchingIndexingMap(init).isIdentity() ||
        !init->get().getDefiningOp<tensor::EmptyOp>() || !init->get().hasOneUse())
      return false;
    SmallVector<Value> worklist = {generic.getResult(0)};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (value.use_empty())
        return false;
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (auto reader = dyn_cast<linalg::GenericOp>(user)) {
          if (!reader.isDpsInput(&use))
            return false;
        } else if (auto pad = dyn_cast<tensor::PadOp>(user)) {
          if (!pad.getConstantPaddingValue() || !pad.getLow().empty() ||
              !pad.getHigh().empty() || !isStatic4d(pad.getType()))
            return false;
          worklist.push_back(pad.getResult());
        } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
          if (!isStatic4d(slice.getType()) || !slice.getOffsets().empty() ||
              !slice.getSizes().empty() || !slice.getStrides().empty())
            return false;
          worklist.push_back(slice.getResult());
        } else {
          return false;
        }
      }
    }
    return true;
  }

  void rewriteInternalResult(linalg::GenericOp generic) {
    writeResultChannelsLast(generic, 0);
    readersReadInternalChannelsLast(generic.getResult(0));
  }

  /// `value` is now NHWC: its readers (checked by internalResultReachesOnlyGenerics)
  /// follow.
  void readersReadInternalChannelsLast(Value value) {
    auto permute = [](auto values) {
      SmallVector<OpFoldResult> result;
      for (int64_t dim : kToChannelsLast)
        result.push_back(values[dim]);
      return result;
    };
    for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
      Operation *user = use.getOwner();
      OpBuilder builder(user);
      if (auto reader = dyn_cast<linalg::GenericOp>(user)) {
        SmallVector<AffineMap> maps = reader.getIndexingMapsArray();
        maps[use.getOperandNumber()] = channelsLastMap(maps[use.getOperandNumber()]);
        reader.setIndexingMapsAttr(builder.getAffineMapArrayAttr(maps));
        permuted.insert(reader);
        continue;
      }
      Value replacement;
      if (auto pad = dyn_cast<tensor::PadOp>(user)) {
        replacement = tensor::PadOp::create(
            builder, pad.getLoc(), channelsLastType(pad.getType()), value,
            permute(pad.getMixedLowPad()), permute(pad.getMixedHighPad()),
            pad.getConstantPaddingValue(), pad.getNofold());
      } else {
        auto slice = cast<tensor::ExtractSliceOp>(user);
        replacement = tensor::ExtractSliceOp::create(
            builder, slice.getLoc(), channelsLastType(slice.getType()), value,
            permute(slice.getMixedOffsets()), permute(slice.getMixedSizes()),
            permute(slice.getMixedStrides()));
      }
      // The old op's readers move to the replacement, then it goes.
      for (OpOperand &readerUse : llvm::make_early_inc_range(user->getResult(0).getUses()))
        readerUse.set(replacement);
      user->erase();
      readersReadInternalChannelsLast(replacement);
    }
  }

  /// Puts the channel loop innermost in each generic given a channels-last map, where
  /// more of its operands end in that loop than in its innermost one: they are then
  /// read and written contiguously (and vectorized along the channels) instead of with
  /// the channel count as stride. Loop 0 (the batch) stays first, as tiling wants.
  void interchangeChannelLoops() {
    IRRewriter rewriter(module.getContext());
    for (linalg::GenericOp generic : permuted) {
      unsigned numLoops = generic.getNumLoops();
      // Tiling takes the first parallel loop: keep it the batch's.
      if (numLoops < 2 ||
          generic.getIteratorTypesArray()[0] != utils::IteratorType::parallel)
        continue;
      SmallVector<int> votes(numLoops, 0); // loop -> operands whose last index it is
      for (AffineMap map : generic.getIndexingMapsArray())
        if (map.getNumResults() >= 3)
          if (auto dim = dyn_cast<AffineDimExpr>(map.getResults().back()))
            ++votes[dim.getPosition()];
      // The loop most accesses end in (the first of equals), if it beats the innermost.
      unsigned channel = 1;
      for (unsigned loop = 2; loop < numLoops; ++loop)
        if (votes[loop] > votes[channel])
          channel = loop;
      if (channel == numLoops - 1 || votes[channel] <= votes[numLoops - 1])
        continue;
      SmallVector<unsigned> order;
      for (unsigned loop = 0; loop < numLoops; ++loop)
        if (loop != channel)
          order.push_back(loop);
      order.push_back(channel);
      rewriter.setInsertionPoint(generic);
      (void)linalg::interchangeGenericOp(rewriter, generic, order);
    }
  }

private:
  ModuleOp module;
  /// Generics given a channels-last map.
  llvm::SetVector<linalg::GenericOp> permuted;
  /// A graph input's NCHW view of its NHWC copy (hostOperandsChannelsLast).
  llvm::DenseMap<Value, Value> hostCopies;
  /// Where the search for an unused kernel name starts.
  unsigned nextKernelNumber = 0;
};

struct ChannelsLastConvolutionsPass
    : mlir::dyno::impl::DynoChannelsLastConvolutionsBase<ChannelsLastConvolutionsPass> {
  using DynoChannelsLastConvolutionsBase::DynoChannelsLastConvolutionsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (elementTypes.empty())
      return;
    SmallVector<dyno::ContractionOp> convolutions;
    for (auto func : module.getOps<func::FuncOp>())
      func.walk([&](dyno::ContractionOp op) {
        if (op.getName() != "conv2d" || !isStatic4d(op.getType()) ||
            !isStatic4d(op.getArgs()[0].getType()))
          return;
        std::string element;
        llvm::raw_string_ostream stream(element);
        getElementTypeOrSelf(op.getType()).print(stream);
        if (llvm::is_contained(elementTypes, element))
          convolutions.push_back(op);
      });
    ChannelsLastRewriter rewriter(module);
    for (dyno::ContractionOp conv : convolutions) {
      rewriter.convolutionInputFromKernel(conv);
      rewriter.convolutionResultToKernels(conv);
      if (copyHostOperands)
        rewriter.hostOperandsChannelsLast(conv, /*filters=*/!packedHostFilters);
    }
    rewriter.internalIntermediatesChannelsLast();
    rewriter.interchangeChannelLoops();
    rewriter.simplifyChangedKernels();
  }
};

} // namespace
