"""The zoo's further architecture families (benchmarks/zoo.py FAMILIES: T5, Mistral,
Swin, ConvNeXt, wav2vec 2.0, Mixtral), small configs, random weights: compiled fully
through torch.compile on the CPU target, and exported for the GPU and run from the
export (Triton's interpreter here), matching eager. The GPU benchmark
(benchmarks/gpu_zoo.py) times them beside the zoo's own models."""

import pytest
import torch

import dyno

import zoo
from test_zoo import TOLERANCE, assert_exports_and_matches_eager, relative_error  # noqa: E402

# (Mixtral's experts are grouped GEMMs: library calls, grouped_matmul_decompositions.)
EXPECTED_FAILURES = {}


def _expect(request, name, how):
    reason = EXPECTED_FAILURES.get((name, how))
    if reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("name", list(zoo.FAMILIES))
def test_family_compiles_fully_on_the_cpu_and_matches_eager(name, request):
    _expect(request, name, "compile")
    model, inputs = zoo.build(name, torch.float32)
    with torch.no_grad():
        eager = model(*inputs)
        compiled = torch.compile(model, backend="mlir", options={"target": "cpu"})(*inputs)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    assert stats.get("partially_compiled_graphs", 0) == 0, stats["fallback_ops"]
    assert stats.get("cpu_graphs", 0) >= 1, stats
    assert compiled.shape == eager.shape
    assert relative_error(compiled, eager) <= TOLERANCE[torch.float32]


@pytest.mark.long  # (Triton's interpreter: about a minute a model on 2 cores)
@pytest.mark.parametrize("name", list(zoo.FAMILIES))
def test_family_exports_for_the_gpu_in_bf16(name, request):
    _expect(request, name, "export")
    assert_exports_and_matches_eager(name, torch.bfloat16)
