"""The CPU target: `lower` (Dyno's passes down to the LLVM dialect, the wrapper, the JIT)
and `load` (the wrapper bound to the kernels). See ../__init__.py for the shape both
targets share; jit.py runs the kernels."""
from dataclasses import dataclass
from typing import Any, Dict, List

from ... import counters
from .. import wrapper
from . import jit


@dataclass
class Lowered:
    wrapper_source: str
    kernels: Any  # jit.CpuKernels: compiled, not yet bound to a wrapper
    signatures: Dict[str, int]  # kernel -> number of pointer arguments
    extern_calls: int
    library_calls: List[str]
    runner_utils: bool  # the kernels call MLIR's C runner utilities (memrefCopy)

    @property
    def num_kernels(self) -> int:
        return len(self.signatures)


def lower(gm, dump, options, frozen_inputs: frozenset = frozenset()) -> Lowered:
    """ATen graph -> the CPU's compiled kernels and wrapper source. `options`: the
    compiler's CompileOptions; `frozen_inputs`: positions of the inputs that stay the
    same from call to call (parameters under `freezing`), whose weights stay packed."""
    from ...driver import frontend, graph_lowering
    from ... import ir

    outputs = frontend.graph_outputs(gm)
    lowered = graph_lowering.lower_graph(gm, dump, "cpu", options.lowering_pipeline_options(
        "cpu", frozen_filters=bool(frozen_inputs)), causal_masks=options.causal_masks)
    # One parse of the lowered module: its host function makes the wrapper, then its
    # kernels go to the JIT.
    with ir.Context():
        with dump.stage("wrapper"):
            module, host = graph_lowering.host_function(lowered)
            builder = wrapper.WrapperBuilder(host, ir.AsmState(host),
                                             frozen_inputs=frozen_inputs,
                                             workspace=options.workspace)
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
    return Lowered(source, kernels, builder.kernel_signatures, builder.extern_calls,
                   list(builder.library_calls), runner_utils)


def load(wrapper_source: str, kernels, graph_id: int):
    """The graph's `call(args)`: its wrapper bound to `kernels` (jit.CpuKernels, or
    jit.LoadedKernels from the compile cache)."""
    namespace = wrapper.wrapper_globals(kernels, jit.sync_threads)
    exec(compile(wrapper_source, f"<dyno graph {graph_id}>", "exec"), namespace)
    return namespace["call"]
