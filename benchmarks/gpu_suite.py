"""The GPU suite: the cases Dyno's Triton target is checked and timed on, on a real GPU.

Needs only torch, so that the same definitions serve both sides of an ahead-of-time
export: `gpu_export.py` compiles every case here (CPU-only build machine, Dyno
installed) and `gpu_run.py` runs the artifacts on the GPU machine (torch + triton only),
against eager PyTorch and Inductor.

Each case: (name, kind, model builder, input shapes). `check` cases are the e2e
suite's patterns at test sizes (numerics on the GPU); `bench` cases are the benchmark
models at GPU sizes; `bandwidth` is one large fused pointwise kernel.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, models
from models import MLP, NormActBlock, SmallCNN, TransformerBlock  # noqa: E402


class Fn(torch.nn.Module):
    """A function as a module (torch.export takes modules)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class ConvBnRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x):
        return F.max_pool2d(F.relu(self.bn(self.conv(x))), 3, stride=2, padding=1)


def _layernorm():
    module = torch.nn.LayerNorm(96)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
        module.bias.uniform_(-0.5, 0.5)
    return module


def _embedding_gelu():
    class EmbeddingGelu(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.table = torch.nn.Embedding(50, 32)

        def forward(self, ids, x):
            return F.gelu(self.table(ids) + x, approximate="tanh")
    return EmbeddingGelu()


def _scatter_float_extrema(x, index, source):
    """Float max/min at repeated indices (Triton's float atomics) with NaN of both signs
    in the original and in the updates, which must win as eager's NaN does."""
    nan = torch.full_like(x, float("nan"))
    x = torch.where(x > 2.0, nan, torch.where(x < -2.0, -nan, x))
    updates_nan = torch.full_like(source, float("nan"))
    source = torch.where(source > 2.3, updates_nan, torch.where(source < -2.3, -updates_nan,
                                                                source))
    return (x.scatter_reduce(0, index, source, "amax"),
            x.scatter_reduce(0, index, source, "amin", include_self=False),
            x.index_reduce(0, index[:, 0], source, "amax"))


def cases():
    f32, bf16 = torch.float32, torch.bfloat16
    return [
        # name, kind, builder, input specs ((shape, dtype) or ("ids", shape, high))
        ("elementwise_chain", "check",
         lambda: Fn(lambda x, y: torch.sigmoid(x * y + 1.0).exp() - torch.tanh(y) / (x.abs() + 1)),
         [((33, 65), f32), ((33, 65), f32)]),
        ("broadcasting", "check", lambda: Fn(lambda x, r, c: (x + r) * c - 0.5),
         [((7, 5, 9), f32), ((9,), f32), ((5, 1), f32)]),
        ("reductions_each_dim", "check",
         lambda: Fn(lambda x: (x.sum(0), x.mean(1), x.amax(2), x.amin(-1), x.sum())),
         [((37, 19, 11), f32)]),
        ("softmax_log_softmax", "check",
         lambda: Fn(lambda x: (torch.softmax(x, -1), F.log_softmax(x, dim=0))),
         [((64, 257), f32)]),
        ("long_row_softmax", "check", lambda: Fn(lambda x: torch.softmax(x * 0.5, -1)),
         [((8, 20000), f32)]),
        ("layernorm", "check", _layernorm, [((4, 31, 96), f32)]),
        # Issue 19: rows of 1M and a sum of 16M values near 1e4 (blocked sums, the
        # shifted and corrected variance; x * 0.25 is exact, so that an FMA cannot make
        # the data differ); the error column shows parity with eager.
        ("long_rows_large_mean", "check",
         lambda: Fn(lambda x: ((x * 0.25 + 1e4).sum(-1), (x * 0.25 + 1e4).var(-1),
                               F.layer_norm(x * 0.25 + 1e4, (x.shape[-1],)),
                               torch.logsumexp(x * 4, -1))),
         [((4, 1_000_000), f32)]),
        ("long_sum_large_mean", "check",
         lambda: Fn(lambda x: ((x * 0.25 + 1e4).sum(), (x * 0.25 + 1e4).var(),
                               x.sum(0), x.mean())),
         [((16_000_000 // 64, 64), f32)]),
        # Scans of lines longer than one program holds (16384): a loop over chunks with an
        # f64 carry; large-mean rows, centred rows and one line of 16M.
        ("long_scans_large_mean", "check",
         lambda: Fn(lambda x, y: ((x * 0.25 + 1e4).cumsum(-1), x.cumsum(-1), y.cumsum(0))),
         [((4, 1_000_000), f32), ((16_000_000,), f32)]),
        # The prelude's careful helpers (round, hyperbolic functions, copysign) on a GPU.
        ("rounding_hyperbolic", "check",
         lambda: Fn(lambda x: (torch.round(x * 10), torch.asinh(x * 1000), torch.sinh(x * 4),
                               torch.tanh(x), torch.atanh(x * 0.3), torch.acosh(x.abs() + 1))),
         [((64, 129), f32)]),
        ("transpose_slice_views", "check",
         lambda: Fn(lambda x: (x.transpose(0, 1) * 2, x[:, 1:7:2].exp(), x.permute(1, 0).sum(1))),
         [((12, 10), f32)]),
        ("embedding_gelu", "check", _embedding_gelu, [("ids", (4, 6), 50), ((4, 6, 32), f32)]),
        ("conv_bn_relu_pool", "check", ConvBnRelu, [((2, 3, 16, 16), f32)]),
        ("mlp_small", "check", lambda: MLP(inputs=64, hidden=128, classes=10),
         [((32, 64), f32)]),
        ("transformer_small", "check", lambda: TransformerBlock(dim=64, heads=4),
         [((2, 16, 64), f32)]),
        # Scans, sorts and scatters (dyno-convert-scans-scatters-sorts-to-triton-level).
        ("cumsum_cumprod", "check",
         lambda: Fn(lambda x: (torch.cumsum(x, -1), torch.cumprod(1 + x / 100, 0))),
         [((37, 300), f32)]),
        ("sort_topk", "check",
         lambda: Fn(lambda x: (*torch.sort(x, -1, descending=True), *torch.topk(x, 8, 0))),
         [((37, 700), f32)]),
        ("scatter_add_index_put", "check",
         lambda: Fn(lambda x, i, s, rows, v: (x.scatter_add(0, i, s),
                                              x.index_put((rows,), v, accumulate=True))),
         [((40, 6), f32), ("ids", (300, 6), 40), ((300, 6), f32), ("ids", (77,), 40),
          ((77, 6), f32)]),
        ("conv_transpose1d", "check",
         lambda: Fn(lambda x, w: F.conv_transpose1d(x, w, stride=2)),
         [((2, 4, 9), f32), ((4, 3, 3), f32)]),
        # Reductions that pick an element (argmax, max with indices, pooling indices).
        ("argmax_max_dim", "check",
         lambda: Fn(lambda x: (x.argmax(-1), *torch.max(x, 0), x.argmin(1))),
         [((37, 3000), f32)]),
        ("max_pool_indices", "check",
         lambda: Fn(lambda x: F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)),
         [((2, 3, 17, 17), f32)]),
        ("scatter_float_extrema", "check", lambda: Fn(_scatter_float_extrema),
         [((40, 6), f32), ("ids", (300, 6), 40), ((300, 6), f32)]),
        # Constant gather indices (as_strided) reach kernels as arguments; pdist; float64
        # square roots (tl.sqrt, not sqrt_rn).
        ("constant_indices_pdist_sqrt64", "check",
         lambda: Fn(lambda x, y, z: (torch.as_strided(y, (3, 4), (2, 3), 1) * 2,
                                     F.group_norm(x, 3), F.pdist(z),
                                     torch.sqrt(z.double().abs()) + 1)),
         [((2, 6, 4), f32), ((20,), f32), ((30, 8), f32)]),
        # nn.functional.bilinear (aten._trilinear, decomposed); GELU (erf form) feeding a
        # softmax over rows with special values.
        ("bilinear_gelu_softmax", "check",
         lambda: Fn(lambda a, b, w, x: (F.bilinear(a, b, w), torch.softmax(F.gelu(x), -1))),
         [((9, 5), f32), ((9, 6), f32), ((7, 5, 6), f32), ((12, 37), f32)]),
        # Dyno's own lowerings (aten_lowerings): bit casts in Triton kernels; LAPACK
        # (cuSOLVER) and FFTs (cuFFT) as library calls between kernels.
        ("bit_casts", "check",
         lambda: Fn(lambda x, y: (torch.signbit(x), torch.copysign(x, y), *torch.frexp(x * 1e3),
                                  torch.nextafter(x, y))),
         [((33, 65), f32), ((33, 65), f32)]),
        # Per-element loops (orthogonal polynomials) and scans with their own combiners.
        ("polynomials_cumulative_extrema", "check",
         lambda: Fn(lambda x, n: (torch.special.chebyshev_polynomial_t(x, n),
                                  torch.special.hermite_polynomial_he(x * 2, 5),
                                  torch.special.legendre_polynomial_p(x.amin(1, keepdim=True), 7),
                                  *torch.cummax(x, 1), *torch.cummin(x, 0),
                                  torch.logcumsumexp(x * 30, 1))),
         [((33, 65), f32), ("ids", (33, 65), 12)]),
        ("linalg_fft_library_calls", "check",
         lambda: Fn(lambda a, b, x: (torch.linalg.cholesky(a @ a.mT + 8 * torch.eye(8, device=a.device)) * 2,
                                     torch.linalg.solve(a + 8 * torch.eye(8, device=a.device), b) + 1,
                                     torch.linalg.svdvals(a).exp(),
                                     torch.fft.irfft(torch.fft.rfft(x * 3), 300) - 1)),
         [((8, 8), f32), ((8, 3), f32), ((16, 300), f32)]),
        # GPU-sized benchmark models.
        ("mlp", "bench", lambda: MLP(inputs=1024, hidden=4096, classes=1000),
         [((4096, 1024), f32)]),
        ("layernorm_gelu_softmax", "bench", lambda: NormActBlock(4096), [((8192, 4096), f32)]),
        ("small_cnn", "bench", SmallCNN, [((256, 3, 32, 32), f32)]),
        ("transformer_block", "bench", lambda: TransformerBlock(dim=1024, heads=16),
         [((8, 512, 1024), f32)]),
        # The same models in bf16 (parameters and inputs): kernels compute in float32,
        # matmuls and convolutions are library calls in bf16.
        ("mlp_bf16", "bench", lambda: MLP(inputs=1024, hidden=4096, classes=1000).bfloat16(),
         [((4096, 1024), bf16)]),
        ("layernorm_gelu_softmax_bf16", "bench", lambda: NormActBlock(4096).bfloat16(),
         [((8192, 4096), bf16)]),
        ("small_cnn_bf16", "bench", lambda: SmallCNN().bfloat16(), [((256, 3, 32, 32), bf16)]),
        ("transformer_block_bf16", "bench",
         lambda: TransformerBlock(dim=1024, heads=16).bfloat16(), [((8, 512, 1024), bf16)]),
        ("full_sum", "bench", lambda: Fn(lambda x: (x.sum(), x.abs().amax())),
         [((8192, 4096), f32)]),
        ("cumsum_rows", "bench", lambda: Fn(lambda x: torch.cumsum(x, -1)),
         [((8192, 4096), f32)]),
        ("cumsum_long_rows", "bench", lambda: Fn(lambda x: torch.cumsum(x, -1)),
         [((8, 2_000_000), f32)]),
        ("sort_rows", "bench", lambda: Fn(lambda x: torch.sort(x, -1)), [((8192, 1024), f32)]),
        # Either side of library_routing.LIBRARY_SORT_LENGTH (Dyno's network up to 256, a
        # library call beyond), 8M elements each.
        ("sort_rows_64", "bench", lambda: Fn(lambda x: torch.sort(x, -1)),
         [((131072, 64), f32)]),
        ("sort_rows_256", "bench", lambda: Fn(lambda x: torch.sort(x, -1)),
         [((32768, 256), f32)]),
        ("sort_rows_512", "bench", lambda: Fn(lambda x: torch.sort(x, -1)),
         [((16384, 512), f32)]),
        ("sort_rows_256_bf16", "bench", lambda: Fn(lambda x: torch.sort(x, -1)),
         [((32768, 256), bf16)]),
        ("topk_rows", "bench", lambda: Fn(lambda x: torch.topk(x, 8, -1)),
         [((8192, 1024), f32)]),
        ("argmax_rows", "bench", lambda: Fn(lambda x: x.argmax(-1)), [((8192, 4096), f32)]),
        ("max_pool_with_indices", "bench",
         lambda: Fn(lambda x: F.max_pool2d(x, 2, return_indices=True)),
         [((256, 64, 32, 32), f32)]),
        ("scatter_add", "bench", lambda: Fn(lambda x, i, s: x.scatter_add(0, i, s)),
         [((4096, 1024), f32), ("ids", (16384, 1024), 4096), ((16384, 1024), f32)]),
        # Smaller scatter-adds (library calls, library_routing.LIBRARY_SCATTER_UPDATES),
        # with a producer of the updates (a Dyno kernel).
        ("scatter_add_16k", "bench",
         lambda: Fn(lambda x, i, s: x.scatter_add(0, i, s * 2 + 1)),
         [((1024, 64), f32), ("ids", (256, 64), 1024), ((256, 64), f32)]),
        ("scatter_add_256k", "bench",
         lambda: Fn(lambda x, i, s: x.scatter_add(0, i, s * 2 + 1)),
         [((4096, 256), f32), ("ids", (1024, 256), 4096), ((1024, 256), f32)]),
        # One read and one write of 2^28 floats (1 GiB each way).
        ("fused_pointwise_bandwidth", "bandwidth",
         lambda: Fn(lambda x: F.relu(x * 1.5 + 0.25) * 0.5), [((1 << 28,), f32)]),
    ]


def make_inputs(specs, device, seed=0):
    generator = torch.Generator(device="cpu").manual_seed(seed)
    inputs = []
    for spec in specs:
        if spec[0] == "ids":
            inputs.append(torch.randint(0, spec[2], spec[1], generator=generator).to(device))
        else:
            shape, dtype = spec
            inputs.append(torch.randn(shape, generator=generator, dtype=dtype).to(device))
    return tuple(inputs)


def build(builder, device, seed=0):
    torch.manual_seed(seed)
    return builder().eval().to(device)
