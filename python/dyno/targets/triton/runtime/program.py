"""A program exported for the Triton target (dyno.export_triton): `load(directory)` reads
its kernels, wrapper and weights; `Program` runs it, recording a CUDA graph where it can."""
import importlib.util
import json
import os
import warnings

import torch

from .autotune import autotune_requested
from .kernel_files import TritonKernels


def _fresh_copy(tensor: torch.Tensor) -> torch.Tensor:
    """A copy of a CUDA graph's output that later replays leave alone, laid out as the
    output: a view that spans most of its memory but is not dense (a padded product's
    rows, PaddedProducts) is copied as its memory whole, one memcpy, where `clone` would
    copy it element by element into dense strides."""
    storage = tensor.untyped_storage()
    if tensor.is_contiguous() or tensor.dim() < 2 or tensor.stride()[-1] != 1 \
            or storage.nbytes() > 1.25 * tensor.numel() * tensor.element_size():
        return tensor.clone()
    return torch.empty((0,), dtype=tensor.dtype, device=tensor.device).set_(
        storage.clone(), tensor.storage_offset(), tensor.shape, tensor.stride())


def _clear_cublas_workspaces() -> None:
    """Drops PyTorch's cached cuBLAS workspaces (one per cuBLAS handle and stream).

    Every recording on the default capture stream used to take the workspace cached for
    that stream: one made while an earlier graph recorded, in that graph's private memory
    pool. Inductor's CUDA-graph trees clear the cache around each of their warm-ups and
    recordings; when the earlier graph had gone, the clear freed the last block of its
    pool, the memory went back to the device, and the later graph still wrote its
    products' workspace there: `CUDA error: an illegal memory access` in one process that
    ran Dyno's CUDA-graph programs beside Inductor's reduce-overhead compiles (issue 52,
    benchmarks/gpu_soak.py). Cleared before a recording, the workspace it records is
    made in its own pool, which lives as long as the graph; cleared after, no later
    recording takes it. Inductor does the same (cudagraph_trees.clear_cublas_manager)."""
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()


class Program:
    """A model exported for the Triton target (dyno.export_triton): call it with the
    model's inputs; parameters and buffers come from the export's weights file or from
    `bind(model)` / `bind(state_dict)`.

    A training step (dyno.export_triton_training) returns the loss and accumulates each
    parameter's gradient into the bound parameter's `.grad`, as `loss.backward()` does:
    bind the model itself (`bind(model)`), so that its optimizer sees the gradients.

    With CUDA graphs (by default on a CUDA device, unless the program synchronizes with
    the host) the first call records the whole program (kernels, library calls,
    allocations) in a CUDA graph and later calls replay it: the inputs are copied into the
    graph's own buffers and the outputs are returned as fresh copies, so no result is
    overwritten by a later call. Shapes are static, so one graph serves every call. The
    graph reads the bound parameters where they are: update them in place (optimizers
    do); binding again records a new graph."""

    def __init__(self, call, spec: dict, weights: dict, device, cuda_graphs: bool = False):
        self.call = call
        self.spec = spec
        self.device = torch.device(device)
        # Inputs whose reads want another layout (program.json's "layout").
        self.layouts = {entry["name"]: entry["layout"] for entry in spec["inputs"]
                        if "layout" in entry}
        self.bound = {name: self._laid_out(name, tensor.to(self.device))
                      for name, tensor in weights.items()}
        self.cuda_graphs = cuda_graphs and self.device.type == "cuda"
        self.graph = None

    def _laid_out(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        """`tensor`, one of the program's own copies, in the layout its reads want:
        convolution filters channels-last (program.json's "layout"), which a GPU
        convolution in bf16/f16 would otherwise copy to on every call."""
        if self.layouts.get(name) == "channels_last" and tensor.dim() == 4:
            return tensor.contiguous(memory_format=torch.channels_last)
        return tensor

    def bind(self, state) -> "Program":
        """Takes parameters and buffers by name: a module (its parameters and buffers
        themselves, as training needs) or a dict such as a model's state_dict()."""
        if isinstance(state, torch.nn.Module):
            module = state
            state = dict(module.named_buffers(remove_duplicate=False))
            state.update(module.named_parameters(remove_duplicate=False))  # tied: each name
        for entry in self.spec["inputs"]:
            if entry["kind"] not in ("user_input", "token") and entry["name"] in state:
                given = state[entry["name"]]
                bound = given.to(self.device)
                # A tensor bound as it is stays the caller's (updated in place, read in
                # place); only a copy made here is the program's to lay out.
                self.bound[entry["name"]] = bound if bound is given else self._laid_out(
                    entry["name"], bound)
        self.graph = None
        return self

    def _arguments(self, inputs):
        args = []
        for entry in self.spec["inputs"]:
            if entry["kind"] == "user_input":
                args.append(inputs[entry["index"]])
            elif entry["kind"] == "token":
                args.append(None)
            elif entry["name"] in self.bound:
                args.append(self.bound[entry["name"]])
            else:
                raise KeyError(f"dyno: no value for {entry['kind']} {entry['name']!r}; "
                               "export with its weights or call bind(model)")
        return args

    def _capture(self, inputs):
        self.static_inputs = [x.clone() for x in inputs]
        args = self._arguments(self.static_inputs)
        # Warm up on a side stream: compiles and tunes every kernel before recording.
        stream = torch.cuda.Stream(self.device)
        stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(stream):
            for _ in range(2):
                self.call(args)
        torch.cuda.current_stream(self.device).wait_stream(stream)
        self.graph = torch.cuda.CUDAGraph()
        # cuBLAS's workspace, kept per (handle, stream), is recorded into the graph: the
        # one this records must be made during the recording, in this graph's memory
        # pool, and none left behind for a later recording to take (see
        # _clear_cublas_workspaces).
        _clear_cublas_workspaces()
        try:
            with torch.cuda.graph(self.graph):
                self.static_outputs = self.call(args)
        finally:
            _clear_cublas_workspaces()
        # The graph recorded its own workspace (memory_planning): the warm-up's goes.
        workspace = getattr(self.call, "__globals__", {}).get("_workspace")
        if workspace is not None:
            workspace.clear()

    def __call__(self, *inputs):
        # The program's casts are its own (an export under autocast= holds CUDA
        # autocast's): an autocast region around the call must not recast the library
        # calls between its kernels, as AOTAutograd's compiled functions also ensure.
        # Nor does autograd record its library calls (a training step computes its
        # gradients itself; a matmul's `out=` into the workspace refuses parameters that
        # require grad where autograd records).
        with torch.no_grad():
            if torch.is_autocast_enabled("cuda") or torch.is_autocast_enabled("cpu"):
                with torch.autocast("cuda", enabled=False), torch.autocast("cpu", enabled=False):
                    return self._run(inputs)
            return self._run(inputs)  # (entering the regions costs microseconds per call)

    def _run(self, inputs):
        if self.cuda_graphs and self.graph is None:
            try:
                self._capture(inputs)
            except RuntimeError as error:
                # A library routine synchronized with the host after all (PyTorch refuses
                # the copy or the sync before CUDA records it; fp32 grouped GEMMs copy
                # their offsets to the host): the program runs without a graph.
                self.graph, self.cuda_graphs = None, False
                warnings.warn(f"dyno: this program cannot be recorded in a CUDA graph "
                              f"({str(error).splitlines()[0]}); it runs without one",
                              RuntimeWarning, stacklevel=3)
        if not self.cuda_graphs:
            outputs = self.call(self._arguments(inputs))
        else:
            for index, (static, value) in enumerate(zip(self.static_inputs, inputs)):
                if value.shape != static.shape or value.dtype != static.dtype:
                    # copy_ would broadcast a smaller input into the recorded buffer
                    raise ValueError(
                        f"dyno: input {index} is {tuple(value.shape)} {value.dtype}; this "
                        f"program was exported for {tuple(static.shape)} {static.dtype}")
                static.copy_(value)
            self.graph.replay()
            outputs = [None if o is None else _fresh_copy(o) for o in self.static_outputs]
        outputs = outputs[self.spec.get("output_tokens", 0):]
        if "training" in self.spec:
            return self._finish_step(outputs)
        return outputs[0] if self.spec["single_output"] else tuple(outputs)

    def _finish_step(self, outputs):
        """A training step's outputs: updated buffers, the loss, then the gradients."""
        training = self.spec["training"]
        updated = len(training["updated_buffers"])
        for name, value in zip(training["updated_buffers"], outputs[:updated]):
            self.bound[name].copy_(value)
        loss, gradients = outputs[updated], outputs[updated + 1:]
        with torch.no_grad():
            for name, gradient in zip(training["gradients"], gradients):
                if name is None or gradient is None:
                    continue
                parameter = self.bound[name]
                if parameter.grad is None:
                    parameter.grad = gradient
                else:
                    parameter.grad.add_(gradient)
        return loss


def _sibling_module(directory: str, name: str):
    """Imports `name`.py from `directory` (an export), or from Dyno's package."""
    try:
        from ... import host_runtime  # inside the dyno package

        return host_runtime
    except ImportError:
        path = os.path.join(directory, f"{name}.py")
        spec = importlib.util.spec_from_file_location(f"dyno_export_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


# Library routines that never read results on the host (sorts, scatter-adds, attention,
# grouped GEMMs, whose group offsets stay on the device): CUDA graphs capture them, as
# they do torch.distributed's functional collectives.
_GRAPH_SAFE_LIBRARY_CALLS = ("aten.sort.stable", "aten.scatter_add.default",
                             "aten.scaled_dot_product_attention.default",
                             "aten._grouped_mm.default")


def _synchronizing_library_calls(spec) -> bool:
    """Whether the program calls a library routine that may synchronize with the host
    (program.json's "library_calls": the ATen routines its wrapper calls)."""
    return any(callee not in _GRAPH_SAFE_LIBRARY_CALLS
               and not callee.startswith("_c10d_functional.")
               for callee in spec["library_calls"])


def load(directory: str, device="cuda", autotune=None,
         cuda_graphs=None) -> Program:
    """Loads a program written by dyno.export_triton: needs only torch and triton.
    `autotune`: time each kernel's block sizes on its first launch (None: DYNO_AUTOTUNE).
    `cuda_graphs=None` records a CUDA graph on CUDA devices when the program allows one;
    True asks for it (with a warning where it cannot be), False turns it off."""
    with open(os.path.join(directory, "program.json")) as file:
        spec = json.load(file)
    host_runtime = _sibling_module(directory, "host_runtime")
    kernels = TritonKernels(os.path.join(directory, "kernels.py"), device,
                            autotune=autotune_requested(autotune),
                            compile_threads=host_runtime.compile_threads(),
                            check_failed=host_runtime.CheckFailed)
    namespace = host_runtime.wrapper_globals(kernels, lambda threads: None, device)
    with open(os.path.join(directory, "wrapper.py")) as file:
        source = file.read()
    exec(compile(source, os.path.join(directory, "wrapper.py"), "exec"), namespace)
    weights_path = os.path.join(directory, "weights.pt")
    weights = torch.load(weights_path, map_location="cpu") if os.path.exists(weights_path) else {}
    if cuda_graphs is not False and _synchronizing_library_calls(spec):
        # LAPACK's error checks read their info on the host (a sync, which CUDA graph
        # capture forbids): such a program runs without a graph.
        if cuda_graphs:
            warnings.warn("dyno: this program calls library routines (linear algebra, "
                          "FFTs) that synchronize with the host; it runs without CUDA "
                          "graphs", RuntimeWarning, stacklevel=2)
        cuda_graphs = False
    return Program(namespace["call"], spec, weights, device, cuda_graphs=cuda_graphs is not False)
