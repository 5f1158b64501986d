"""Compiles one ATen FX graph (from AOTAutograd) into a callable, or falls back to eager.

Stages, each dumped to DYNO_DEBUG_DIR/graph_<n>/ when set:
  00-aten-fx.py          the graph as AOTAutograd handed it over
  01-torch.mlir          torch-mlir's FX import (torch dialect)
  02-linalg.mlir         after torch-mlir's lowering (linalg-on-tensors)
  03-kernels.mlir        after dyno-kernel-formation-pipeline (host schedule + kernels)
  04-llvm.mlir           after dyno-cpu-lowering-pipeline (kernels in the LLVM dialect)
  05-wrapper.py          the generated host wrapper
"""
import warnings
from dataclasses import dataclass
from typing import Callable, List

import torch

from . import counters, frontend, pipeline
from .debug import GraphDump
from .errors import DynoCompileError

_warned = set()


@dataclass(frozen=True)
class CompileOptions:
    target: str = "auto"  # "auto" (from the inputs' device) or "cpu"

    @staticmethod
    def from_user(options) -> "CompileOptions":
        options = dict(options or {})
        target = options.pop("target", "auto")
        if options:
            raise ValueError(f"dyno: unknown options {sorted(options)}; known: ['target']")
        if target not in ("auto", "cpu"):
            raise ValueError(f"dyno: target must be 'auto' or 'cpu', got {target!r}")
        return CompileOptions(target=target)


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


def _target_device(example_inputs, options: CompileOptions) -> str:
    if options.target == "cpu":
        return "cpu"
    devices = {t.device.type for t in example_inputs if isinstance(t, torch.Tensor)}
    if devices - {"cpu"}:
        raise DynoCompileError(
            "frontend", f"inputs on {sorted(devices)}: only the CPU target exists so far")
    return "cpu"


def _compile_cpu(gm: torch.fx.GraphModule, dump: GraphDump):
    from . import ir
    from .targets import cpu, wrapper

    frontend.check_graph_ops(gm)
    outputs = frontend.graph_outputs(gm)
    # The tools read and write files; they are the debug dumps when DYNO_DEBUG_DIR is set.
    directory = dump.directory()
    frontend.import_to_linalg(frontend.without_none_outputs(gm), directory)
    linalg_path = directory / "02-linalg.mlir"
    kernels_path = directory / "03-kernels.mlir"
    pipeline.run_pipeline(pipeline.KERNEL_FORMATION, linalg_path, kernels_path)
    llvm_path = directory / "04-llvm.mlir"
    lowered = pipeline.run_pipeline(pipeline.CPU_LOWERING, kernels_path, llvm_path)

    with ir.Context():
        module = ir.Module.parse(lowered)
        host = kernels_module = None
        for op in module.body.operations:
            if op.operation.name == "func.func":
                host = op
            elif op.operation.name == "builtin.module":
                kernels_module = op
        if host is None or kernels_module is None:
            raise DynoCompileError("wrapper", "lowered module lacks the host function or kernels")
        builder = wrapper.WrapperBuilder(host, ir.AsmState(host))
        source = builder.emit(outputs)
        kernels_text = str(kernels_module)
    dump.write("05-wrapper.py", source)

    kernels = cpu.CpuKernels(kernels_text, builder.kernel_signatures)
    namespace = wrapper.wrapper_globals(kernels, cpu.sync_threads)
    exec(compile(source, f"<dyno graph {dump.graph_id}>", "exec"), namespace)
    dump.discard_temporary()
    return namespace["call"], len(builder.kernel_signatures), builder.extern_calls


def _compile_with_eager_ops(gm: torch.fx.GraphModule, kind: str, dump: GraphDump,
                            error: DynoCompileError):
    """Per-op fallback: compiles the supported subgraphs, leaves the other ops eager.
    Returns a callable, or None when no part of the graph compiles."""
    from . import partition

    def compile_subgraph(submodule):
        sub_dump = GraphDump()
        sub_dump.write("00-aten-fx.py", submodule.code)
        call, num_kernels, num_externs = _compile_cpu(submodule, sub_dump)
        counters.bump("kernels", num_kernels)
        counters.bump("extern_calls", num_externs)
        return call

    try:
        fused, compiled, _ = partition.compile_partitions(gm, compile_subgraph)
    except Exception:  # partitioning is best effort; the caller falls back to eager
        return None
    if compiled == 0:
        return None
    eager_ops = partition.eager_op_names(fused)
    counters.bump("partially_compiled_graphs")
    for name in eager_ops:
        counters.record_eager_op(name)
    _warn_once(dump.graph_id, DynoCompileError(
        "per-op fallback", f"{len(eager_ops)} op(s) run eagerly ({', '.join(eager_ops)}), "
        f"the rest is compiled; whole-graph compile failed: {error.stage}: {error.reason}",
        error.reproducer), what="is partly compiled")
    return lambda args: fused(*args)


def compile_graph(gm: torch.fx.GraphModule, example_inputs: List, options: CompileOptions,
                  kind: str) -> Callable:
    """AOTAutograd's compiler hook: returns a boxed callable running the graph."""
    dump = GraphDump()
    dump.write("00-aten-fx.py", gm.code)
    eager = _boxed(lambda args: gm(*args))

    def fall_back(error: DynoCompileError) -> Callable:
        counters.record_fallback(f"{kind} graph {dump.graph_id}: {error.stage}: {error.reason}")
        _warn_once(dump.graph_id, error)
        return eager

    try:
        device = _target_device(example_inputs, options)
        frontend.check_graph_inputs(example_inputs, device)
    except DynoCompileError as error:
        return fall_back(error)
    try:
        call, num_kernels, num_externs = _compile_cpu(gm, dump)
        counters.bump("compiled_graphs")
        counters.bump(f"compiled_{kind}_graphs")
        counters.bump("kernels", num_kernels)
        counters.bump("extern_calls", num_externs)
    except DynoCompileError as error:
        call = _compile_with_eager_ops(gm, kind, dump, error)
        if call is None:
            return fall_back(error)
    except Exception as error:  # never break the user's program
        return fall_back(DynoCompileError("internal error", f"{type(error).__name__}: {error}"))

    state = {"eager": False}

    def run(args):
        if not state["eager"]:
            try:
                return call(args)
            except Exception as error:  # a runtime failure switches this graph to eager
                state["eager"] = True
                failure = DynoCompileError("runtime", f"{type(error).__name__}: {error}")
                counters.record_runtime_fallback(f"{kind} graph {dump.graph_id}: {failure}")
                _warn_once(dump.graph_id, failure)
        return gm(*args)

    return _boxed(run)
