"""Compiles one ATen FX graph (from AOTAutograd) into a callable, or falls back to eager.

Stages, each dumped to DYNO_DEBUG_DIR/graph_<n>/ when set: 00-aten-fx.py (the graph as
AOTAutograd handed it over); 01-torch.mlir to 04-*.mlir and Triton's 05-kernels.py from
graph_lowering.lower_graph (its docstring lists them); the generated host wrapper,
05-wrapper.py (CPU) or 06-wrapper.py (Triton), from the targets' `lower` (targets/cpu,
targets/triton), which this module calls with their `load`.
"""
import time
import warnings
from dataclasses import dataclass
from typing import Callable, List

import torch

from . import compile_cache, frontend
from .. import counters
from ..capture import opaque_inputs
from ..targets import host_runtime
from .debug import GraphDump, log
from ..errors import DynoCompileError
from ..ops.library_calls import COLLECTIVE_NAMESPACE

_warned = set()


TARGETS = ("auto", "cpu", "triton")


@dataclass(frozen=True)
class CompileOptions:
    target: str = "auto"  # "auto" (from the inputs' device), "cpu" or "triton"
    autotune: bool = False  # Triton: time each kernel's block-size configurations once
    # Long float sums in blocks (dyno-block-long-sums). Off only to measure what the
    # blocks cost (benchmarks/accuracy_cost.py): long sums then lose accuracy.
    block_long_sums: bool = True
    # Inference graphs may keep their parameters and buffers in the forms the libraries
    # run fastest (oneDNN's packed GEMM weights): the user promises not to change them
    # behind autograd's back (writes through `.data`). See host_runtime.FrozenWeights.
    freezing: bool = False
    # CPU graphs are stored in, and loaded from, the on-disk compile cache
    # (compile_cache.py; also off with DYNO_CACHE=0).
    cache: bool = True
    # Graphs keep their intermediates in a per-graph workspace from call to call
    # (targets/memory_planning.py; on a GPU one per CUDA stream); False: allocated on
    # every call, released at their last read, and nothing is held between calls.
    workspace: bool = True
    # Attention under a constant causal mask (what decoders build from aranges) runs as
    # causal attention, without the mask (causal_masks.py); False leaves masks as they are.
    causal_masks: bool = True

    @staticmethod
    def from_user(options) -> "CompileOptions":
        options = dict(options or {})
        target = options.pop("target", "auto")
        flags = {name: options.pop(name, default)
                 for name, default in (("autotune", False), ("block_long_sums", True),
                                       ("freezing", False), ("cache", True),
                                       ("workspace", True), ("causal_masks", True))}
        if options:
            raise ValueError(f"dyno: unknown options {sorted(options)}; known: ['autotune', "
                             "'block_long_sums', 'cache', 'causal_masks', 'freezing', "
                             "'target', 'workspace']")
        if target not in TARGETS:
            raise ValueError(f"dyno: target must be one of {list(TARGETS)}, got {target!r}")
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise ValueError(f"dyno: {name} must be True or False, got {value!r}")
        return CompileOptions(target=target, **flags)

    def lowering_pipeline_options(self, target: str, frozen_filters: bool = False) -> str:
        """The options of dyno-cpu-lowering-pipeline / dyno-triton-lowering-pipeline.
        `frozen_filters`: the graph's convolution filters are frozen (packed at run time)."""
        options = [] if self.block_long_sums else ["block-long-sums=false"]
        if target == "cpu" and torch.backends.cpu.get_cpu_capability() == "AVX512":
            # PyTorch's kernels use 512-bit vectors here; LLVM's x86 tuning would stop
            # at 256 (dyno-prefer-vector-width).
            options.append("vector-width=512")
        if target == "cpu":
            # The runtime runs these convolutions channels-last (host_runtime): kernels
            # read and write their tensors in that order. (Per graph: an f32 convolution
            # whose filter is not itself a frozen input runs NCHW, and its kernels' views
            # are copied; correct, slower.)
            channels_last = [name for name, dtype in (("bf16", torch.bfloat16),
                                                      ("f16", torch.float16),
                                                      ("f32", torch.float32))
                             if host_runtime.convolves_channels_last(dtype, frozen_filters)]
            if channels_last:
                options.append("channels-last-convolutions=" + ",".join(channels_last))
        return " ".join(options)


def _boxed(fn: Callable) -> Callable:
    fn._boxed_call = True
    return fn


def _warn_once(graph_id: int, error: DynoCompileError, what: str = "runs eagerly") -> None:
    key = (error.stage, error.reason.splitlines()[0] if error.reason else "")
    if key in _warned:
        return
    _warned.add(key)
    message = f"dyno: graph {graph_id} {what}: {error.stage}: {error.reason}"
    if error.reproducer:
        message += f"\n  reproduce with: {error.reproducer}"
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def target_and_device(example_inputs, options: CompileOptions):
    """(target, device): the explicit target, or Triton for CUDA inputs and CPU code for
    CPU inputs. Triton kernels on CPU tensors run under Triton's interpreter."""
    devices = {t.device for t in example_inputs if isinstance(t, torch.Tensor)}
    if len(devices) > 1:
        raise DynoCompileError("frontend", f"inputs on several devices: {sorted(map(str, devices))}")
    device = next(iter(devices)) if devices else torch.device("cpu")
    target = options.target
    if target == "auto":
        target = "triton" if device.type == "cuda" else "cpu"
    if target == "cpu" and device.type != "cpu":
        raise DynoCompileError("frontend", f"the CPU target got inputs on {device}")
    if target == "triton" and device.type not in ("cpu", "cuda"):
        raise DynoCompileError("frontend", f"the Triton target cannot run on {device}")
    return target, device


def _compile_cpu(gm: torch.fx.GraphModule, dump: GraphDump, options,
                 frozen_inputs: frozenset = frozenset(), cache_key=None):
    """The CPU target's lower and load, with the compile cache's store in between.
    `frozen_inputs`: positions of the inputs that stay the same from call to call
    (parameters under `freezing`), whose matmul weights are kept packed. `cache_key`:
    the compile cache's key for this graph, under which the result is stored."""
    from ..targets import cpu

    lowered = cpu.lower(gm, dump, options, frozen_inputs)
    kernels = lowered.kernels
    if cache_key is not None:
        try:
            with dump.stage("cache store"):
                entry = compile_cache.store_cpu(
                    cache_key, lowered.wrapper_source, kernels, lowered.signatures,
                    lowered.num_kernels, lowered.extern_calls, lowered.library_calls,
                    lowered.runner_utils, kernels.symbols)
                if entry is not None:
                    # The stored library's code instead of the JIT's: the JIT holds
                    # an LLVM session per graph (2.4 MB, against 0.1 MB for a library).
                    # (Another process may have stored this graph first: its
                    # library names the kernels its own way.)
                    stored = compile_cache.stored_meta(entry)
                    kernels = kernels.run_from(str(entry / "kernels.so"),
                                               stored["runner_utils"], stored["symbols"])
        except Exception as error:  # noqa: BLE001 (the compiled graph runs all the same)
            log.info("graph %d: not stored in the compile cache: %s: %s", dump.graph_id,
                     type(error).__name__, error)
    call = cpu.load(lowered.wrapper_source, kernels, dump.graph_id)
    dump.discard_temporary()
    return call, lowered.num_kernels, lowered.extern_calls


def _compile_triton(gm: torch.fx.GraphModule, dump: GraphDump, device, options,
                    frozen_inputs: frozenset = frozenset(), cache_key=None):
    """The Triton target's lower and load, then the compile cache's store (of an entry
    whose kernels loaded). `frozen_inputs`: as for _compile_cpu (padded GEMM weights are
    kept). `cache_key`: the compile cache's key for this graph, under which the kernels'
    and the wrapper's sources are stored."""
    from ..targets import triton

    lowered = triton.lower(gm, dump, options, frozen_inputs)
    with dump.stage("Triton load"):
        call = triton.load(lowered.kernels_source, lowered.wrapper_source, device,
                           triton.runtime.autotune_requested(options.autotune),
                           dump.graph_id)
    if cache_key is not None:
        try:
            with dump.stage("cache store"):
                compile_cache.store_triton(cache_key, lowered.kernels_source,
                                           lowered.wrapper_source, lowered.num_kernels,
                                           lowered.extern_calls, lowered.library_calls)
        except Exception as error:  # noqa: BLE001 (the compiled graph runs all the same)
            log.info("graph %d: not stored in the compile cache: %s: %s", dump.graph_id,
                     type(error).__name__, error)
    dump.discard_temporary()
    return call, lowered.num_kernels, lowered.extern_calls


def _compile_with_eager_ops(gm: torch.fx.GraphModule, kind: str, dump: GraphDump,
                            error: DynoCompileError, compile_part, target: str):
    """Per-op fallback: compiles the supported subgraphs, leaves the other ops eager.
    Returns a callable, or None when no part of the graph compiles."""
    from . import partition

    def compile_subgraph(submodule):
        sub_dump = GraphDump()
        sub_dump.write("00-aten-fx.py", submodule.code)
        call, num_kernels, num_externs = compile_part(submodule, sub_dump)
        counters.bump("kernels", num_kernels)
        counters.bump("extern_calls", num_externs)
        return call

    try:
        fused, compiled = partition.compile_partitions(gm, compile_subgraph, target)
    except Exception:  # partitioning is best effort; the caller falls back to eager
        return None
    if compiled == 0:
        return None
    eager_ops = partition.eager_op_names(fused)
    if not eager_ops:  # every op compiled, in several graphs: compiled, not partly
        counters.record_split(f"{kind} graph {dump.graph_id}: {error.stage}: {error.reason}")
        counters.bump("compiled_graphs")
        counters.bump(f"compiled_{kind}_graphs")
        counters.bump(f"{target}_graphs")
        return lambda args: fused(*args)
    counters.bump("partially_compiled_graphs")
    for name in eager_ops:
        counters.record_eager_op(name)
    _warn_once(dump.graph_id, DynoCompileError(
        "per-op fallback", f"{len(eager_ops)} op(s) run eagerly ({', '.join(eager_ops)}), "
        f"the rest is compiled; whole-graph compile failed: {error.stage}: {error.reason}",
        error.reproducer), what="is partly compiled")
    return lambda args: fused(*args)


def fall_back_before_compile(gm: torch.fx.GraphModule, error: Exception) -> Callable:
    """AOTAutograd failed on a Dynamo graph (its tracing, or one of the decompositions):
    the graph runs eagerly, with the reason recorded and warned once. (No MLIR exists
    yet, so there is no dyno-opt reproducer; DYNO_DEBUG_DIR keeps the Dynamo graph.)"""
    dump = GraphDump()
    dump.write("00-dynamo-fx.py", gm.code)
    failure = DynoCompileError("aot_autograd", f"{type(error).__name__}: {error}")
    counters.record_fallback(f"graph {dump.graph_id}: {failure.stage}: {failure.reason}")
    _warn_once(dump.graph_id, failure)
    return gm.forward


def _frozen_inputs(options: CompileOptions, inference: bool) -> frozenset:
    """The graph inputs that are parameters or buffers (AOTAutograd's static inputs) when
    `freezing` is on and the graph is an inference graph; a training graph's parameters
    change every step."""
    if not (options.freezing and inference):
        return frozenset()
    context = torch._guards.TracingContext.try_get()
    metadata = getattr(context, "fw_metadata", None)
    return frozenset(getattr(metadata, "static_input_indices", None) or ())


def _look_up_cache(gm, example_inputs, options, kind, frozen_inputs, target, device, dump):
    """(the compile cache's key for this graph or None, the entry's contents or None).
    A failure here is a miss, never the user's error."""
    try:
        with dump.stage("cache lookup"):
            key = compile_cache.graph_key(gm, example_inputs, options, kind, frozen_inputs,
                                          target)
            autotune = False
            if target == "triton":
                from ..targets import triton
                autotune = triton.runtime.autotune_requested(options.autotune)
            return key, (compile_cache.load(key, dump.graph_id, device, autotune)
                         if key else None)
    except Exception as error:  # noqa: BLE001 (a cache problem costs a compile)
        log.info("graph %d: compile cache lookup failed: %s: %s", dump.graph_id,
                 type(error).__name__, error)
        return None, None


def compile_graph(gm: torch.fx.GraphModule, example_inputs: List, options: CompileOptions,
                  kind: str, inference: bool = False) -> Callable:
    """AOTAutograd's compiler hook: returns a boxed callable running the graph.
    `inference`: AOTAutograd's inference graph (no backward follows)."""
    dump = GraphDump()
    dump.write("00-aten-fx.py", lambda: gm.code)
    eager = _boxed(lambda args: gm(*args))
    eager.dyno_runs_eagerly = True  # (the backend then runs Dynamo's graph instead)

    def fall_back(error: DynoCompileError) -> Callable:
        counters.record_fallback(f"{kind} graph {dump.graph_id}: {error.stage}: {error.reason}")
        _warn_once(dump.graph_id, error)
        return eager

    # Opaque objects the graph only passes through (a DTensor training graph's process
    # group) are not compiled: the call puts them back among the outputs.
    compiled_gm, example_inputs, with_objects = \
        opaque_inputs.without_passed_through_objects(gm, example_inputs)
    try:
        target, device = target_and_device(example_inputs, options)
        frontend.check_graph_inputs(example_inputs, device.type)
    except DynoCompileError as error:
        return fall_back(error)

    def compile_part(graph, part_dump, frozen_inputs=frozenset(), cache_key=None):
        if target == "cpu":
            return _compile_cpu(graph, part_dump, options, frozen_inputs, cache_key)
        return _compile_triton(graph, part_dump, device, options, frozen_inputs, cache_key)

    # (Objects taken out of the inputs would shift the positions: only DTensor training
    # graphs have them.)
    frozen_inputs = _frozen_inputs(options, inference) if compiled_gm is gm else frozenset()
    cache_key, hit = None, None
    if options.cache and compile_cache.root() is not None:
        cache_key, hit = _look_up_cache(compiled_gm, example_inputs, options,
                                        f"{kind}{'/inference' if inference else ''}",
                                        frozen_inputs, target, device, dump)
    try:
        if hit is not None:
            call, num_kernels, num_externs, library_calls = hit
            for name in library_calls:
                counters.record_library_call(name)
            log.info("graph %d (%s, %s): loaded from the compile cache in %.3f s",
                     dump.graph_id, kind, target, time.perf_counter() - dump.started)
        else:
            call, num_kernels, num_externs = compile_part(compiled_gm, dump, frozen_inputs,
                                                          cache_key)
        counters.bump("compiled_graphs")
        counters.bump(f"compiled_{kind}_graphs")
        counters.bump(f"{target}_graphs")
        if frontend.has_symbolic_sizes(example_inputs):
            counters.bump("dynamic_graphs")
        counters.bump("kernels", num_kernels)
        counters.bump("extern_calls", num_externs)
        log.info("graph %d (%s, %s): %d kernels, %d library calls, compiled in %.2f s: %s",
                 dump.graph_id, kind, target, num_kernels, num_externs,
                 time.perf_counter() - dump.started, dump.summary())
    except DynoCompileError as error:
        log.info("graph %d (%s, %s): not compiled whole after %.2f s: %s: %s",
                 dump.graph_id, kind, target, time.perf_counter() - dump.started,
                 error.stage, error.reason)
        call = _compile_with_eager_ops(compiled_gm, kind, dump, error, compile_part, target)
        if call is None:
            return fall_back(error)
    except Exception as error:  # never break the user's program
        return fall_back(DynoCompileError("internal error", f"{type(error).__name__}: {error}"))
    call = with_objects(call)

    state = {"eager": False}
    # A graph that communicates is never run a second time after a failure: this process
    # alone would issue its collectives again (the other processes wait in theirs).
    communicates = any(getattr(node.target, "namespace", None) == COLLECTIVE_NAMESPACE
                       for node in gm.graph.nodes if node.op == "call_function")

    def run(args):
        if not state["eager"]:
            try:
                return call(args)
            except host_runtime.CollectiveFailed as error:
                raise error.__cause__  # the collective's own error, as eager raises it
            except host_runtime.CheckFailed as error:
                if communicates:
                    raise
                # These inputs fail a check (an index out of range, sizes this dynamic
                # graph cannot take): this call runs eagerly, which raises eager's own
                # error for bad inputs; the next call runs compiled again.
                failure = DynoCompileError("runtime check", str(error))
                counters.record_runtime_fallback(f"{kind} graph {dump.graph_id}: {failure}")
                _warn_once(dump.graph_id, failure)
                return gm(*args)
            except Exception as error:  # a runtime failure switches this graph to eager
                if communicates:
                    raise
                state["eager"] = True
                failure = DynoCompileError("runtime", f"{type(error).__name__}: {error}")
                counters.record_runtime_fallback(f"{kind} graph {dump.graph_id}: {failure}")
                _warn_once(dump.graph_id, failure)
        return gm(*args)

    return _boxed(run)
