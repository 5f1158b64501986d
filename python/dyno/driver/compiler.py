"""Compiles one ATen FX graph (from AOTAutograd) into a callable, or falls back to eager.

The target (targets/target.py) is chosen from the inputs' device, or named by the
options; the compile is its `lower`, the compile cache's store and its `load`, or on a
cache hit the entry's restore and load. Stages, each dumped to DYNO_DEBUG_DIR/graph_<n>/
when set: 00-aten-fx.py (the graph as AOTAutograd handed it over); 01-torch.mlir to
04-*.mlir and Triton's 05-kernels.py from lowering/graph_lowering.lower_graph (its
docstring lists them); the generated host wrapper, 05-wrapper.py (CPU) or 06-wrapper.py
(Triton), from the targets' `lower`.
"""
import time
import warnings
from dataclasses import dataclass
from typing import Callable, List

import torch

from . import compile_cache
from .. import counters, environment, targets
from ..capture import opaque_inputs
from ..lowering import frontend
from ..targets import host_runtime
from .debug import GraphDump, log
from ..errors import DynoCompileError
from ..ops.library_calls import COLLECTIVE_NAMESPACE

_warned = set()


@dataclass(frozen=True)
class CompileOptions:
    target: str = "auto"  # "auto" (from the inputs' device) or a name of targets.names()
    # Triton: time each kernel's block-size configurations once (a no-op on the CPU).
    # Options the user leaves out take their defaults from environment.py's table
    # (`from_user`: DYNO_AUTOTUNE, DYNO_CACHE); no other code reads those variables.
    autotune: bool = False
    # Long float sums in blocks (dyno-block-long-sums). Off only to measure what the
    # blocks cost (benchmarks/experiments/accuracy_cost.py): long sums then lose accuracy.
    block_long_sums: bool = True
    # Inference graphs may keep their parameters and buffers in the forms the libraries
    # run fastest: the user promises not to change them behind autograd's back (writes
    # through `.data`). What each target keeps: its package's docstring (CPU: oneDNN's
    # packed weights, host_runtime.PackedWeights; Triton: padded GEMM weights, and K-major
    # copies of float32 weights stored [K, N] for the tensor-core products).
    freezing: bool = False
    # Graphs are stored in, and loaded from, the on-disk compile cache
    # (compile_cache.py).
    cache: bool = True
    # Graphs keep their intermediates in a per-graph workspace from call to call
    # (targets/memory_planning.py; on a GPU one per CUDA stream); False: allocated on
    # every call, released at their last read, and nothing is held between calls.
    workspace: bool = True
    # Attention under a constant causal mask (what decoders build from aranges) runs as
    # causal attention, without the mask (causal_masks.py); False leaves masks as they are.
    causal_masks: bool = True
    # Triton: large float32 matrix products run on the tensor cores as three TF32 products
    # (runtime/float32_products.py: faster than cuBLAS's float32 GEMM and closer to the
    # float64 product, as measured); False: cuBLAS's float32 GEMM, as eager.
    tensor_core_float32: bool = True

    @staticmethod
    def from_user(options) -> "CompileOptions":
        options = dict(options or {})
        target = options.pop("target", "auto")
        defaults = (("autotune", environment.enabled("DYNO_AUTOTUNE")),
                    ("block_long_sums", True), ("freezing", False),
                    ("cache", environment.get("DYNO_CACHE") != "0"), ("workspace", True),
                    ("causal_masks", True), ("tensor_core_float32", True))
        flags = {name: options.pop(name, default) for name, default in defaults}
        if options:
            raise ValueError(f"dyno: unknown options {sorted(options)}; known: ['autotune', "
                             "'block_long_sums', 'cache', 'causal_masks', 'freezing', "
                             "'target', 'tensor_core_float32', 'workspace']")
        choices = ("auto", *targets.names())
        if target not in choices:
            raise ValueError(f"dyno: target must be one of {list(choices)}, got {target!r}")
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise ValueError(f"dyno: {name} must be True or False, got {value!r}")
        return CompileOptions(target=target, **flags)


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
    """(target, device): the target named by the options, or the device's
    (targets.for_device: Triton for CUDA inputs, CPU code for CPU inputs). Triton kernels
    on CPU tensors run under Triton's interpreter."""
    devices = {t.device for t in example_inputs if isinstance(t, torch.Tensor)}
    if len(devices) > 1:
        raise DynoCompileError("frontend", f"inputs on several devices: {sorted(map(str, devices))}")
    device = next(iter(devices)) if devices else torch.device("cpu")
    target = targets.for_device(device) if options.target == "auto" \
        else targets.get(options.target)
    if device.type not in target.devices:
        raise DynoCompileError("frontend", f"the {target.name} target cannot run on {device}")
    return target, device


def _compile(target, gm: torch.fx.GraphModule, dump: GraphDump, device, options,
             frozen_inputs: frozenset = frozenset(), cache_key=None,
             parameter_inputs: frozenset = frozenset()):
    """`target`'s lower and load, with the compile cache's store in between (under
    `cache_key`, this graph's key, when given): (call, the artifact). `frozen_inputs`:
    positions of the inputs that stay the same from call to call (parameters under
    `freezing`); `parameter_inputs`: an inference graph's parameters and buffers."""
    artifact = target.lower(gm, dump, options, frozen_inputs, parameter_inputs)
    stored = False
    if cache_key is not None:
        try:
            with dump.stage("cache store"):
                entry = compile_cache.store(cache_key, target, artifact)
                if entry is not None:
                    artifact = artifact.stored(entry)
                    stored = True
        except Exception as error:  # noqa: BLE001 (the compiled graph runs all the same)
            log.info("graph %d: not stored in the compile cache: %s: %s", dump.graph_id,
                     type(error).__name__, error)
    try:
        with dump.stage("load"):
            call = target.load(artifact, dump.graph_id, device, options)
    except Exception:
        if stored:  # an entry that does not load is not kept
            compile_cache.discard(cache_key)
        raise
    dump.discard_temporary()
    return call, artifact


def _compile_with_eager_ops(gm: torch.fx.GraphModule, kind: str, dump: GraphDump,
                            error: DynoCompileError, compile_part, target):
    """Per-op fallback: compiles the supported subgraphs, leaves the other ops eager.
    Returns a callable, or None when no part of the graph compiles."""
    from . import partition

    def compile_subgraph(submodule):
        sub_dump = GraphDump()
        sub_dump.write("00-aten-fx.py", submodule.code)
        call, artifact = compile_part(submodule, sub_dump)
        counters.bump("kernels", artifact.num_kernels)
        counters.bump("extern_calls", artifact.extern_calls)
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
        counters.bump(f"{target.name}_graphs")
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


def _parameter_inputs(inference: bool) -> frozenset:
    """The graph inputs that are parameters or buffers (AOTAutograd's static inputs) of
    an inference graph, whose packed copies the runtime may keep from call to call
    (checked against the inputs' bytes unless frozen); a training graph's parameters
    change every step."""
    if not inference:
        return frozenset()
    context = torch._guards.TracingContext.try_get()
    metadata = getattr(context, "fw_metadata", None)
    return frozenset(getattr(metadata, "static_input_indices", None) or ())


def _look_up_cache(gm, example_inputs, options, kind, frozen_inputs, parameter_inputs,
                   target, device, dump):
    """(the compile cache's key for this graph or None, (call, artifact) or None).
    A failure here is a miss, never the user's error."""
    try:
        with dump.stage("cache lookup"):
            key = compile_cache.graph_key(gm, example_inputs, options, kind, frozen_inputs,
                                          target, parameter_inputs)
            return key, (compile_cache.load(key, dump.graph_id, device, options)
                         if key else None)
    except Exception as error:  # noqa: BLE001 (a cache problem costs a compile)
        log.info("graph %d: compile cache lookup failed: %s: %s", dump.graph_id,
                 type(error).__name__, error)
        return None, None


def _communicates(gm: torch.fx.GraphModule) -> bool:
    return any(getattr(node.target, "namespace", None) == COLLECTIVE_NAMESPACE
               for node in gm.graph.nodes if node.op == "call_function")


def compile_graph(gm: torch.fx.GraphModule, example_inputs: List, options: CompileOptions,
                  kind: str, inference: bool = False) -> Callable:
    """AOTAutograd's compiler hook: returns a boxed callable running the graph.
    `inference`: AOTAutograd's inference graph (no backward follows)."""
    dump = GraphDump()
    dump.write("00-aten-fx.py", lambda: gm.code)
    eager = _boxed(lambda args: gm(*args))
    # The backend then runs Dynamo's graph instead, at eager's speed; but not for a graph
    # that communicates. Dyno's decompositions split coalesced collectives per tensor,
    # and its compiled graphs keep the AOT graph's order of collective starts, so every
    # process issues the collectives of this graph, not of Dynamo's: where one process
    # failed to compile a graph that another compiled (a failure on one machine only),
    # Dynamo's graph sent one coalesced message where the others sent one per tensor,
    # and gloo aborted a process ("Received data size doesn't match expected size").
    communicates = _communicates(gm)
    eager.dyno_runs_eagerly = not communicates

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
        for note in target.check_options(options):
            log.info("graph %d: %s", dump.graph_id, note)
    except DynoCompileError as error:
        return fall_back(error)

    def compile_part(graph, part_dump, frozen_inputs=frozenset(), cache_key=None,
                     parameter_inputs=frozenset()):
        return _compile(target, graph, part_dump, device, options, frozen_inputs, cache_key,
                        parameter_inputs)

    # (Objects taken out of the inputs would shift the positions: only DTensor training
    # graphs have them.)
    parameter_inputs = _parameter_inputs(inference) if compiled_gm is gm else frozenset()
    # Under `freezing` they are promised not to change behind autograd's back (packed
    # copies are checked by version only).
    frozen_inputs = parameter_inputs if options.freezing else frozenset()
    cache_key, hit = None, None
    if options.cache and compile_cache.root() is not None:
        cache_key, hit = _look_up_cache(compiled_gm, example_inputs, options,
                                        f"{kind}{'/inference' if inference else ''}",
                                        frozen_inputs, parameter_inputs, target, device,
                                        dump)
    try:
        if hit is not None:
            call, artifact = hit
            for name in artifact.library_calls:
                counters.record_library_call(name)
            log.info("graph %d (%s, %s): loaded from the compile cache in %.3f s",
                     dump.graph_id, kind, target.name, time.perf_counter() - dump.started)
        else:
            call, artifact = compile_part(compiled_gm, dump, frozen_inputs, cache_key,
                                          parameter_inputs)
        num_kernels, num_externs = artifact.num_kernels, artifact.extern_calls
        counters.bump("compiled_graphs")
        counters.bump(f"compiled_{kind}_graphs")
        counters.bump(f"{target.name}_graphs")
        if frontend.has_symbolic_sizes(example_inputs):
            counters.bump("dynamic_graphs")
        counters.bump("kernels", num_kernels)
        counters.bump("extern_calls", num_externs)
        log.info("graph %d (%s, %s): %d kernels, %d library calls, compiled in %.2f s: %s",
                 dump.graph_id, kind, target.name, num_kernels, num_externs,
                 time.perf_counter() - dump.started, dump.summary())
    except DynoCompileError as error:
        log.info("graph %d (%s, %s): not compiled whole after %.2f s: %s: %s",
                 dump.graph_id, kind, target.name, time.perf_counter() - dump.started,
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
