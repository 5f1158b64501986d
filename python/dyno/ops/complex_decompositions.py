"""Ops on complex tensors that torch-mlir cannot lower: conjugates, polar and complex abs
(complex angle: decompositions.angle), as real arithmetic on the real and imaginary parts. (FFTs are library calls,
pocketfft or cuFFT: library_calls. Short FFTs were DFT products here once: 6-10x slower
than pocketfft at lengths 32-128, 2026-11-24.)"""
import torch

aten = torch.ops.aten


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


def table():
    return {
        aten._conj.default: conj,
        aten._conj_physical.default: conj,
        aten.polar.default: polar,
        aten.abs.default: complex_abs,
    }
