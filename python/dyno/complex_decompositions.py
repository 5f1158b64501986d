"""Ops with complex results that torch-mlir cannot lower: conjugates, polar, and FFTs.

Short FFTs as dense DFTs: aten._fft_r2c, _fft_c2c and _fft_c2r (what torch.fft and
stft call) become matrix products with cosine and sine tables, which Dyno compiles.

Each transformed dimension multiplies by an n x m table of cos(2 pi (j k mod n) / n) and
sin(...): the angle's integer part is reduced exactly before the float64 cos/sin, and the
products accumulate in float64, so results match pocketfft (eager's) to float32 rounding.
A DFT costs n^2 per line against the FFT's n log n, so only transforms of length up to
MAX_LENGTH are decomposed; longer ones (and every FFT on the Triton target, which has
no complex type) stay aten ops, which the compiled graph calls in pocketfft or cuFFT
(library_calls). Normalization follows ATen's fft_norm_mode: 0 none, 1 by 1/sqrt(n),
2 by 1/n, with n the product of the transformed (signal) lengths.
"""
import math
from typing import List, Sequence

import torch

aten = torch.ops.aten

# Longest transform computed as a DFT (a 128 x 128 float64 table is 128 KiB).
MAX_LENGTH = 128


def _table(rows: int, columns: int, n: int, device):
    """cos and sin of 2 pi r c / n for r < rows and c < columns, in float64."""
    r = torch.arange(rows, device=device, dtype=torch.int64)[:, None]
    c = torch.arange(columns, device=device, dtype=torch.int64)[None, :]
    angle = torch.remainder(r * c, n).to(torch.float64) * (2.0 * math.pi / n)
    return torch.cos(angle), torch.sin(angle)


def _dft(real, imag, dim: int, m: int, sign: float):
    """X_k = sum_j x_j exp(sign 2 pi i j k / n) along `dim`, for k < m; `imag` may be None
    (a real input). Returns float64 (real, imag)."""
    n = real.shape[dim]
    cos, sin = _table(n, m, n, real.device)
    real = real.movedim(dim, -1)
    out_real = real @ cos
    out_imag = (real @ sin) * sign
    if imag is not None:
        imag = imag.movedim(dim, -1)
        out_real = out_real - (imag @ sin) * sign
        out_imag = out_imag + imag @ cos
    return out_real.movedim(-1, dim), out_imag.movedim(-1, dim)


def _normalized(real, imag, normalization: int, signal_numel: int):
    if normalization == 1:
        scale = 1.0 / math.sqrt(signal_numel)
    elif normalization == 2:
        scale = 1.0 / signal_numel
    else:
        return real, imag
    return real * scale, (imag * scale if imag is not None else None)


def _complex(real, imag, dtype):
    """The complex result, contiguous as pocketfft's (the tables' products are views
    moved back into place)."""
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(real.to(part).contiguous(), imag.to(part).contiguous())


def _decomposable(x, dims: Sequence[int], lengths: Sequence[int]) -> bool:
    return (x.dtype in (torch.float32, torch.complex64) and
            all(0 < n <= MAX_LENGTH for n in lengths) and x.numel() > 0 and len(dims) > 0)


def _wrap(dims, rank) -> List[int]:
    return [d % rank for d in dims]


def fft_r2c(x, dim, normalization, onesided):
    dims = _wrap(dim, x.dim())
    if not _decomposable(x, dims, [x.shape[d] for d in dims]):
        return NotImplemented
    real, imag = x.to(torch.float64), None
    signal_numel = math.prod(x.shape[d] for d in dims)
    for position, d in enumerate(reversed(dims)):
        n = real.shape[d]
        m = n // 2 + 1 if onesided and position == 0 else n
        real, imag = _dft(real, imag, d, m, -1.0)
    real, imag = _normalized(real, imag, normalization, signal_numel)
    return _complex(real, imag, torch.complex64)


def fft_c2c(x, dim, normalization, forward):
    dims = _wrap(dim, x.dim())
    if not _decomposable(x, dims, [x.shape[d] for d in dims]):
        return NotImplemented
    real, imag = torch.real(x).to(torch.float64), torch.imag(x).to(torch.float64)
    for d in dims:
        real, imag = _dft(real, imag, d, real.shape[d], -1.0 if forward else 1.0)
    real, imag = _normalized(real, imag, normalization,
                             math.prod(x.shape[d] for d in dims))
    return _complex(real, imag, x.dtype)


def fft_c2r(x, dim, normalization, last_dim_size):
    """The inverse of a onesided transform: the last dimension holds k = 0 .. n/2 of a
    Hermitian signal of length n = last_dim_size; pocketfft ignores the imaginary parts
    of k = 0 and (n even) k = n/2, and counts every other k twice (k and n - k)."""
    dims = _wrap(dim, x.dim())
    n = int(last_dim_size)
    lengths = [x.shape[d] for d in dims[:-1]] + [n]
    if not _decomposable(x, dims, lengths) or x.shape[dims[-1]] != n // 2 + 1:
        return NotImplemented
    real, imag = torch.real(x).to(torch.float64), torch.imag(x).to(torch.float64)
    for d in dims[:-1]:
        real, imag = _dft(real, imag, d, real.shape[d], 1.0)
    last = dims[-1]
    m = n // 2 + 1
    k = torch.arange(m, device=x.device)
    weight = torch.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0).to(torch.float64)
    cos, sin = _table(m, n, n, x.device)  # rows k < m, columns j < n
    real = real.movedim(last, -1) * weight
    imag = imag.movedim(last, -1) * weight
    out = (real @ cos - imag @ sin).movedim(-1, last)
    out, _ = _normalized(out, None, normalization, math.prod(lengths))
    return out.to(torch.float32).contiguous()


def conj(x):
    """aten._conj (a lazily conjugated view in eager) and aten._conj_physical of a complex
    tensor: the conjugate as a new tensor, which a functional graph cannot tell apart."""
    if not x.is_complex():
        return NotImplemented
    return torch.complex(torch.real(x), -torch.imag(x))


def complex_abs(x):
    """|z| of a complex tensor as std::abs computes it: hypot(real, imag) (torch-mlir
    lowers abs to math.absf, which takes no complex operand)."""
    if not x.is_complex():
        return NotImplemented
    return torch.hypot(torch.real(x), torch.imag(x))


def polar(magnitude, angle):
    """ATen's polar: (abs cos(angle), abs sin(angle)) in the real type."""
    return torch.complex(magnitude * torch.cos(angle), magnitude * torch.sin(angle))


def table(ffts: bool = True):
    """Conjugates and polar; with `ffts`, the short-FFT decompositions (otherwise FFTs
    stay aten ops, which library_calls turns into pocketfft/cuFFT calls)."""
    transforms = {
        aten._fft_r2c.default: fft_r2c,
        aten._fft_c2c.default: fft_c2c,
        aten._fft_c2r.default: fft_c2r,
    } if ffts else {}
    return {
        **transforms,
        aten._conj.default: conj,
        aten._conj_physical.default: conj,
        aten.polar.default: polar,
        aten.abs.default: complex_abs,
    }
