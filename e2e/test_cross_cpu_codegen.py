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


def test_bf16_long_sums_link_for_every_cpu(tmp_path):
    """A bf16 cumsum's kernels round f64 partial sums to bf16: on Zen 4 LLVM lowered that
    to compiler-rt's __truncdfbf2, which GCC 12's libgcc lacks, and the kernels did not
    load (the graph fell back). dyno-expand-bf16-conversions rounds through f32 instead;
    the object for each CPU links and loads here."""
    x = torch.randn(5, 5, 5).bfloat16()
    graphs = cross_cpu_codegen.compiled_graphs(cross_cpu_codegen.OPS["cumsum"], (x,),
                                               tmp_path)
    assert graphs
    for path in graphs:
        llvm_ir = cross_cpu_codegen.kernels_llvm_ir(path)
        for cpu in ("znver4", "sapphirerapids", "haswell"):
            assert cross_cpu_codegen.compile_for(llvm_ir, cpu) == "", (path, cpu)


def test_f64_to_bf16_rounds_as_eager():
    """f64 -> bf16 rounds to f32, then to bf16, as eager's static_cast<BFloat16>(double):
    1 + 2**-8 + 2**-30 becomes 1 in both (the f32 is the halfway point, rounded to even)."""
    values = torch.tensor([1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-30), 1 + 2**-8,
                           3 * 2**-140, 1e300, -1e300, float("nan"), 0.0, -0.0, 1 / 3],
                          dtype=torch.float64)
    assert_compiled_matches_values(lambda x: x.to(torch.bfloat16) * 1, values, rtol=0,
                                   atol=0)
    assert torch.compile(lambda x: x.to(torch.bfloat16) * 1,
                         backend="mlir")(values)[0].item() == 1.0


@pytest.mark.parametrize("name", ["kthvalue", "roll_last", "transpose", "sort", "topk"])
def test_bf16_selections_and_copies_match_eager_exactly(name):
    """Also a subnormal (3e-39) survives a sort: LLVM carried bf16 compared values
    through f32 and rounded them back with vcvtneps2bf16, which flushes subnormals."""
    x = torch.randn(5, 5, 5).bfloat16()
    x[1, 2, 3] = 3e-39
    fn = cross_cpu_codegen.OPS[name]
    assert_compiled_matches_values(fn, x, rtol=0, atol=0)
