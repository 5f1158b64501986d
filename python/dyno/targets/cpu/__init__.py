"""The CPU target (target.Target): Dyno's passes down to the LLVM dialect, the wrapper, the
JIT (jit.py runs the kernels); a compile-cache entry holds the wrapper and the kernels as
a shared library. See ../target.py for the interface both targets implement.

Its policy:
- An inference graph's convolution filters that are parameters are kept packed for
  oneDNN (host_runtime.PackedWeights.conv2d), checked against their bytes on every
  call; with `freezing`, its matmul weights too, and all checked by version only. Such
  convolutions run channels-last where oneDNN computes them (the kernels around them
  read and write that order: dyno-channels-last-convolutions).
- `autotune` does nothing here (ignored_options).
"""
import dataclasses
import functools
import hashlib
import logging
import platform
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

import torch

from ... import counters
from ...lowering import frontend, graph_lowering
from .. import host_runtime, wrapper
from ..target import Artifact, CacheEntry, Target
from . import jit

log = logging.getLogger("dyno.compile")

PASSES = graph_lowering.DynoPasses(
    target="cpu",
    # A float32 linear layer whose sum no kernel reads (a classifier's logits, q/k/v
    # that only library products read) adds its bias in addmm: no kernel of its own.
    kernel_formation="dyno-kernel-formation-pipeline{row-bias-in-library=true}",
    lowering="dyno-cpu-lowering-pipeline",
    lowered_file="04-llvm.mlir")


@dataclass
class CpuArtifact(Artifact):
    wrapper_source: str
    kernels: Any  # jit.CpuKernels (compiled, not yet bound to a wrapper) or jit.LoadedKernels
    signatures: Dict[str, int]  # kernel -> number of pointer arguments
    extern_calls: int
    library_calls: List[str]
    runner_utils: bool  # the kernels call MLIR's C runner utilities (memrefCopy)

    @property
    def num_kernels(self) -> int:
        return len(self.signatures)

    def store(self, directory) -> Optional[Dict]:
        """wrapper.py and kernels.so (the JIT's object code linked by the system's `cc`;
        None, nothing stored, without one)."""
        if not self.kernels.save(str(directory / "kernels.so")):
            log.debug("compile cache: no C compiler driver links the kernels; not stored")
            return None
        # A library that would not load (a symbol the JIT resolved from somewhere a
        # later process lacks) is not stored.
        jit.LoadedKernels(str(directory / "kernels.so"), self.signatures, self.runner_utils,
                          self.kernels.symbols)
        (directory / "wrapper.py").write_text(self.wrapper_source)
        return {"signatures": self.signatures, "runner_utils": self.runner_utils,
                "symbols": self.kernels.symbols}

    def stored(self, entry: CacheEntry) -> "CpuArtifact":
        """The kernels from the stored library instead of the JIT: the JIT holds an LLVM
        session per graph (2.4 MB, against 0.1 MB for a library). (Another process may
        have stored this graph first: its library names the kernels its own way.)"""
        kernels = self.kernels.run_from(str(entry.directory / "kernels.so"),
                                        entry.meta["runner_utils"], entry.meta["symbols"])
        return dataclasses.replace(self, kernels=kernels)


@functools.lru_cache(maxsize=None)
def _host_cpu() -> str:
    """The CPU the JIT compiled for (its model and instruction set extensions): a cache
    shared by several machines must not hand one a library with instructions it lacks."""
    try:
        with open("/proc/cpuinfo") as info:
            lines = info.read().split("\n\n")[0].splitlines()
        wanted = ("vendor_id", "model name", "cpu family", "model", "flags")
        return hashlib.sha256("\n".join(line for line in lines
                                         if line.split(":")[0].strip() in wanted)
                              .encode()).hexdigest()
    except OSError:
        return f"{platform.machine()}|{platform.processor()}"


def copied_filter_share(gm) -> Optional[float]:
    """Elements of `gm`'s plain convolution filters that a channels-last call copies
    (more than one input channel and pixel; others are channels-last as they are), per
    element of its convolutions' outputs: what host_runtime.convolves_channels_last
    weighs for f32. None where a shape is not static."""
    filters = outputs = 0
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.aten.convolution.default:
            continue
        weight, out = node.args[1].meta.get("val"), node.meta.get("val")
        # (Symbolic sizes are not read: int() of one would specialize the graph.)
        if not isinstance(weight, torch.Tensor) or not isinstance(out, torch.Tensor) or \
                frontend.has_symbolic_sizes([weight, out]):
            return None
        # (A filter read by several convolutions counts for each: an overestimate, on
        # NCHW's side.)
        if weight.dim() == 4 and weight.shape[1] > 1 and weight.shape[2] * weight.shape[3] > 1:
            filters += weight.numel()
        outputs += out.numel()
    return filters / outputs if outputs else None


def channels_last_types(gm, frozen_filters: bool = False) -> List[str]:
    """Element types (MLIR names) of `gm`'s convolutions that run channels-last
    (host_runtime.convolves_channels_last, which the wrapper passes to each convolution):
    bf16/f16 where oneDNN computes them; f32 with frozen filters, in a graph with a
    depthwise convolution (groups = input channels, one per group), or where the filters
    copied per call are small against the convolutions' outputs (copied_filter_share)."""
    def depthwise(node) -> bool:  # aten.convolution(x, w, b, stride, padding, dilation,
        if len(node.args) < 9 or node.args[6]:  # transposed, output_padding, groups)
            return False
        weight = node.args[1].meta.get("val")
        return weight is not None and weight.dim() == 4 and node.args[8] > 1 and \
            weight.shape[1] == 1
    convolutions = [node for node in gm.graph.nodes if node.op == "call_function"
                    and node.target is torch.ops.aten.convolution.default]
    has_depthwise = any(depthwise(node) for node in convolutions)
    share = copied_filter_share(gm)
    return [name for name, dtype in (("bf16", torch.bfloat16), ("f16", torch.float16),
                                     ("f32", torch.float32))
            if host_runtime.convolves_channels_last(dtype, frozen_filters,
                                                    depthwise=has_depthwise,
                                                    filter_share=share)]


def filters_are_parameters(gm, parameter_inputs: frozenset) -> bool:
    """Whether `gm` has convolutions and each takes its filter as it is from one of the
    graph inputs at `parameter_inputs` (positions), which the runtime keeps packed
    (host_runtime.PackedWeights.conv2d); not where a filter is computed in the graph (a
    weight-normalized convolution's) or passed by the caller."""
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    parameters = {placeholders[position] for position in parameter_inputs
                  if position < len(placeholders)}
    convolutions = [node for node in gm.graph.nodes if node.op == "call_function"
                    and node.target is torch.ops.aten.convolution.default]
    return bool(convolutions) and all(node.args[1] in parameters for node in convolutions)


def four_d_inputs_contiguous(gm) -> bool:
    """Whether every 4-d tensor `gm` takes is NCHW-contiguous (not channels-last, as
    `model.to(memory_format=torch.channels_last)` and its inputs would be): a kernel's
    channels-last copy of one then replaces the runtime's, where a channels-last one
    would be copied twice (the wrapper's `.contiguous()`, then the kernel)."""
    for node in gm.graph.nodes:
        value = node.meta.get("val") if node.op == "placeholder" else None
        # (Symbolic ones are not asked: that could add guards; the pass copies only
        # statically shaped inputs.)
        if isinstance(value, torch.Tensor) and value.dim() == 4 and \
                not frontend.has_symbolic_sizes([value]) and not value.is_contiguous():
            return False
    return True


def pipeline_options(options, channels_last: Sequence[str] = (),
                     copy_convolution_operands: bool = False,
                     pack_convolution_filters: bool = False) -> str:
    """dyno-cpu-lowering-pipeline's options for a graph. `channels_last`: the element
    types of its convolutions that run channels-last (channels_last_types);
    `copy_convolution_operands`: kernels copy their graph inputs channels-last (not
    where an input is channels-last already, four_d_inputs_contiguous);
    `pack_convolution_filters`: not the filters, which the runtime keeps packed
    (an inference graph's parameters, PackedWeights.conv2d)."""
    pipeline = [] if options.block_long_sums else ["block-long-sums=false"]
    if torch.backends.cpu.get_cpu_capability() == "AVX512":
        # PyTorch's kernels use 512-bit vectors here; LLVM's x86 tuning would stop at
        # 256 (dyno-prefer-vector-width).
        pipeline.append("vector-width=512")
    # The runtime runs these convolutions channels-last (the wrapper tells it so): kernels
    # read and write their tensors in that order.
    if channels_last:
        pipeline.append("channels-last-convolutions=" + ",".join(channels_last))
        if copy_convolution_operands:
            # Their graph inputs (the image, the filters) copied channels-last by
            # kernels: ATen's strided copy in the runtime took 1.6x-2x as long.
            pipeline.append("copy-convolution-operands=true")
        if pack_convolution_filters:
            pipeline.append("pack-convolution-filters=true")
    return " ".join(pipeline)


class CpuTarget(Target):
    name = "cpu"
    devices = ("cpu",)
    entry_files = ("wrapper.py", "kernels.so")
    ignored_options = {
        "autotune": "the CPU kernels have no launch configurations to time (their tiles "
                    "and vectors are chosen by dyno-cpu-lowering-pipeline)",
    }

    def cache_key(self) -> str:
        """Machine code for this CPU: its vector capability, model and extensions."""
        return f"{torch.backends.cpu.get_cpu_capability()}|{_host_cpu()}"

    def lower(self, gm, dump, options, frozen_inputs: frozenset = frozenset(),
              parameter_inputs: frozenset = frozenset()) -> CpuArtifact:
        """ATen graph -> the compiled kernels (jit.CpuKernels) and the wrapper's source;
        frozen inputs' weights and parameters' convolution filters stay packed
        (host_runtime.PackedWeights)."""
        from ... import ir

        jit.codegen_worker.start()  # LLVM's worker starts while the pass pipelines run
        outputs = frontend.graph_outputs(gm)
        # (With symbolic sizes the kernels stay NCHW, dyno-channels-last-convolutions
        # takes static convolutions only: float32 ones stay NCHW there unless frozen.)
        packed_filters = filters_are_parameters(gm, frozen_inputs | parameter_inputs) and (
            bool(frozen_inputs) or copied_filter_share(gm) is not None)
        convolution_types = channels_last_types(gm, frozen_filters=packed_filters)
        lowered = graph_lowering.lower_graph(
            gm, dump, PASSES,
            pipeline_options(options, convolution_types,
                             copy_convolution_operands=four_d_inputs_contiguous(gm),
                             pack_convolution_filters=packed_filters),
            causal_masks=options.causal_masks)
        # One parse of the lowered module: its host function makes the wrapper, then its
        # kernels go to the JIT.
        with ir.Context():
            with dump.stage("wrapper"):
                module, host = graph_lowering.host_function(lowered)
                builder = wrapper.WrapperBuilder(host, ir.AsmState(host),
                                                 frozen_inputs=frozen_inputs,
                                                 parameter_inputs=parameter_inputs,
                                                 workspace=options.workspace,
                                                 channels_last_types=convolution_types)
                source = builder.emit(outputs)
            dump.write("05-wrapper.py", source)
            with dump.stage("JIT"):
                kernels = jit.CpuKernels(module, builder.kernel_signatures)
        if kernels.shared:
            counters.bump("shared_kernels", kernels.shared)
        if kernels.parts > 1:
            counters.bump("jit_parts", kernels.parts)
        # (Kernels taken from other graphs' units are linked in whole when stored.)
        runner_utils = "@memrefCopy" in lowered or kernels.runner_utils
        return CpuArtifact(source, kernels, builder.kernel_signatures, builder.extern_calls,
                           list(builder.library_calls), runner_utils)

    def restore(self, entry: CacheEntry) -> CpuArtifact:
        meta = entry.meta
        kernels = jit.LoadedKernels(str(entry.directory / "kernels.so"), meta["signatures"],
                                    meta["runner_utils"], meta["symbols"])
        return CpuArtifact((entry.directory / "wrapper.py").read_text(), kernels,
                           meta["signatures"], meta["extern_calls"],
                           list(meta["library_calls"]), meta["runner_utils"])

    def load(self, artifact: CpuArtifact, graph_id: int, device=None, options=None):
        """The wrapper bound to the artifact's kernels."""
        namespace = wrapper.wrapper_globals(artifact.kernels, jit.sync_threads)
        exec(compile(artifact.wrapper_source, f"<dyno graph {graph_id}>", "exec"), namespace)
        return namespace["call"]

    def check_op(self, directory) -> None:
        """That dyno-opt takes what torch-mlir made of the op: an op it takes lowers to
        the CPU (what does not, in a whole graph, falls back op by op then)."""
        graph_lowering.check_linalg(directory)


TARGET = CpuTarget()
