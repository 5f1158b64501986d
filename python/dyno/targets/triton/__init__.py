"""The Triton target (target.Target): Dyno's passes to Triton-level block programs, printed
as @triton.jit Python, and the wrapper; the runtime/ package imports and launches the
kernels. A compile-cache entry holds both sources (Triton caches what it compiles from
them per device). Triton kernels on CPU tensors run under Triton's interpreter. See ../target.py
for the interface both targets implement.

Its policy:
- Library routing (library_routing.py): long sorts, 64-bit sorts and scatter-adds are
  PyTorch's GPU kernels.
- Convolutions run channels-last in bf16/f16, and in f32 in graphs of many convolutions
  (cuDNN's order; channels_last_types), frozen filters or not; a
  convolution's bias is added by the Triton kernels that read its result.
- `freezing`: frozen bf16/f16 matmul weights whose sizes make cuBLAS slow are padded once
  and kept (host_runtime.PaddedProducts); no other weight is packed (cuBLAS and cuDNN
  take them as they are).
- `autotune` (or DYNO_AUTOTUNE=1): each kernel's block sizes are timed on its first
  launch (runtime/autotune.py).
"""
import logging
import pathlib
from dataclasses import dataclass, field
from typing import Dict, List

import torch

from ... import counters
from ...lowering import frontend, graph_lowering
from .. import host_runtime, wrapper
from ..target import Artifact, CacheEntry, Target
from . import library_routing, runtime

log = logging.getLogger("dyno.compile")

# cuDNN adds a convolution's bias in a kernel of its own, so on GPUs the Triton kernels
# that read the result add it (oneDNN adds it in the accumulator: on CPUs it stays the
# call's operand). A Triton kernel cannot read a concat: torch.roll's become reads at
# rotated indices in the kernels that read them. Histograms (scatter-adds into a few
# elements) sum their bins as rows instead of adding atomically on the same addresses.
# A float32 addmm whose sum only library calls read (attention's q, k and v) has cuBLAS
# add its bias, in the product's epilogue (GPT-2's fused QKV otherwise adds it in three
# kernels, one per slice); where a kernel reads the sum, that kernel adds it. A gather's
# index check is a device assertion in the kernel that reads through the index, as in
# eager's CUDA kernels and Inductor's (on the host it took a reduction and an
# `_assert_async`, two launches per call).
PASSES = graph_lowering.DynoPasses(
    target="triton",
    kernel_formation=("dyno-kernel-formation-pipeline{convolution-bias-in-library=false "
                      "row-bias-in-library=true rotations-as-reads=true "
                      "scatter-adds-as-reductions=true assertions-in-kernels=true}"),
    lowering="dyno-triton-lowering-pipeline",
    lowered_file="04-triton.mlir",
    source_writer="dyno-write-triton",
    source_file="05-kernels.py")

# Graph nodes per convolution below which float32 convolutions run channels-last too
# (Inductor's layout optimization rule, GraphLowering.decide_layout_opt). With TF32
# (cuDNN's default) an NHWC float32 convolution ran ResNet-50 at 32 x 224² in 2.62 GPU
# ms per call against 3.58 NCHW (53 transposes fewer, H200); but ViT's one patch
# convolution, channels-last, took a TF32 algorithm where eager's NCHW one did not, and
# the program's error against eager went from 2.7e-6 to 2.6e-4.
FLOAT32_CHANNELS_LAST_NODES_PER_CONVOLUTION = 300


# Input channels per group below which an NHWC convolution makes cuDNN pad the channels
# (two kernels per call, beside the copy of an NCHW image into channels-last): a patch
# or stem convolution of an image's 3 channels.
PADDED_NHWC_CHANNELS = 8


def channels_last_types(gm) -> List[str]:
    """Element types (MLIR names) of `gm`'s convolutions that run channels-last, their
    neighbouring kernels reading and writing that order (dyno-channels-last-convolutions):
    bf16 and f16 (host_runtime.conv2d, cuDNN's order) but in a graph of few convolutions
    that all read fewer than PADDED_NHWC_CHANNELS channels per group (Swin's and ViT's
    patch convolution: NCHW there, as Inductor runs it, takes 2 kernels where
    channels-last took 4); f32 in a graph of many convolutions
    (FLOAT32_CHANNELS_LAST_NODES_PER_CONVOLUTION)."""
    convolutions = [node for node in gm.graph.nodes
                    if node.op == "call_function"
                    and node.target is torch.ops.aten.convolution.default]
    many = convolutions and len(gm.graph.nodes) < (
        FLOAT32_CHANNELS_LAST_NODES_PER_CONVOLUTION * len(convolutions))

    def few_channels(node) -> bool:
        weight = node.args[1].meta.get("val") if len(node.args) > 1 else None
        return weight is not None and weight.dim() == 4 and \
            weight.shape[1] < PADDED_NHWC_CHANNELS
    if convolutions and not many and all(few_channels(node) for node in convolutions):
        return []
    return ["bf16", "f16", *(["f32"] if many else [])]


@dataclass
class TritonArtifact(Artifact):
    kernels_source: str  # the @triton.jit kernels and their KERNELS launch table
    wrapper_source: str
    num_kernels: int
    extern_calls: int
    library_calls: List[str]
    # Inputs read only as bf16/f16 convolution filters (WrapperBuilder): an export keeps
    # its own copies of them channels-last.
    channels_last_filters: List[int] = field(default_factory=list)

    def store(self, directory) -> Dict:
        (directory / "kernels.py").write_text(self.kernels_source)
        (directory / "wrapper.py").write_text(self.wrapper_source)
        return {"channels_last_filters": list(self.channels_last_filters)}


def pipeline_options(options, convolution_types: List[str]) -> str:
    """dyno-triton-lowering-pipeline's options for a graph whose convolutions of
    `convolution_types` run channels-last."""
    return " ".join([*([] if options.block_long_sums else ["block-long-sums=false"]),
                     "channels-last-convolutions=" + ",".join(convolution_types)])


class TritonTarget(Target):
    name = "triton"
    devices = ("cpu", "cuda")  # CPU tensors: under Triton's interpreter
    entry_files = ("wrapper.py", "kernels.py")

    def cache_key(self) -> str:
        """Triton source, compiled by Triton for each device (Triton caches that)."""
        import importlib.metadata

        try:
            return f"triton={importlib.metadata.version('triton')}"
        except importlib.metadata.PackageNotFoundError:
            return "triton=none"

    def lower(self, gm, dump, options,
              frozen_inputs: frozenset = frozenset(),
              parameter_inputs: frozenset = frozenset()) -> TritonArtifact:
        """ATen graph -> the Triton kernels' and the wrapper's Python sources, not run
        (export ships them). Frozen inputs' padded copies for the products cuBLAS runs
        slowly (host_runtime.PaddedProducts) are kept between calls. (Unfrozen
        `parameter_inputs` keep nothing here: cuDNN takes plain filters.)"""
        from ... import ir

        outputs = frontend.graph_outputs(gm)
        convolution_types = channels_last_types(gm)
        lowered = graph_lowering.lower_graph(library_routing.with_triton_library_calls(gm),
                                             dump, PASSES,
                                             pipeline_options(options, convolution_types),
                                             causal_masks=options.causal_masks)
        kernels_source = (dump.directory() / PASSES.source_file).read_text()
        dump.write(PASSES.source_file, kernels_source, on_disk=False)
        with dump.stage("wrapper"), ir.Context():
            module, host = graph_lowering.host_function(lowered)  # module keeps host alive
            builder = wrapper.WrapperBuilder(host, ir.AsmState(host), pass_tensors=True,
                                             frozen_inputs=frozen_inputs,
                                             workspace=options.workspace,
                                             channels_last_types=convolution_types,
                                             tensor_core_float32=options.tensor_core_float32)
            source = builder.emit(outputs)
        dump.write("06-wrapper.py", source)
        return TritonArtifact(kernels_source, source, len(builder.kernel_signatures),
                              builder.extern_calls, list(builder.library_calls),
                              list(builder.channels_last_filters))

    def restore(self, entry: CacheEntry) -> TritonArtifact:
        meta = entry.meta
        return TritonArtifact((entry.directory / "kernels.py").read_text(),
                              (entry.directory / "wrapper.py").read_text(),
                              meta["kernels"], meta["extern_calls"],
                              list(meta["library_calls"]),
                              list(meta.get("channels_last_filters", [])))

    def load(self, artifact: TritonArtifact, graph_id: int, device, options):
        """The kernels imported for `device` (autotuned on their first launch with
        `options.autotune`, whose default is DYNO_AUTOTUNE), the wrapper bound to them."""
        kernels = runtime.TritonKernels(runtime.write_kernels(artifact.kernels_source),
                                        device,
                                        autotune=runtime.autotune_requested(options.autotune),
                                        compile_threads=host_runtime.compile_threads(),
                                        check_failed=host_runtime.CheckFailed)
        if kernels.shared:
            counters.bump("shared_kernels", kernels.shared)
        if kernels.compiled_ahead:
            counters.bump("kernels_compiled_ahead", kernels.compiled_ahead)
        namespace = host_runtime.wrapper_globals(kernels, lambda threads: None, device)
        exec(compile(artifact.wrapper_source, f"<dyno graph {graph_id}>", "exec"), namespace)
        return namespace["call"]

    def check_op(self, directory) -> None:
        """Runs the Triton passes and emitter on the op: raises DynoCompileError where it
        has no Triton lowering (e.g. an argmax)."""
        graph_lowering.run_dyno_passes(PASSES, directory)

    def tuning_files(self):
        """The autotuning results (runtime/autotune.py, keyed by kernel source and GPU
        model) that this process's launchers read or wrote."""
        return sorted(pathlib.Path(path) for path in runtime.autotune.autotune_results_used)


TARGET = TritonTarget()
