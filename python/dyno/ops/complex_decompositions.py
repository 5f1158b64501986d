"""Ops on complex tensors that torch-mlir cannot lower: conjugates, polar, complex abs and
angle (of real numbers too), as real arithmetic on the real and imaginary parts. (FFTs
are library calls, pocketfft or cuFFT: library_calls. Short FFTs were DFT products here
once: 6-10x slower than pocketfft at lengths 32-128, 2026-11-24.)"""
import math

import torch

from .decompositions import as_tensor, decomposes, is_float

aten = torch.ops.aten


@decomposes(aten._conj.default, aten._conj_physical.default)
def conj(x):
    """aten._conj (a lazily conjugated view in eager) and aten._conj_physical of a complex
    tensor: the conjugate as a new tensor, which a functional graph cannot tell apart."""
    if not x.is_complex():
        return NotImplemented
    return torch.complex(torch.real(x), -torch.imag(x))


@decomposes(aten.abs.default)
def complex_abs(x):
    """|z| of a complex tensor as std::abs computes it: hypot(real, imag) (torch-mlir
    lowers abs to math.absf, which takes no complex operand)."""
    if not x.is_complex():
        return NotImplemented
    return torch.hypot(torch.real(x), torch.imag(x))


@decomposes(aten.polar.default)
def polar(magnitude, angle):
    """ATen's polar: (abs cos(angle), abs sin(angle)) in the real type."""
    return torch.complex(magnitude * torch.cos(angle), magnitude * torch.sin(angle))


@decomposes(aten.angle.default)
def angle(x):
    """The argument of a real number: pi below zero, 0 otherwise, NaN for NaN
    (torch-mlir cannot lower it); of a complex number, atan2(imag, real) (std::arg)."""
    if x.is_complex():
        return torch.atan2(torch.imag(x), torch.real(x))
    if not is_float(x):
        return NotImplemented
    result = aten.where.self(aten.lt.Scalar(x, 0.0), as_tensor(math.pi, x),
                             as_tensor(0.0, x))
    return aten.where.self(aten.isnan.default(x), x, result)
