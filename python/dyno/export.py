"""Ahead-of-time export for the Triton target: compile on a build machine (no GPU needed),
run on a GPU server that has only torch and triton.

    dyno.export_triton(model, example_inputs, "out/")      # here: Dyno, MLIR, torch-mlir
    sys.path.insert(0, "out/"); import triton_runtime      # there: torch + triton
    program = triton_runtime.load("out/", device="cuda")
    y = program(x)

The directory holds the Triton kernels (`kernels.py`), the host wrapper (`wrapper.py`),
the two runtimes they need (the package `triton_runtime/`, `host_runtime.py`), the order of
the program's inputs (`program.json`) and, unless `save_weights=False`, the parameters
and buffers (`weights.pt`; otherwise bind them with `program.bind(model.state_dict())`).
"""
import contextlib
import json
import os
import shutil
import warnings

import torch

from .capture import cuda_autocast
from .driver.debug import GraphDump
from .errors import DynoCompileError
from .ops import library_calls


def export_triton(model: torch.nn.Module, example_inputs, directory: str,
                  save_weights: bool = True, autocast: torch.dtype | None = None,
                  options: dict | None = None) -> str:
    """Exports `model` (inference, static shapes) for the Triton target. An op Dyno
    cannot compile becomes a call of PyTorch's own kernel in the exported wrapper (the
    eager call torch.compile's per-op fallback makes), named in a warning and in
    program.json's "eager_ops"; where even that cannot be (an op whose arguments a call
    cannot pass), raises DynoCompileError with the reason and a reproducer. Returns
    `directory`.

    With `autocast` (torch.float16 or torch.bfloat16) the program computes what `model`
    computes under `torch.autocast("cuda", dtype=autocast)` on the GPU: CUDA autocast's
    own casts (matmuls and convolutions in the low precision; softmax, norms, exp, log,
    losses in float32), traced here with CUDA fake tensors (see cuda_autocast.py). A model
    whose forward enters `torch.autocast("cuda")` itself is traced the same way, with or
    without `autocast` (on CPU tensors that region would disable itself). `options`:
    torch.compile's options for backend="mlir" (target "triton" if given)."""
    from .driver.compiler import CompileOptions

    compile_options = CompileOptions.from_user(options)
    if compile_options.target not in ("auto", "triton"):
        raise ValueError(f"dyno: export_triton compiles for the Triton target, not "
                         f"{compile_options.target!r}")
    example_inputs = tuple(example_inputs)
    on_cuda = autocast is not None
    if not on_cuda:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exported = _exported(model, example_inputs, None, on_cuda=False)
        # A forward that enters torch.autocast("cuda") itself: on CPU tensors the region
        # disabled itself; traced as on the GPU instead, with its own casts.
        on_cuda = cuda_autocast.disabled_cuda_autocast(caught)
        if not on_cuda:  # the trace stands: its warnings are the user's
            for warning in caught:
                warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                       warning.lineno)
    if on_cuda:
        exported = _exported(model, example_inputs, autocast, on_cuda=True)
    state_dict, constants = exported.state_dict, exported.constants
    if on_cuda:  # the traced copy's tensors are fake: save the model's
        state_dict, constants = cuda_autocast.real_tensors(exported, model)
        cuda_autocast.devices_as_host(exported.graph_module)
    signature = exported.graph_signature
    kinds = {"PARAMETER": "parameter", "BUFFER": "buffer", "CONSTANT_TENSOR": "constant",
             "USER_INPUT": "user_input", "TOKEN": "token"}
    inputs, weights, user_index = [], {}, 0
    for spec in signature.input_specs:
        kind = kinds.get(spec.kind.name)
        if kind is None:
            raise DynoCompileError("export", f"unsupported graph input kind {spec.kind.name}")
        if kind == "user_input":
            inputs.append({"kind": kind, "index": user_index})
            user_index += 1
            continue
        if kind == "token":  # an effect token (linalg's error checks): None at run time
            inputs.append({"kind": kind})
            continue
        # A buffer the model does not persist (transformers' `position_ids`, rotary
        # `inv_freq`) is not in its state_dict, so bind() could not supply it: it is
        # saved with the program, as constants are.
        persistent = kind != "constant" and spec.target in state_dict
        if kind == "buffer" and not persistent:
            kind = "constant"
        inputs.append({"kind": kind, "name": spec.target})
        value = state_dict[spec.target] if persistent else constants[spec.target]
        if kind == "constant" or save_weights:
            weights[spec.target] = value.detach().cpu()
    outputs = [spec for spec in signature.output_specs
               if spec.kind.name not in ("USER_OUTPUT", "TOKEN")]
    if outputs:
        raise DynoCompileError("export", "the model mutates its buffers (e.g. batch norm in "
                               "training mode); export it in eval() mode")

    inputs = _constants_as_literals(exported.graph_module, inputs, weights)
    # Effect tokens come first among the outputs; the program returns the user's.
    tokens = sum(spec.kind.name == "TOKEN" for spec in signature.output_specs)
    spec = {"inputs": inputs, "single_output": len(signature.output_specs) - tokens == 1,
            "output_tokens": tokens}
    return _write_program(directory, exported.graph_module, spec, weights, compile_options)


# The most elements a constant of an exported program has to be compiled in as a literal.
LITERAL_CONSTANT_ELEMENTS = 1 << 16


def _constants_as_literals(graph_module: torch.fx.GraphModule, inputs: list,
                           weights: dict) -> list:
    """The constants of an inference export (lifted tensors, buffers the model does not
    persist: Swin's relative position index, BERT's position and token type ids) are
    saved with the program and no caller can change them, so the compiler may know their
    values: each integer (or bool) one of at most LITERAL_CONSTANT_ELEMENTS elements
    becomes a `get_attr` literal instead of a graph input (torch-mlir imports it as a
    dense constant, which the bounds on values read: a gather at a constant index table
    needs no check at run time). Float constants (rotary frequencies) stay inputs: no
    bound needs them, and their kernels read them as they are. Returns the inputs that
    remain; `weights` loses the constants compiled in."""
    placeholders = [node for node in graph_module.graph.nodes if node.op == "placeholder"]
    if len(placeholders) != len(inputs):
        raise DynoCompileError("export", f"{len(placeholders)} graph inputs for "
                               f"{len(inputs)} input specs")
    remaining = []
    for index, (node, entry) in enumerate(zip(placeholders, inputs)):
        value = weights.get(entry["name"]) if entry["kind"] == "constant" else None
        if (value is None or value.is_floating_point() or value.is_complex()
                or value.numel() > LITERAL_CONSTANT_ELEMENTS):
            remaining.append(entry)
            continue
        attribute = f"_dyno_literal_{index}"
        graph_module.register_buffer(attribute, value)
        with graph_module.graph.inserting_before(node):
            literal = graph_module.graph.get_attr(attribute)
        literal.meta = dict(node.meta)
        node.replace_all_uses_with(literal)
        graph_module.graph.erase_node(node)
        del weights[entry["name"]]
    graph_module.recompile()
    return remaining


def _exported(model, example_inputs, autocast, on_cuda: bool):
    """torch.export's program of `model` with Dyno's decompositions; `on_cuda` traces it
    as on the GPU (cuda_autocast.tracing) under `autocast` (a dtype, or None for the
    model's own regions only)."""
    from .ops import decompositions

    with contextlib.ExitStack() as stack:
        traced, traced_inputs = model, example_inputs
        if on_cuda:
            traced, traced_inputs = stack.enter_context(
                cuda_autocast.tracing(model, example_inputs, autocast))
        with torch.no_grad():
            exported = torch.export.export(traced, traced_inputs)
            _views_as_reshapes(exported.graph_module)
            return exported.run_decompositions(decompositions.table("triton"))


def export_triton_training(model: torch.nn.Module, loss_fn, example_inputs,
                           directory: str, save_weights: bool = True) -> str:
    """Exports a training step of `model` for the Triton target: the forward, the loss
    `loss_fn(model(*inputs), *inputs)` and the backward, as one graph (AOTAutograd's joint
    graph, static shapes). On the GPU server, `triton_runtime.load(directory).bind(model)`
    then `program(*inputs)` returns the loss and accumulates every parameter's gradient
    into its `.grad`, as `loss.backward()` would; the optimizer is the user's. Buffers the
    step updates (batch norm's running statistics) are updated in place."""
    from torch._functorch.aot_autograd import aot_export_module

    from .ops import decompositions

    step = _LossOf(model, loss_fn)
    example_inputs = tuple(example_inputs)
    graph_module, signature = aot_export_module(
        step, example_inputs, trace_joint=True, output_loss_index=0,
        decompositions=decompositions.table("triton"))
    prefix = "model."
    persistent = model.state_dict(keep_vars=True)
    placeholders = [node.name for node in graph_module.graph.nodes if node.op == "placeholder"]
    sources = {**signature.inputs_to_parameters, **signature.inputs_to_buffers}
    tensors = dict(step.named_parameters())
    tensors.update(step.named_buffers())
    inputs, weights, user_index = [], {}, 0
    for placeholder in placeholders:
        if placeholder not in sources:
            inputs.append({"kind": "user_input", "index": user_index})
            user_index += 1
            continue
        name = sources[placeholder][len(prefix):]
        if placeholder in signature.inputs_to_parameters:
            kind = "parameter"
        else:  # a buffer the model does not persist is saved with the program
            kind = "buffer" if name in persistent else "constant"
        inputs.append({"kind": kind, "name": name})
        if kind == "constant" or save_weights:
            weights[name] = tensors[prefix + name].detach().cpu()
    if signature.parameters_to_mutate or signature.user_inputs_to_mutate:
        raise DynoCompileError("export", "the training step mutates its parameters or "
                               "inputs in place; only buffers may be updated")
    if signature.input_tokens or signature.output_tokens:
        raise DynoCompileError("export", "the training step has side effects (effect "
                               "tokens); export_triton_training does not thread them")
    gradients = signature.backward_signature.gradients_to_parameters
    output_names = [str(node) for node in graph_module.graph.output_node().args[0]]
    updated = len(signature.buffers_to_mutate)
    spec = {
        "inputs": inputs,
        "training": {
            "updated_buffers": [signature.buffers_to_mutate[name][len(prefix):]
                                for name in output_names[:updated]],
            # One entry per output after the loss: the parameter its gradient is for
            # (None for an output that is no parameter's gradient).
            "gradients": [gradients[name][len(prefix):] if name in gradients else None
                          for name in output_names[updated + 1:]],
        },
        "single_output": False, "output_tokens": 0,
    }
    return _write_program(directory, graph_module, spec, weights)


class _LossOf(torch.nn.Module):
    """The model and its loss as one module whose single output is the loss."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, *inputs):
        return (self.loss_fn(self.model(*inputs), *inputs),)


def _write_program(directory: str, graph_module: torch.fx.GraphModule, spec: dict,
                   weights: dict, options=None) -> str:
    """Lowers `graph_module` for the Triton target (with `options`, CompileOptions) and
    writes the export's files."""
    from .driver import compiler
    from .targets import triton

    dump = GraphDump()
    dump.write("00-aten-fx.py", graph_module.code)
    options = options or compiler.CompileOptions()
    try:
        lowered = triton.TARGET.lower(graph_module, dump, options)
    except DynoCompileError as error:
        eager_ops = _ops_dyno_cannot_compile(graph_module)
        if not eager_ops:
            raise
        names = sorted({str(op) for op in eager_ops})
        warnings.warn(f"dyno.export_triton: {', '.join(names)} cannot be compiled ({error}); "
                      "the exported program calls PyTorch's own kernels for them",
                      RuntimeWarning, stacklevel=3)
        with library_calls.called_as_library(eager_ops):
            lowered = triton.TARGET.lower(graph_module, GraphDump(), options)
        spec = {**spec, "eager_ops": names}
    kernels_source, wrapper_source = lowered.kernels_source, lowered.wrapper_source
    dump.discard_temporary()
    if "training" not in spec and lowered.channels_last_filters:
        # The program keeps its own copies of these filters channels-last (runtime.Program).
        inputs = [dict(entry) for entry in spec["inputs"]]
        for position in lowered.channels_last_filters:
            if inputs[position]["kind"] not in ("user_input", "token"):
                inputs[position]["layout"] = "channels_last"
        spec = {**spec, "inputs": inputs}

    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "kernels.py"), "w") as file:
        file.write(kernels_source)
    with open(os.path.join(directory, "wrapper.py"), "w") as file:
        file.write(wrapper_source)
    _copy_runtimes(directory)
    with open(os.path.join(directory, "program.json"), "w") as file:
        json.dump({**spec, "library_calls": sorted(set(lowered.library_calls)),
                   "torch_version": torch.__version__}, file, indent=1)
    weights_path = os.path.join(directory, "weights.pt")
    if weights:
        torch.save(weights, weights_path)
    elif os.path.exists(weights_path):
        os.remove(weights_path)
    return directory


def _copy_runtimes(directory: str) -> None:
    """The runtimes an exported program needs, under the names its loader imports them by:
    the Triton runtime package as triton_runtime/, the host runtime as host_runtime.py."""
    from .targets import host_runtime
    from .targets.triton import runtime

    package = os.path.join(directory, "triton_runtime")
    for stale in (package, os.path.join(directory, "triton_runtime.py")):  # an older export's
        if os.path.isdir(stale):
            shutil.rmtree(stale)
        elif os.path.exists(stale):
            os.remove(stale)
    shutil.copytree(os.path.dirname(runtime.__file__), package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copyfile(host_runtime.__file__, os.path.join(directory, "host_runtime.py"))


def _ops_dyno_cannot_compile(graph_module: torch.fx.GraphModule) -> list:
    """The ATen ops of `graph_module` that the Triton target cannot compile, each checked
    alone (partition.op_is_supported, as torch.compile's per-op fallback checks them)."""
    from .driver import partition
    from .targets import triton

    return [node.target for node in graph_module.graph.nodes
            if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
            and not partition.op_is_supported(node, triton.TARGET)]


def _views_as_reshapes(graph_module: torch.fx.GraphModule) -> None:
    """`aten.view` requires strides compatible with the new shape. torch.export records
    the views of the eager run; Dyno's decompositions (attention, for one) may lay an
    intermediate out differently, and re-tracing a view of it then fails (GPT-2's
    `x.view(-1, x.size(-1))` after attention). An inference graph has no mutation that
    could observe aliasing, so a reshape computes the same values whatever the layout."""
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.aten.view.default:
            node.target = torch.ops.aten.reshape.default
    graph_module.recompile()
