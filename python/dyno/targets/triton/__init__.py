"""The Triton target: `lower` (Dyno's passes to Triton-level block programs, printed as
@triton.jit Python, and the wrapper) and `load` (the kernels imported and launched by
runtime.py, the wrapper bound to them). See ../__init__.py for the shape both targets
share. Triton kernels on CPU tensors run under Triton's interpreter."""
from dataclasses import dataclass
from typing import List

from ... import counters
from .. import host_runtime, wrapper
from . import runtime


CHANNELS_LAST_CONVOLUTIONS = "channels-last-convolutions=bf16,f16"


@dataclass
class Lowered:
    kernels_source: str  # the @triton.jit kernels and their KERNELS launch table
    wrapper_source: str
    num_kernels: int
    extern_calls: int
    library_calls: List[str]


def lower(gm, dump, options, frozen_inputs: frozenset = frozenset()) -> Lowered:
    """ATen graph -> the Triton kernels' and the wrapper's Python sources, not run (export
    ships them). `options`: the compiler's CompileOptions. `frozen_inputs`: positions of
    the inputs that are frozen parameters (`freezing`), whose padded copies for the
    products cuBLAS runs slowly (host_runtime.PaddedProducts) are kept between calls."""
    from ...driver import frontend, graph_lowering
    from ... import ir

    outputs = frontend.graph_outputs(gm)
    # cuDNN runs bf16/f16 convolutions channels-last (host_runtime.conv2d): the kernels
    # around them read and write that order (dyno-channels-last-convolutions).
    pipeline_options = " ".join(filter(None, [options.lowering_pipeline_options("triton"),
                                              CHANNELS_LAST_CONVOLUTIONS]))
    lowered = graph_lowering.lower_graph(frontend.with_triton_library_calls(gm), dump,
                                         "triton", pipeline_options,
                                         causal_masks=options.causal_masks)
    kernels_source = (dump.directory() / "05-kernels.py").read_text()
    dump.write("05-kernels.py", kernels_source, on_disk=False)
    with dump.stage("wrapper"), ir.Context():
        module, host = graph_lowering.host_function(lowered)  # module keeps host alive
        builder = wrapper.WrapperBuilder(host, ir.AsmState(host), pass_tensors=True,
                                         frozen_inputs=frozen_inputs,
                                         workspace=options.workspace)
        source = builder.emit(outputs)
    dump.write("06-wrapper.py", source)
    return Lowered(kernels_source, source, len(builder.kernel_signatures),
                   builder.extern_calls, list(builder.library_calls))


def load(kernels_source: str, wrapper_source: str, device, autotune: bool, graph_id: int):
    """The graph's `call(args)`: the kernels imported for `device` (autotuned on their
    first launch with `autotune`), the wrapper bound to them."""
    kernels = runtime.TritonKernels(runtime.write_kernels(kernels_source), device,
                                    autotune=autotune,
                                    compile_threads=host_runtime.compile_threads())
    if kernels.shared:
        counters.bump("shared_kernels", kernels.shared)
    if kernels.compiled_ahead:
        counters.bump("kernels_compiled_ahead", kernels.compiled_ahead)
    namespace = host_runtime.wrapper_globals(kernels, lambda threads: None, device)
    exec(compile(wrapper_source, f"<dyno graph {graph_id}>", "exec"), namespace)
    return namespace["call"]
