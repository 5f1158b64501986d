"""The transformers zoo (benchmarks/zoo.py: GPT-2, OPT, Llama, Qwen2, BERT, BART, ViT,
ResNet from small configs, random weights) in float32 and bfloat16 on both targets:
compiled fully through torch.compile, matching eager, no less accurate than eager
against a float32 reference; exported for the GPU (dyno.export_triton) and run from the
export; a training step for two of them, compiled and exported."""
import copy
import os
import tempfile

import pytest
import torch

import dyno
from conftest import TARGET

import zoo

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
# Relative L2 distance from eager a compiled model may have: float32 rounding, and for
# bf16 a few ulps of bf16 (8 bits) through two layers.
TOLERANCE = {torch.float32: 1e-5, torch.bfloat16: 2e-2}


def relative_error(got, want):
    return ((got.double() - want.double()).norm() / want.double().norm()).item()


def float32_reference(model, inputs):
    """The model with the same (rounded) weights and inputs, computed in float32."""
    reference = copy.deepcopy(model).float()
    with torch.no_grad():
        return reference(*(x.float() if x.is_floating_point() else x for x in inputs))


def assert_no_less_accurate(compiled, eager, reference, dtype):
    """Against the float32 reference, the compiled model's error is at most eager's
    (a margin of 25% for the order in which bf16 roundings fall)."""
    if dtype == torch.float32:
        return
    compiled_error = relative_error(compiled, reference)
    eager_error = relative_error(eager, reference)
    assert compiled_error <= 1.25 * eager_error, (compiled_error, eager_error)


@pytest.mark.usefixtures("each_target")
@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("name", list(zoo.ZOO))
def test_zoo_model_compiles_fully_and_matches_eager(name, dtype_name):
    dtype = DTYPES[dtype_name]
    model, inputs = zoo.build(name, dtype)
    with torch.no_grad():
        eager = model(*inputs)
        compiled = torch.compile(model, backend="mlir",
                                 options={"target": TARGET["name"]})(*inputs)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    assert stats.get("partially_compiled_graphs", 0) == 0, stats["fallback_ops"]
    assert stats["runtime_fallbacks"] == 0, stats
    assert stats.get(f"{TARGET['name']}_graphs", 0) >= 1, stats
    assert compiled.dtype == eager.dtype and compiled.shape == eager.shape
    assert relative_error(compiled, eager) <= TOLERANCE[dtype]
    assert_no_less_accurate(compiled, eager, float32_reference(model, inputs), dtype)


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("name", list(zoo.ZOO))
def test_zoo_model_exports_for_the_gpu(name, dtype_name):
    """The GPU path: export_triton (the whole graph, no fallback), then the export's own
    runtime (torch + triton only) runs its kernels, interpreted here."""
    assert_exports_and_matches_eager(name, DTYPES[dtype_name])


def assert_exports_and_matches_eager(name, dtype):
    """Zoo model `name` in `dtype`, exported for the GPU and run from the export (its
    kernels interpreted here), matches eager."""
    from dyno.targets.triton import runtime as triton_runtime

    model, inputs = zoo.build(name, dtype)
    with tempfile.TemporaryDirectory() as directory:
        dyno.export_triton(model, inputs, directory)
        program = triton_runtime.load(directory, device="cpu")
        with torch.no_grad():
            eager = model(*inputs)
            exported = program(*inputs)
    assert exported.dtype == eager.dtype and exported.shape == eager.shape
    assert relative_error(exported, eager) <= TOLERANCE[dtype]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("name", ["gpt2", "resnet"])
def test_zoo_model_exports_under_cuda_autocast(name, dtype):
    """export_triton(autocast=dtype): the float32 model as it runs under
    torch.autocast("cuda", dtype) on a GPU, traced here without one. Eager CUDA autocast
    cannot run on this machine (benchmarks/gpu_zoo.py compares with it on the GPU), so:
    the program is within the low precision's rounding of the float32 model, and not
    the float32 program (autocast's casts are in it)."""
    from dyno.targets.triton import runtime as triton_runtime

    model, inputs = zoo.build(name, torch.float32)
    with tempfile.TemporaryDirectory() as directory:
        dyno.export_triton(model, inputs, directory, autocast=dtype)
        with open(os.path.join(directory, "wrapper.py")) as file:
            wrapper = file.read()
        program = triton_runtime.load(directory, device="cpu")
        with torch.no_grad():
            exported = program(*inputs)
            want = model(*inputs)
    assert str(dtype) in wrapper  # low-precision tensors between the kernels
    error = relative_error(exported, want)
    assert 1e-5 < error <= TOLERANCE[torch.bfloat16], error


@pytest.mark.usefixtures("each_target")
@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_zoo_training_step_matches_eager(name):
    """Three SGD steps of a causal language model (forward, loss, backward, optimizer)
    compiled and eager from the same weights: losses, gradients and parameters agree.
    (Adam turns a gradient of 1e-9 into a full step of either sign, so rounding noise in
    near-zero gradients moves parameters by 2 lr: SGD keeps the comparison linear.)"""
    model, (tokens,) = zoo.build(name, torch.float32)
    model.train()
    compiled_model = copy.deepcopy(model)
    compiled = torch.compile(compiled_model, backend="mlir",
                             options={"target": TARGET["name"]})
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
                  for m in (model, compiled_model)]
    for step in range(3):
        losses = []
        for run, optimizer in zip((model, compiled), optimizers):
            optimizer.zero_grad()
            logits = run(tokens)
            loss = torch.nn.functional.cross_entropy(
                logits[:, :-1].reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        torch.testing.assert_close(losses[1], losses[0], rtol=1e-4, atol=1e-5,
                                   msg=f"loss differs at step {step}")
    for (parameter, want), got in zip(model.named_parameters(), compiled_model.parameters()):
        error = ((got.grad - want.grad).norm() / want.grad.norm().clamp_min(1e-12)).item()
        assert error < 1e-3, f"gradient of {parameter}: relative error {error:.2e}"
        torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-5, msg=parameter)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    assert stats.get("partially_compiled_graphs", 0) == 0, stats["fallback_ops"]
    assert stats["compiled_graphs"] >= 2, stats  # forward and backward


@pytest.mark.parametrize("name", ["gpt2", pytest.param("resnet", marks=pytest.mark.long)])
def test_zoo_training_step_exports_for_the_gpu(name):
    """The GPU path for training: dyno.export_triton_training (forward, loss and backward
    as one graph, no fallback), run from the export (kernels interpreted here) for three
    SGD steps beside eager: losses, gradients, parameters and the buffers the step
    updates (ResNet's batch-norm statistics) agree."""
    from dyno.targets.triton import runtime as triton_runtime

    model, inputs = zoo.build(name, torch.float32)
    model.train()
    exported_model = copy.deepcopy(model)
    with tempfile.TemporaryDirectory() as directory:
        dyno.export_triton_training(model, zoo.training_loss, inputs, directory,
                                    save_weights=False)
        program = triton_runtime.load(directory, device="cpu").bind(exported_model)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
                  for m in (model, exported_model)]
    for step in range(3):
        for optimizer in optimizers:
            optimizer.zero_grad()
        loss = zoo.training_loss(model(*inputs), inputs[0])
        loss.backward()
        exported_loss = program(*inputs)
        for optimizer in optimizers:
            optimizer.step()
        torch.testing.assert_close(exported_loss, loss.detach(), rtol=1e-4, atol=1e-5,
                                   msg=f"loss differs at step {step}")
    for (parameter, want), got in zip(model.named_parameters(), exported_model.parameters()):
        assert got.grad is not None, f"no gradient for {parameter}"
        error = ((got.grad - want.grad).norm() / want.grad.norm().clamp_min(1e-12)).item()
        assert error < 1e-3, f"gradient of {parameter}: relative error {error:.2e}"
        torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-5, msg=parameter)
    for (buffer, want), got in zip(model.named_buffers(), exported_model.buffers()):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6, msg=buffer)


def test_training_export_leaves_frozen_parameters_alone():
    """Fine-tuning freezes parameters (requires_grad=False): the exported step computes no
    gradient for them and sets none, and the others match eager's."""
    from dyno.targets.triton import runtime as triton_runtime

    model, inputs = zoo.build("gpt2", torch.float32)
    model.train()
    for name, parameter in model.named_parameters():
        if "wpe" in name or ".h.0." in name:
            parameter.requires_grad_(False)
    exported_model = copy.deepcopy(model)
    with tempfile.TemporaryDirectory() as directory:
        dyno.export_triton_training(model, zoo.training_loss, inputs, directory,
                                    save_weights=False)
        program = triton_runtime.load(directory, device="cpu").bind(exported_model)
    zoo.training_loss(model(*inputs), inputs[0]).backward()
    program(*inputs)
    for (name, want), got in zip(model.named_parameters(), exported_model.parameters()):
        if want.grad is None:
            assert got.grad is None, name
        else:
            torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-6, msg=name)
