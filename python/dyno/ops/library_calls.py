"""ATen ops that PyTorch computes with a library (LAPACK for linear algebra, pocketfft for
FFTs) become `dyno.library_call`s: the compiled graph calls the routine on its tensors,
as it calls matmul's BLAS through `dyno.contraction`, and Dyno's kernels run around it (no
graph partition, nothing of the graph runs eagerly). Dyno does not reimplement these
routines: PyTorch's are what eager runs, so results are eager's bit for bit.
"""
import contextlib

from .aten_lowerings import LOWERINGS, Unsupported, lowering

# The imported op names (torch.aten.<op>[.<overload>]) that are library calls.
LIBRARY_OPS = (
    # Cholesky, LU, triangular and general solves, inverses, determinants (LAPACK)
    "linalg_cholesky_ex", "cholesky", "cholesky_inverse", "cholesky_solve",
    "linalg_lu_factor_ex", "linalg_lu", "lu_unpack", "linalg_lu_solve",
    "linalg_solve_triangular", "triangular_solve", "linalg_inv_ex", "_linalg_solve_ex",
    "_linalg_slogdet", "linalg_ldl_factor_ex", "linalg_ldl_solve", "_linalg_check_errors",
    # QR and Householder products, eigen and singular value decompositions (LAPACK)
    "linalg_qr", "geqrf", "ormqr", "linalg_householder_product", "_linalg_eigh",
    "linalg_eig", "_linalg_svd", "linalg_pinv.atol_rtol_tensor", "linalg_matrix_exp",
    # FFTs (pocketfft on the CPU, cuFFT on GPUs); torch.export keeps the torch.fft ops
    # themselves.
    "_fft_r2c", "_fft_c2c", "_fft_c2r",
    *(f"fft_{kind}{suffix}" for kind in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
      for suffix in ("", "2", "n")),
    # Grouped GEMMs: a mixture of experts' per-expert products (grouped_matmul_
    # decompositions; CUTLASS's grouped kernel on Hopper GPUs in bf16)
    "_grouped_mm",
)

# Scaled dot-product attention on CPU tensors: PyTorch's fused flash kernels, forward (the
# output and the rows' logsumexp) and backward. They never hold the [N, H, L, S] scores;
# against Dyno's compiled matmul + softmax + matmul (benchmarks/experiments/attention.py, 2 threads,
# 64 to 1024 tokens, causal, full and masked) they were faster in every float32 case
# (1.15x-4.5x) and every bf16 inference case (1.1x-3.1x). The CPU target keeps them
# (decompositions.table), but for short bf16/fp16 backwards, where the decomposition
# measured faster (attention_decompositions.LOW_PRECISION_BACKWARD_SCORES); the Triton
# target, whose exports run on GPUs, decomposes them. (With dropout, eager's CPU
# attention takes its math path and never reaches these ops.)
ATTENTION_OPS = ("_scaled_dot_product_flash_attention_for_cpu",
                 "_scaled_dot_product_flash_attention_for_cpu_backward")


# torch.distributed's functional collectives (what Dynamo traces from DTensor's
# redistributions and from `torch.distributed._functional_collectives`): each starts
# where the graph issues it and `wait_tensor` waits where the graph waits, so the kernels
# in between run while the collective communicates. They are called as the graph calls
# them, on the process group the graph names (host_runtime.collective).
COLLECTIVE_OPS = ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor",
                  "all_to_all_single", "broadcast", "wait_tensor")
COLLECTIVE_NAMESPACE = "_c10d_functional"


def _attribute(operand, builder):
    """A non-tensor argument as a dyno.library_call `arguments` entry: `none` for None,
    a bool, an i64, an f64, a string or an array of i64."""
    from torch_mlir import ir

    if not operand.is_constant:
        raise Unsupported()  # a value known only at run time (a symbolic size)
    value = operand.constant
    if value is None:
        return ir.TypeAttr.get(ir.NoneType.get(builder.context))
    if isinstance(value, (bool, int, float)):
        return builder.attribute(value)
    if isinstance(value, str):
        return ir.StringAttr.get(value, builder.context)
    if isinstance(value, list):
        return ir.DenseI64ArrayAttr.get(value, builder.context)
    raise Unsupported()


def _library_call(aten_name):
    def lower(island, operands, results):
        from torch_mlir import ir

        b = island.builder
        tensors, arguments = [], []
        for operand in operands:
            if operand.is_tensor:
                tensors.append(island.to_builtin(operand))
                arguments.append(ir.UnitAttr.get(b.context))  # the next tensor's place
            elif operand.type.startswith("!torch.optional") or operand.type == "!torch.none":
                arguments.append(_attribute(operand, b))
            elif operand.type in ("!torch.int", "!torch.float", "!torch.bool", "!torch.str",
                                  "!torch.list<int>"):
                arguments.append(_attribute(operand, b))
            else:
                raise Unsupported()
        result_types = [r.builtin() for r in results]
        call = b.create("dyno.library_call", tensors, result_types,
                        name=ir.StringAttr.get(aten_name, b.context),
                        arguments=ir.ArrayAttr.get(arguments, b.context))
        return list(zip(call.results, result_types))
    return lower


# Sorts of long lines on the Triton target (targets/triton/library_routing.py marks them;
# they reach torch-mlir as aten.sort.stable, which it does not lower): the GPU's
# segmented sort. Dyno's bitonic network sorts 64-bit (value, position) keys in
# registers, several times faster than eager on short lines but 2.2x slower on rows of
# 1024 float32 (benchmarks/results/gpu-sequential-ops-2026-11-26-h100.md).
SORT_OPS = ("sort.stable",)

# Scatter-adds on the Triton target (targets/triton/library_routing.py marks them as
# dyno::scatter_add): PyTorch's kernel reads each update's index where it is, where
# torch-mlir's lowering stacks every update's coordinates into an [updates, rank] int64
# tensor that Dyno's bounds check and scatter kernel read again (0.13x-0.29x eager on an
# H200 from 16K to 16M updates; benchmarks/results/gpu-scatter-add-2026-11-26-h200.md).
# Other scatters (index_put, index_add, scatter_reduce) stay Dyno's kernels.
SCATTER_OPS = {"torch.dyno.scatter_add": "aten.scatter_add.default"}

# Attention in the Triton target's inference graphs (attention_decompositions.
# inference_attention marks it as dyno::attention): PyTorch's fused kernels, chosen per
# device when the program runs (flash or memory-efficient on CUDA).
DEVICE_ATTENTION_OPS = {"torch.dyno.attention": "aten.scaled_dot_product_attention.default"}

# Grouped GEMMs traced where the aten op's meta function refuses the dtype (float32;
# grouped_matmul_decompositions): PyTorch's grouped GEMM when the program runs.
GROUPED_MM_OPS = {"torch.dyno.grouped_mm": "aten._grouped_mm.default"}


for _op in LIBRARY_OPS + ATTENTION_OPS + SORT_OPS:
    _aten = "aten." + _op + ("" if "." in _op else ".default")
    lowering("torch.aten." + _op)(_library_call(_aten))

for _imported, _aten in {**SCATTER_OPS, **DEVICE_ATTENTION_OPS, **GROUPED_MM_OPS}.items():
    lowering(_imported)(_library_call(_aten))

for _op in COLLECTIVE_OPS:
    lowering(f"torch.{COLLECTIVE_NAMESPACE}.{_op}")(
        _library_call(f"{COLLECTIVE_NAMESPACE}.{_op}.default"))


@contextlib.contextmanager
def called_as_library(ops):
    """Inside, each of `ops` (ATen OpOverloads) is a library call of itself: what an
    exported program runs of an op Dyno cannot compile (the eager call torch.compile's
    per-op fallback would make, inside the one exported wrapper). An op whose arguments
    a library call cannot pass (a list of tensors) is left as it is."""
    saved = dict(LOWERINGS)
    for op in ops:
        name = op._schema.name.split("::")[-1]
        overload = op._overloadname
        imported = "torch.aten." + name + ("" if overload == "default" else "." + overload)
        LOWERINGS[imported] = _library_call(f"aten.{name}.{overload}")
    try:
        yield
    finally:
        LOWERINGS.clear()
        LOWERINGS.update(saved)
