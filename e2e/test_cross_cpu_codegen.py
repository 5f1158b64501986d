"""bf16 kernels compile for every x86 CPU, not only this one (e2e/cross_cpu_codegen.py;
issue 52): on CPUs with AVX512-BF16 LLVM's X86 backend asserted on masked loads and
stores of bfloat vectors that its vectorizer made for bf16 copies, which aborted the
user's process. dyno-bf16-as-i16 moves bf16 as i16 and compares it widened exactly."""
import pytest
import torch

import cross_cpu_codegen
from conftest import assert_compiled_matches_values


@pytest.mark.parametrize("name", ["kthvalue", "roll_last", "transpose"])
def test_bf16_copies_compile_for_cpus_with_avx512_bf16(name, tmp_path):
    fn = cross_cpu_codegen.OPS[name]
    x = torch.randn(5, 5, 5).bfloat16()
    graphs = cross_cpu_codegen.compiled_graphs(fn, (x,), tmp_path)
    assert graphs
    for path in graphs:
        llvm_ir = cross_cpu_codegen.kernels_llvm_ir(path)
        for cpu in ("znver4", "sapphirerapids"):
            assert cross_cpu_codegen.compile_for(llvm_ir, cpu) == "", (path, cpu)


@pytest.mark.parametrize("name", ["kthvalue", "roll_last", "transpose", "sort", "topk"])
def test_bf16_selections_and_copies_match_eager_exactly(name):
    """Also a subnormal (3e-39) survives a sort: LLVM carried bf16 compared values
    through f32 and rounded them back with vcvtneps2bf16, which flushes subnormals."""
    x = torch.randn(5, 5, 5).bfloat16()
    x[1, 2, 3] = 3e-39
    fn = cross_cpu_codegen.OPS[name]
    assert_compiled_matches_values(fn, x, rtol=0, atol=0)
