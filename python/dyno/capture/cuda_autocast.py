"""Tracing a model as it runs under `torch.autocast("cuda")`, on a machine without a GPU.

CUDA autocast is a dispatcher key that only CUDA tensors reach, and `torch.autocast`
disables itself where CUDA is not available. The export machine has neither, so to
export a program that computes what the model computes under CUDA autocast we trace a
copy of the model whose parameters, buffers and inputs are CUDA *fake* tensors (shapes and
dtypes, no storage: FakeTensorMode needs no CUDA for that), with `torch.autocast`'s
availability check told the truth about the target rather than about this machine. The
casts in the traced graph are then CUDA autocast's own (PyTorch's op lists, not ours):
matmuls and convolutions in the low precision, softmax, norms, exp, log and losses in
float32.

A CPU-only build of torch has no CUDA device guard, which Python indexing and autograd
need even on fake tensors; CUDA builds without a device get a no-op guard from torch
itself (`torch._C._ensureCUDADeviceGuardSet`), and for CPU-only builds Dyno registers
torch's own `FakeGuardImpl<CUDA>` through a three-line C++ extension compiled once per
machine (torch.utils.cpp_extension, about 30 s, cached), for the trace only. Autograd's
engine still refuses to run without a device, so only inference is traced this way: every fake tensor has
requires_grad=False and the export runs under no_grad.
"""
import contextlib
import copy
import itertools
from unittest import mock

import torch

from ..errors import DynoCompileError

LOW_PRECISIONS = (torch.float16, torch.bfloat16)


@contextlib.contextmanager
def tracing(model: torch.nn.Module, example_inputs: tuple, dtype: torch.dtype | None):
    """Yields `(traced_model, traced_inputs)`: a copy of `model` on fake CUDA tensors whose
    forward runs under `torch.autocast("cuda", dtype)` (with dtype None, only under the
    model's own autocast regions), and the inputs as fake CUDA tensors. Export them inside
    the context (autocast's checks are patched there)."""
    if dtype is not None and dtype not in LOW_PRECISIONS:
        raise DynoCompileError("export", f"autocast={dtype}: CUDA autocast computes in "
                               "torch.float16 or torch.bfloat16")
    from torch._subclasses.fake_tensor import FakeTensorMode

    with _cuda_device_guard():
        fake_mode = FakeTensorMode()
        memo = {}
        with fake_mode:
            for tensor in itertools.chain(model.parameters(), model.buffers()):
                if id(tensor) not in memo:  # tied weights stay tied
                    fake = _fake_cuda_like(tensor)
                    if isinstance(tensor, torch.nn.Parameter):
                        fake = torch.nn.Parameter(fake, requires_grad=False)
                    memo[id(tensor)] = fake
            traced_inputs = tuple(_fake_cuda_like(x) if isinstance(x, torch.Tensor) else x
                                  for x in example_inputs)
        traced = copy.deepcopy(model, memo)
        lifting_cpu_only = torch._C._only_lift_cpu_tensors()
        # torch.tensor(data, device="cuda") in a forward (transformers' caches) must
        # build its data on the CPU and let the fake mode move it, as
        # FakeTensorMode.__enter__ arranges; export's tracing installs the mode without
        # entering it.
        torch._C._set_only_lift_cpu_tensors(True)
        try:
            with _cuda_autocast_available():
                # An instance attribute shadows the class's forward; torch.autocast as a
                # decorator keeps its signature (export reads the argument names).
                if dtype is not None:
                    traced.forward = torch.autocast("cuda", dtype=dtype)(traced.forward)
                yield traced, traced_inputs
        finally:
            torch._C._set_only_lift_cpu_tensors(lifting_cpu_only)


def real_tensors(exported, model: torch.nn.Module) -> tuple[dict, dict]:
    """The exported program's state_dict and constants with `model`'s own tensors in
    place of the traced copy's fake ones (the names are the same). A tensor the forward
    creates (lifted by export) keeps the value the fake mode recorded for it, if any."""
    owned = dict(model.named_parameters(remove_duplicate=False))
    owned.update(model.named_buffers(remove_duplicate=False))

    def real(name, traced):
        if name in owned:
            return owned[name]
        if getattr(traced, "constant", None) is not None:
            return traced.constant
        if traced.numel() == 0:  # no values to lose (transformers' empty caches)
            return torch.empty(traced.shape, dtype=traced.dtype)
        raise DynoCompileError(
            "export", f"the traced program holds a tensor '{name}' that is not one of the "
            "model's parameters or buffers and whose values the trace did not keep (a "
            "tensor created in forward); under autocast= register it as a buffer")

    return ({name: real(name, value) for name, value in exported.state_dict.items()},
            {name: real(name, value) for name, value in exported.constants.items()})


def devices_as_host(graph_module: torch.fx.GraphModule) -> None:
    """Calls traced on CUDA fake tensors name the CUDA device (`scalar_tensor(...,
    device="cuda:0")`, `device_put(x, "cuda:0")`); the lowering places every tensor
    itself and reads a device argument as the host's."""
    def as_host(value):
        if isinstance(value, torch.device) and value.type == "cuda":
            return torch.device("cpu")
        return value

    for node in list(graph_module.graph.nodes):
        if node.op != "call_function":
            continue
        if node.target is torch.ops.prims.device_put.default:  # one device: a no-op
            node.replace_all_uses_with(node.args[0])
            graph_module.graph.erase_node(node)
        else:
            node.args = torch.fx.node.map_aggregate(node.args, as_host)
            node.kwargs = torch.fx.node.map_aggregate(node.kwargs, as_host)
    graph_module.recompile()


def disabled_cuda_autocast(caught_warnings) -> bool:
    """Whether torch.autocast("cuda") disabled itself during a trace on CPU tensors (the
    model enters it in its forward): the trace computed in float32 where the GPU would
    not."""
    return any("Disabling autocast" in str(w.message) and "CUDA" in str(w.message)
               for w in caught_warnings)


def _fake_cuda_like(tensor: torch.Tensor) -> torch.Tensor:
    return torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype,
                               device="cuda")


_GUARD_SOURCE = r"""
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/FakeGuardImpl.h>
static c10::impl::FakeGuardImpl<c10::DeviceType::CUDA> guard(c10::DeviceType::CUDA);
static auto &slot() {
  return c10::impl::device_guard_impl_registry[static_cast<size_t>(c10::DeviceType::CUDA)];
}
bool install_fake_cuda_guard() {
  if (slot().load()) return false;
  c10::impl::registerDeviceGuard(c10::DeviceType::CUDA, &guard);
  return true;
}
void remove_fake_cuda_guard() {
  if (slot().load() == &guard) c10::impl::registerDeviceGuard(c10::DeviceType::CUDA, nullptr);
}
"""


@contextlib.contextmanager
def _cuda_device_guard():
    """Gives fake CUDA tensors the device guard that indexing asks for, for as long as
    the trace lasts (a registered CUDA guard would tell the rest of the process, autograd's
    engine included, that 8 CUDA devices exist)."""
    if torch.cuda.is_available():
        yield
        return
    if torch.cuda._is_compiled():  # a CUDA build on a machine without a GPU
        torch._C._ensureCUDADeviceGuardSet()
        yield
        return
    from torch.utils.cpp_extension import load_inline

    try:
        module = load_inline("dyno_fake_cuda_guard", cpp_sources=[_GUARD_SOURCE],
                             functions=["install_fake_cuda_guard", "remove_fake_cuda_guard"],
                             extra_cflags=["-O1"])
    except Exception as error:  # no compiler, or torch's headers missing
        raise DynoCompileError(
            "export", "autocast= traces CUDA fake tensors, which in a CPU-only torch need a "
            f"small C++ extension that could not be built here: {error}") from error
    module.install_fake_cuda_guard()
    try:
        yield
    finally:
        module.remove_fake_cuda_guard()


@contextlib.contextmanager
def _cuda_autocast_available():
    """torch.autocast("cuda") disables itself (with a warning) where CUDA is unavailable,
    and refuses bf16 where the present GPU lacks it: the target GPU decides, not this
    machine."""
    import torch.cuda.amp.common as amp_common
    from torch.fx.experimental import proxy_tensor

    with mock.patch.object(amp_common, "amp_definitely_not_available", lambda: False), \
         mock.patch.object(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True), \
         mock.patch.object(proxy_tensor, "CONSTANT_NUMEL_LIMIT", -1):
        # The last: make_fx evaluates ops on tiny constants (torch.tensor([]) moved to
        # the device, in transformers' caches) for real, outside the fake mode, which a
        # CUDA tensor cannot survive here; they are traced like any other tensor instead.
        yield
