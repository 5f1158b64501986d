"""What a generated host wrapper calls at run time. Needs only torch.

Self-contained, like the triton/runtime/ package (exported as triton_runtime/):
`dyno.export_triton` ships it with the wrapper.
"""
import base64
import contextlib
import functools
import math
import os
from typing import Optional

import torch


def _dense_layout(shape, stride) -> bool:
    """Whether `stride` lays out `shape` without overlap or gaps (some permutation of a
    contiguous layout). Eager may return overlapping views (an expand's zero strides);
    those are not reproduced by copying, the values are returned densely."""
    expected = 1
    for size, step in sorted(((sz, st) for sz, st in zip(shape, stride) if sz != 1),
                             key=lambda pair: pair[1]):
        if step != expected:
            return False
        expected *= size
    return True


def rows_padded(tensor: torch.Tensor, stride) -> bool:
    """Whether `tensor` is laid out row-major as eager's dense row-major `stride`, except
    that its rows (the last dimension) are padded to a longer pitch: the view of a padded
    product's result (PaddedProducts)."""
    shape, actual = tensor.shape, tensor.stride()
    if tensor.dim() < 2 or actual[-1] != 1 or tuple(stride) != dense_strides(
            shape, range(tensor.dim())):
        return False
    pitch = expected = actual[-2]
    for dim in range(tensor.dim() - 2, -1, -1):
        if shape[dim] != 1 and actual[dim] != expected:
            return False
        expected *= shape[dim]
    return pitch >= shape[-1]


# A padded product's output of at least this many elements keeps its padded rows; a
# smaller one is copied into eager's strides (the copy costs microseconds, and a caller
# that flattens it keeps working).
PADDED_ROWS_MIN_ELEMENTS = 1 << 20


def as_eager(tensor: torch.Tensor, stride, dtype, padded_rows: bool = False) -> torch.Tensor:
    """Gives `tensor` the dtype and strides eager PyTorch produces for this output. An
    effect token (an input passed through, None at run time) is returned as it is.
    `padded_rows`: the output is a view of a padded product's result, returned with its
    rows padded (as Inductor's padded products are) where it is laid out as eager's
    otherwise and large (PADDED_ROWS_MIN_ELEMENTS): copying GPT-2's logits into eager's
    strides took as long as the LM head."""
    if tensor is None:
        return None
    if padded_rows and tensor.dtype == dtype and tensor.numel() >= PADDED_ROWS_MIN_ELEMENTS \
            and rows_padded(tensor, stride):
        return tensor
    if tensor.dtype != dtype:
        tensor = tensor.view(dtype) if tensor.element_size() == torch.empty(
            (), dtype=dtype).element_size() else tensor.to(dtype)
    if tensor.numel() == 0 and tensor.dim() and tensor.stride() != stride:
        # Nothing to copy; eager's strides (a permuted view of an empty batch) all the same.
        return torch.empty_strided(tensor.shape, stride, dtype=tensor.dtype,
                                   device=tensor.device)
    if (tensor.dim() and tensor.stride() != stride and tensor.numel() > 1
            and _dense_layout(tensor.shape, stride)):
        out = torch.empty_strided(tensor.shape, stride, dtype=tensor.dtype, device=tensor.device)
        out.copy_(tensor)
        return out
    return tensor


def dense_strides(shape, order):
    """Row-major strides for `shape` with dimensions nested as `order` (outermost first)."""
    strides, step = [0] * len(shape), 1
    for dim in reversed(order):
        strides[dim] = step
        step *= max(int(shape[dim]), 1)
    return tuple(strides)


def view(tensor: torch.Tensor, shape, strides, offset: int) -> torch.Tensor:
    """`tensor`'s memory seen with `shape` and `strides`, `offset` elements after where
    `tensor` starts (the wrapper's `_view`, view_layouts.py)."""
    return tensor.as_strided(shape, strides, tensor.storage_offset() + offset)


try:  # the same in 1.6 us of host time, against as_strided's 3.8 (an H200 server)
    from torch._C._dynamo.guards import _reinterpret_tensor as _fast_view
except ImportError:  # another torch: as_strided
    _fast_view = view


def divsi(a: int, b: int) -> int:
    """arith.divsi: division rounding toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def remsi(a: int, b: int) -> int:
    """arith.remsi: the remainder of divsi, with the dividend's sign."""
    return a - divsi(a, b) * b


# At most this many compile threads by default (on the CPU target, threads of the
# codegen worker process, each an LLVM session while it compiles its part).
DEFAULT_MAX_COMPILE_THREADS = 8


def compile_threads() -> int:
    """How many threads compile a graph's kernels at once (the CPU target's JIT, Triton's
    compiles ahead of the first launch): DYNO_JIT_THREADS, by default the cores this
    process may run on, at most DEFAULT_MAX_COMPILE_THREADS."""
    configured = os.environ.get("DYNO_JIT_THREADS", "")
    if configured:
        return max(1, int(configured))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    return min(cores, DEFAULT_MAX_COMPILE_THREADS)


@functools.lru_cache(maxsize=None)
def onednn_computes(dtype: torch.dtype) -> bool:
    """Whether this CPU runs oneDNN's kernels for `dtype` (bf16: AVX-512 BF16, AMX or
    AVX-512 emulation; f16: AVX-512 FP16 or AMX-FP16), as eager's own bf16/f16 matmuls do."""
    mkldnn = torch.ops.mkldnn
    if not torch.backends.mkldnn.is_available():
        return False
    if dtype == torch.bfloat16:
        return bool(mkldnn._is_mkldnn_bf16_supported())
    if dtype == torch.float16:
        return bool(mkldnn._is_mkldnn_fp16_supported())
    return False


def onednn_runs(dtype: torch.dtype) -> bool:
    """Whether oneDNN, enabled, computes `dtype`'s GEMMs and convolutions here: f32, and
    bf16/f16 where this CPU has the instructions (onednn_computes)."""
    return torch.backends.mkldnn.enabled and (
        dtype == torch.float32 and torch.backends.mkldnn.is_available()
        or onednn_computes(dtype))


# A float32 graph's convolutions run channels-last with plain filters (a training
# graph's, or filters computed in the graph; an inference graph's parameters stay packed,
# PackedWeights.conv2d, and run channels-last) where the filters copied per call
# (kernels of Dyno's make them channels-last: those with more than one input channel and
# pixel) have at most this many elements per element of the convolutions' outputs.
# Measured (AMD Zen 4, 2 threads, paired, Dyno channels-last against NCHW;
# benchmarks/experiments/conv_layout_ab.py): SmallCNN (0.026) 394 -> 367 us and 443 ->
# 424, ResNet-50 with 8 images (0.13) 520 -> 420 ms and 2 images (0.51) 154 -> 135 ms;
# the zoo's ResNet (0.62) a wash (2257 -> 2229 us, 2682 -> 2712); with 1 image (1.02)
# NCHW wins, 54 against 68 ms.
F32_CHANNELS_LAST_MAX_FILTER_SHARE = 0.55


def convolves_channels_last(dtype: torch.dtype, frozen_filters: bool,
                            depthwise: bool = False,
                            filter_share: Optional[float] = None) -> bool:
    """Whether this runtime runs convolutions of `dtype` on channels-last tensors
    (`depthwise`: in a graph with depthwise convolutions; `filter_share`: the graph's
    filters that are copied channels-last per call, in elements per element of its
    convolutions' outputs; None: not known, as at run time).
    With packed filters (`frozen_filters`: an inference graph's parameters, frozen or
    checked, PackedWeights.conv2d, whose packed filter suits either layout): f32, and
    bf16/f16 where oneDNN computes them. bf16/f16 where oneDNN computes
    them in any case: NCHW bf16 convolutions are slower (ResNet-50 with one image, where
    the filters' copies weigh most: 52.3 ms NCHW, 47.7 channels-last; AMD Zen 4,
    AVX-512 BF16, no AMX; Sapphire Rapids with AMX 1.24x). f32 with plain filters where
    their copies are small against the work (filter_share at most
    F32_CHANNELS_LAST_MAX_FILTER_SHARE), or in a graph with depthwise convolutions
    (oneDNN's NHWC depthwise kernel is faster and a depthwise filter is channels-last
    as it is: ConvNeXt f32 1791 -> 1665 us). The compiler's kernels copy the graph's
    plain filters and image channels-last (dyno-channels-last-convolutions'
    copy-host-operands); ATen's strided copy, which did before, took 1.6x-2x as long
    and made f32 lose (ResNet 3455 -> 3553 us, 2026-12-04)."""
    if dtype == torch.float32:
        return torch.backends.mkldnn.is_available() and (
            frozen_filters or depthwise or
            filter_share is not None and filter_share <= F32_CHANNELS_LAST_MAX_FILTER_SHARE)
    return onednn_computes(dtype)


_EPILOGUES = {None: ("none", None), "gelu": ("gelu", "none")}
_ONEDNN_GEMM_MIN_SIZE = 16 * 16 * 16

# Float32 linear layers of at least this many multiply-adds run as oneDNN's linear, on
# CPUs that are not Intel's. On an AMD EPYC (Zen 4, AVX-512, 2 threads), torch.mm (MKL)
# took 2-56% longer than oneDNN's f32 linear from 16.8M multiply-adds (256 x 256 @ 256 x
# 256: 254 against 237 us; ViT's 68 x 256 @ 256 x 1024: 311 against 233; 128 x 768 @ 768
# x 3072: 5.1 against 3.3 ms) and 3-11% less below 8.4M, where oneDNN's primitive's fixed
# cost shows (benchmarks/experiments/f32_gemm_libraries.py); whole models, paired
# (benchmarks/ab_wrapper.py): BERT 1.03x, T5 1.06x, Llama 1.10x, Mistral 1.14x, OPT
# 1.06x, wav2vec2 1.11x, ViT 1.08x (2026-12-05). MKL, which torch.mm calls, is Intel's
# own library; on Intel CPUs (not measured against oneDNN here) f32 products stay with
# it, as eager's and Inductor's do.
F32_ONEDNN_LINEAR_MIN_VOLUME = 16 * 1024 * 1024


@functools.lru_cache(maxsize=None)
def _intel_cpu() -> bool:
    try:
        with open("/proc/cpuinfo") as info:
            return any(line.split(":")[-1].strip() == "GenuineIntel"
                       for line in info.read().split("\n\n")[0].splitlines()
                       if line.startswith("vendor_id"))
    except OSError:
        return True  # unknown: as eager


def onednn_linear_pays(dtype: torch.dtype, m: int, k: int, n: int) -> bool:
    """Whether an [m, k] @ [k, n] linear layer of `dtype` runs as oneDNN's linear on
    this CPU: bf16/f16 where oneDNN computes them (above 16**3 multiply-adds); f32 from
    F32_ONEDNN_LINEAR_MIN_VOLUME on CPUs that are not Intel's."""
    if not torch.backends.mkldnn.enabled or not m or not k or not n:
        return False
    if dtype == torch.float32:
        return (m * k * n >= F32_ONEDNN_LINEAR_MIN_VOLUME and not _intel_cpu()
                and torch.backends.mkldnn.is_available())
    return onednn_computes(dtype) and m * k * n > _ONEDNN_GEMM_MIN_SIZE


def linear(a: torch.Tensor, b: torch.Tensor, bias, epilogue=None) -> torch.Tensor:
    """A dyno.contraction "matmul" `a @ b (+ bias[n])`, then its epilogue: `linear_weight` on
    the weight `b.t()`."""
    return linear_weight(a, b.t(), bias, epilogue)


@functools.lru_cache(maxsize=None)
def _onednn_linear():
    return torch.ops.mkldnn._linear_pointwise.default


def linear_weight(a: torch.Tensor, weight: torch.Tensor, bias,
                  epilogue=None) -> torch.Tensor:
    """`a @ weight.t() (+ bias[n])`, then its epilogue (GELU with erf, from
    dyno-fuse-matmul-epilogues), for a linear layer's [n, k] `weight` (the wrapper
    passes a layer's weight itself where the graph transposes it for the matmul: no
    view is made per call). bf16/f16 on a CPU whose oneDNN computes them, and large f32
    products where oneDNN is faster (`onednn_linear_pays`): oneDNN's
    linear, which adds the bias and applies the epilogue to the f32 accumulator before
    rounding once (eager's addmm copies the bias into its output first; 8-30% slower
    on 2 threads). Elsewhere, and for a weight that is not dense [n, k] (GPT-2's Conv1D
    stores it [k, n]: oneDNN's linear would need a copy of the whole weight on every
    call, 180 us of GPT-2's 9.8 ms in bf16, where addmm reads it as it is): PyTorch's
    matmul, then its GELU."""
    # (oneDNN has no linear with no elements to multiply: K == 0, N == 0. Its weight and
    # bias must be dense: an expanded operand has zero strides. At M*N*K <= 16**3 its
    # primitive costs 15-25 us more than the product, where PyTorch's matmul takes 6-9 us
    # (bf16, 2 threads: 4x16 @ 16x16, 1x64 @ 64x64); above it oneDNN is as fast or faster.
    # f32: F32_ONEDNN_LINEAR_MIN_VOLUME.)
    if (a.device.type == "cpu" and a.dim() == 2 and weight.is_contiguous()
            and onednn_linear_pays(a.dtype, a.shape[0], a.shape[1], weight.shape[0])):
        attr, algorithm = _EPILOGUES[epilogue]
        return _onednn_linear()(a, weight,
                                None if bias is None else bias.contiguous(), attr, [],
                                algorithm)
    out = torch.mm(a, weight.t()) if bias is None else torch.addmm(bias, a, weight.t())
    return out if epilogue is None else torch.nn.functional.gelu(out)


# cuBLAS runs slower kernels for a bf16/f16 product whose N (or K) is not a multiple of
# 8 elements (16 bytes), whatever the rows' alignment in memory: on an H200, GPT-2's LM
# head (4096 x 768 @ 768 x 50257, bf16) took 3.36 ms as it is and 0.45 ms with the weight
# padded to N = 50264 beforehand (0.55 ms padded on every call); an out= buffer with
# padded rows alone changed nothing, and f32 (TF32 off) gained nothing either way
# (benchmarks/gpu_gemm_padding.py, benchmarks/results/gpu-gemm-padding-2026-12-01-h200.md).
# A weight kept padded (frozen) is worth it at any size (256 x 256 @ 256 x 1001: 12.8 ->
# 9.4 us). Padded on every call, it won from about 4e9 multiply-adds (GPT-2's head for
# one sequence of 128 tokens, 4.9e9: 131 -> 98 us; BERT's for 16 x 256, 787 -> 342 us)
# and lost or tied below 1.1e9 (the pad's own launches): PAD_PER_CALL_MIN_VOLUME. An odd
# K (both operands padded on every call) won at 1.6e11 (GPT-2's head's input gradient,
# K = 50257: 2.65 -> 1.12 ms) and tied or lost at 3.2e9 and below: PAD_K_MIN_VOLUME.
PAD_PER_CALL_MIN_VOLUME = 1 << 32
PAD_K_MIN_VOLUME = 1 << 32


# Float32 products run on the tensor cores as three TF32 products (the Triton runtime's
# float32_products.py) where the Triton target is asked to
# (CompileOptions.tensor_core_float32) and the Triton kernel (its heuristic
# configuration) was measured faster than cuBLAS's float32 GEMM, which eager and
# Inductor run: on an H100, from 2^18 outputs and K of 128 (1.04x-1.45x at 2^18 to 2^20
# outputs, 1.35x-1.90x above), except for long sums over few outputs (K 2048 with 2^18
# outputs: 0.78x-0.83x; with 2^19: 1.16x-1.20x); below 2^18 (2^17) 0.97x. Closer to the
# float64 product at every size measured. benchmarks/experiments/gpu_f32_gemm_precision.py --configs,
# benchmarks/results/gpu-zoo-float32-products-tuned-2026-12-05-h100.md.
TENSOR_CORE_FLOAT32_MIN_OUTPUTS = 1 << 18
TENSOR_CORE_FLOAT32_MIN_K = 128
# Above this K, products need twice the outputs.
TENSOR_CORE_FLOAT32_LONG_K = 1024
# A B that is not K-major (a weight stored [K, N], GPT-2's Conv1D) is copied K-major in
# each call (8 K N bytes of memory traffic, shared by the M rows of A): with the copy,
# 1.10x-1.40x cuBLAS from 2048 rows (GPT-2's shapes), 0.94x-1.16x at 1024, 0.75x-0.94x
# at 512.
TENSOR_CORE_FLOAT32_COPY_MIN_ROWS = 2048
# Such weights, when the graph takes them as arguments, are copied in groups of this
# many by one launch (the Triton runtime's Float32Products.k_major_copies: one layer of
# GPT-2), made before the group's first product: not one copy kernel per product.
K_MAJOR_COPIES_PER_GROUP = 4


def tensor_core_float32_product(m: int, k: int, n: int, copies_b: bool = False) -> bool:
    """Whether a static float32 [m, k] @ [k, n] product runs on the tensor cores;
    `copies_b`: B is read from a K-major copy made in the call."""
    outputs = m * n
    if k > TENSOR_CORE_FLOAT32_LONG_K:
        outputs //= 2
    return (outputs >= TENSOR_CORE_FLOAT32_MIN_OUTPUTS and k >= TENSOR_CORE_FLOAT32_MIN_K
            and (not copies_b or m >= TENSOR_CORE_FLOAT32_COPY_MIN_ROWS))


def product_padding(m: int, k: int, n: int, dtype: torch.dtype, kept: bool = False):
    """(K padding, N padding) in elements that PaddedProducts gives an [m, k] @ [k, n]
    product of `dtype` (`kept`: its weight is frozen, padded once): (0, 0) where it runs
    as it is."""
    if dtype not in (torch.bfloat16, torch.float16):
        return 0, 0
    multiple = 16 // dtype.itemsize  # (called on every padded product: no tensor made)
    volume = m * k * n
    k_pad = -k % multiple if volume >= PAD_K_MIN_VOLUME else 0
    n_pad = -n % multiple if kept or volume >= PAD_PER_CALL_MIN_VOLUME else 0
    return k_pad, n_pad


def _zero_padded(matrix: torch.Tensor, rows: int, columns: int) -> torch.Tensor:
    """`matrix` with `rows` zero rows and `columns` zero columns added, dense. Only the
    added elements are zeroed: `torch.nn.functional.pad` fills the whole result first
    (GPT-2's 77 MB LM-head weight on an H200: a 24 us fill before the 41 us copy)."""
    height, width = matrix.shape
    out = matrix.new_empty((height + rows, width + columns))
    out[:height, :width].copy_(matrix)
    if rows:
        out[height:].zero_()
    if columns:
        out[:height, width:].zero_()
    return out


def _padded_weight(b: torch.Tensor, k_pad: int, n_pad: int) -> torch.Tensor:
    """`b` [K, N] with zero rows and columns added, in `b`'s own layout (a linear layer's
    weight.t() stays a transpose of a dense [N', K'] tensor)."""
    if b.dim() == 2 and b.t().is_contiguous():
        return _zero_padded(b.t(), n_pad, k_pad).t()
    return _zero_padded(b, k_pad, n_pad)


class PaddedProducts:
    """The bf16/f16 matrix products of one graph whose sizes `product_padding` pads: `a @ b
    (+ bias[n])`, then the epilogue, computed on zero-padded operands and returned as a
    view of the padded result (rows of N' elements). A frozen weight (the `freezing`
    option's promise: no writes through `.data`) is padded once and kept while it is
    the same tensor, unchanged (its version counter), except while a CUDA graph records
    the call, which then pads it on every replay: a replay must read the weight as the
    optimizer left it. Every other weight is padded on every call."""

    def __init__(self):
        self._slots = {}  # slot -> (padded weight, the weight's identity when padded)

    def mm(self, slot: int, a: torch.Tensor, b: torch.Tensor, bias=None, epilogue=None,
           frozen: bool = False) -> torch.Tensor:
        k_pad, n_pad = product_padding(a.shape[0], a.shape[1], b.shape[1], a.dtype, frozen)
        if frozen and not (a.is_cuda and torch.cuda.is_current_stream_capturing()):
            identity = (b.data_ptr(), b._version, b.shape, b.stride(), k_pad, n_pad)
            padded, padded_identity = self._slots.get(slot, (None, None))
            if padded_identity != identity:
                padded = _padded_weight(b, k_pad, n_pad)
                self._slots[slot] = (padded, identity)
        else:
            padded = _padded_weight(b, k_pad, n_pad)
        if k_pad:
            a = torch.nn.functional.pad(a, (0, k_pad))
        if bias is None:
            out = torch.mm(a, padded)
        else:
            out = torch.addmm(torch.nn.functional.pad(bias, (0, n_pad)), a, padded)
        if epilogue == "gelu":
            out = torch.nn.functional.gelu(out)
        elif epilogue is not None:
            raise ValueError(f"unknown matmul epilogue {epilogue!r}")
        return out[:, :b.shape[1]] if n_pad else out


def pack_linear_weight(weight: torch.Tensor, rows: int) -> torch.Tensor:
    """A linear layer's [N, K] weight in oneDNN's blocked layout for inputs of about
    `rows` rows (other row counts work too)."""
    return torch.ops.mkldnn._reorder_linear_weight(weight, rows)


def pack_convolution_weight(weight: torch.Tensor, padding, stride, dilation, groups,
                            input_size) -> torch.Tensor:
    """A convolution's filter in oneDNN's blocked layout for inputs of `input_size`."""
    return torch.ops.mkldnn._reorder_convolution_weight(weight.contiguous(), padding, stride,
                                                        dilation, groups, input_size)


def _same_bytes_function():
    """libc's memcmp on two addresses and a length, or None where ctypes cannot find it."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        memcmp = libc.memcmp
    except (OSError, AttributeError):
        return None
    memcmp.restype = ctypes.c_int
    memcmp.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return memcmp


_memcmp = _same_bytes_function()


def _dense(tensor: torch.Tensor) -> bool:
    """Whether `tensor`'s elements fill numel() * itemsize bytes from its data pointer
    (contiguous, or channels-last contiguous)."""
    return tensor.is_contiguous() or (
        tensor.dim() == 4 and tensor.is_contiguous(memory_format=torch.channels_last))


def same_bytes(tensor: torch.Tensor, snapshot: torch.Tensor) -> bool:
    """Whether dense `tensor` holds bit for bit what `snapshot` (a clone of it, in its
    layout) does: -0.0 is not 0.0, a NaN equals itself only in the same bits. libc's
    memcmp: 13.6 us for a 576 KiB filter where torch.equal took 58 (AMD Zen 4)."""
    nbytes = tensor.numel() * tensor.element_size()
    if _memcmp is not None:
        return _memcmp(tensor.data_ptr(), snapshot.data_ptr(), nbytes) == 0
    as_bytes = torch.uint8
    return torch.equal(tensor.reshape(-1).view(as_bytes), snapshot.reshape(-1).view(as_bytes))


class PackedWeights:
    """oneDNN's packed copies of one graph's GEMM weights and convolution filters, kept
    from call to call. oneDNN reorders a plain weight into its blocked layout on every
    call: a linear's weight packed once (`mkldnn._reorder_linear_weight`) measured 1.5x
    faster in bf16 at 128x512x1024 and up to 1.5x in fp32 (2 threads, Sapphire Rapids);
    packed filters made the zoo's CNNs 1.0x-1.13x faster (AMD Zen 4, 2 threads;
    benchmarks/experiments/packed_filters.py, docs/CpuTarget.md).

    A weight is packed again when it is another tensor (its address, shape, strides) or
    has changed: under `freezing` (`frozen`: its parameters are promised not to change
    behind autograd's back) when its version counter moved, which writes through `.data`
    do not move; otherwise (`checked`, a parameter of an inference graph compiled
    without that promise) when its bytes differ from a snapshot taken when it was
    packed, compared on every call (same_bytes), so that every write is seen however it
    was made."""

    def __init__(self):
        # slot -> (packed weight, the weight's identity when packed, its snapshot or None)
        self._slots = {}

    _packs = staticmethod(onednn_runs)  # whether this dtype's weights are packed

    def linear(self, a: torch.Tensor, argument: torch.Tensor, transposed: bool, slot: int,
               bias, epilogue=None) -> torch.Tensor:
        """`a @ b (+ bias[n])` and its epilogue, where b is the frozen `argument`
        (`transposed`: b is argument.t(), the [N, K] weight of a linear layer)."""
        weight = argument if transposed else argument.t()  # [N, K]
        if (a.device.type != "cpu" or not self._packs(a.dtype) or a.dtype != weight.dtype
                or not weight.numel() or not a.shape[0]):
            return linear_weight(a, weight, bias, epilogue)
        identity = (weight.data_ptr(), argument._version, weight.shape, weight.stride())
        packed, packed_identity, _ = self._slots.get(slot, (None, None, None))
        if packed_identity != identity:
            packed = pack_linear_weight(weight.contiguous(), a.shape[0])
            self._slots[slot] = (packed, identity, None)
        attr, algorithm = _EPILOGUES[epilogue]
        bias = bias.contiguous() if bias is not None else None
        return _onednn_linear()(a, packed, bias, attr, [], algorithm)

    def conv2d(self, slot: int, x, weight, bias, stride, padding, dilation,
               groups, checked: bool = False, channels_last=None) -> torch.Tensor:
        """A dyno.contraction "conv2d" whose filter `weight` is a parameter, frozen or
        (`checked`) compared with its snapshot on every call: oneDNN's convolution on a
        channels-last copy of `x` (as `conv2d` does in bf16) with the filter packed for
        this input's sizes (bf16 1.35x-1.96x and f32 1.15x-1.4x faster than
        torch.conv2d on ResNet's shapes, the same values). The result is channels-last,
        or in the layout `channels_last` asks for (as conv2d's)."""
        if (x.device.type != "cpu" or not self._packs(x.dtype) or x.dtype != weight.dtype
                or x.dim() != 4 or not x.numel() or not weight.numel()
                or (checked and not _dense(weight))):
            return conv2d(x, weight, bias, stride, padding, dilation, groups, channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
        identity = (weight.data_ptr(), None if checked else weight._version, weight.shape,
                    weight.stride(), x.shape)
        packed, packed_identity, snapshot = self._slots.get(slot, (None, None, None))
        if packed_identity != identity or (checked and not same_bytes(weight, snapshot)):
            packed = pack_convolution_weight(weight, padding, stride, dilation, groups,
                                             list(x.shape))
            # (One entry, replaced whole: the packed filter and the bytes it was made of
            # stay together.)
            self._slots[slot] = (packed, identity, weight.clone() if checked else None)
        bias = bias.contiguous() if bias is not None else None
        out = torch.ops.mkldnn._convolution_pointwise(x, packed, bias, padding, stride,
                                                      dilation, groups, "none", [], "")
        if channels_last is None:
            return out
        # (The wrapper views the result statically in the layout asked for.)
        layout = torch.channels_last if channels_last else torch.contiguous_format
        return out if out.is_contiguous(memory_format=layout) else \
            out.contiguous(memory_format=layout)


# Element types whose GPU convolutions always run channels-last (cuDNN's order: NCHW
# ones transposed their input to NHWC and their result back around every call): conv2d
# copies their input channels-last. float32 convolutions run in the layout the compiled
# graph gives their input and filter (the Triton target decides per graph:
# triton.channels_last_types).
GPU_CHANNELS_LAST_DTYPES = (torch.bfloat16, torch.float16)


def conv2d(x, weight, bias, stride, padding, dilation, groups,
           channels_last=None) -> torch.Tensor:
    """A dyno.contraction "conv2d". Where `convolves_channels_last` (bf16/f16 where oneDNN
    computes them): on a channels-last copy of the input (oneDNN's NCHW bf16
    convolutions measured 1.2x-3.4x slower than channels-last ones with AMX, the copy
    included; benchmarks/experiments/cpu_library_calls.py). The result is channels-last,
    as PyTorch returns it: the wrapper copies it to NCHW only for a kernel, and a
    convolution that reads it directly reads it as it is. On a GPU, bf16/f16 convolutions
    run channels-last too (GPU_CHANNELS_LAST_DTYPES): cuDNN's NCHW ones transposed their input to NHWC and
    their result back around every call (ResNet-50, bf16, H200: 0.57 ms of 2.51 ms per
    call), and the Triton target's kernels read and write these tensors channels-last
    (dyno-channels-last-convolutions). `channels_last`: the compiler's choice for this
    graph (the CPU target's per-graph rule, cpu.channels_last_types; on the Triton
    target False where it ran the graph's convolutions NCHW, a patch convolution of a
    few input channels in a transformer); None: the rule for the dtype. On the CPU, a
    result asked for as channels-last (True) or not (False) is returned in that layout."""
    if x.device.type == "cpu":
        # Where the compiler asks and this CPU's oneDNN computes the dtype (the Triton
        # target asks for its GPU's sake; run by its interpreter, f16 without AVX-512
        # FP16 stays with PyTorch's NCHW kernel, as eager runs it).
        wanted = (convolves_channels_last(x.dtype, frozen_filters=False)
                  if channels_last is None else channels_last)
        if wanted and onednn_runs(x.dtype) and x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
        out = torch.conv2d(x, weight, bias, stride, padding, dilation, groups)
        if channels_last is None or out.dim() != 4:
            return out
        # The layout the CPU wrapper was compiled for (it views the result statically):
        # a copy only where the computation gave the other one (PyTorch's kernel where
        # oneDNN does not compute the dtype; an input of the other layout).
        return out.contiguous(memory_format=torch.channels_last if channels_last
                              else torch.contiguous_format)
    elif (x.is_cuda and x.dtype in GPU_CHANNELS_LAST_DTYPES and x.dim() == 4
          and channels_last is not False):
        x = x.contiguous(memory_format=torch.channels_last)
    return torch.conv2d(x, weight, bias, stride, padding, dilation, groups)


class CheckFailed(RuntimeError):
    """A check of the inputs failed on the host (an index out of range, sizes a dynamic
    graph cannot take): this call cannot run compiled; eager reports the error."""


def library_call(op, *args, **kwargs):
    """A dyno.library_call: PyTorch's routine (LAPACK, pocketfft), whose own errors for
    bad inputs (a matrix that is not positive-definite) become CheckFailed: the call
    then runs eagerly, raising eager's error, and the next call runs compiled again."""
    try:
        return op(*args, **kwargs)
    except Exception as error:
        raise CheckFailed(f"{op}: {type(error).__name__}: {error}") from error


class CollectiveFailed(RuntimeError):
    """A collective of a compiled graph raised. The graph is not run again eagerly (this
    process alone would issue its collectives a second time): the collective's own error
    reaches the user, as in eager."""


def collective(op, *args, **kwargs):
    """A functional collective of torch.distributed (`_c10d_functional`), or its wait."""
    try:
        return op(*args, **kwargs)
    except Exception as error:
        raise CollectiveFailed(f"{op}: {type(error).__name__}: {error}") from error


def check_condition(condition: torch.Tensor, message: str):
    """A check computed by a kernel (a 0-d bool tensor: gather indices in range). On a
    GPU it is asserted on the device, without a host sync (and inside CUDA graphs), as
    eager CUDA ops assert bad indices; elsewhere a failure raises CheckFailed."""
    if condition.is_cuda:
        torch._assert_async(condition, message)
    elif not bool(condition):
        raise CheckFailed(message)


def constant(encoded: str, dtype: torch.dtype, shape, device="cpu") -> torch.Tensor:
    """A constant tensor of a wrapper's source (its bytes in base64), on `device`. Made
    when the wrapper loads, which may be while Dynamo traces with fake tensors: the
    constant is real all the same."""
    data = bytearray(base64.b64decode(encoded))
    with outside_fake_mode():
        if not data:
            return torch.empty(shape, dtype=dtype, device=device)
        return torch.frombuffer(data, dtype=dtype).reshape(shape).to(device)


def outside_fake_mode():
    try:
        from torch._subclasses.fake_tensor import unset_fake_temporarily
    except ImportError:  # a torch without fake tensors: nothing to leave
        return contextlib.nullcontext()
    return unset_fake_temporarily()


class ProfiledKernels:
    """A graph's kernels, each launch inside `torch.profiler.record_function("dyno:"
    + name)`, so that the profiler's tables show each kernel's host time by name (on
    a CPU, its run time). Used when DYNO_PROFILE_KERNELS=1 as a graph loads."""

    def __init__(self, kernels):
        self._kernels = kernels
        self._launchers = {}

    def __getitem__(self, name: str):
        launcher = self._launchers.get(name)
        if launcher is None:
            launch = self._kernels[name]
            label = "dyno:" + name

            def launcher(*args, **kwargs):
                with torch.profiler.record_function(label):
                    return launch(*args, **kwargs)

            self._launchers[name] = launcher
        return launcher

    def __getattr__(self, attribute):
        return getattr(self._kernels, attribute)


class Workspace:
    """The planned buffers of one compiled graph (memory_planning.plan_workspace):
    `slot_bytes[k]` bytes per slot, and per planned allocation its (slot, shape, dtype)
    view (a static view of one: (slot, shape, dtype, strides, offset)), on `device`.
    `acquire` hands a caller the views of one set of slots (made on first use, then
    kept); `release` takes them back. A call made while another holds a
    set (another thread, or re-entry) gets its own set, so no two running calls share
    memory. The slots are normal tensors even when first made under
    `torch.inference_mode()`, so that `out=` may write them in any later mode.

    On a GPU the kernels of a call run after it returns: a set is kept for the CUDA
    stream it was used on and handed only to calls on that stream, whose work the stream
    orders after the earlier call's (as the caching allocator reuses a block). A call
    recorded into a CUDA graph gets a set of its own, which the graph keeps (the graph's
    memory pool holds it); nothing of it is kept here."""

    _KEPT_SETS = 2

    def __init__(self, slot_bytes, views, device="cpu"):
        self.slot_bytes = list(slot_bytes)
        self.views = list(views)
        self.device = torch.device(device)
        self._free: dict = {}  # stream key -> kept sets

    def _stream_key(self):
        """The key of the sets a call may take now; None: none (a CUDA graph records)."""
        if self.device.type != "cuda":
            return 0
        if torch._C._cuda_isCurrentStreamCapturing():
            return None
        index = torch._C._cuda_getDevice() if self.device.index is None else self.device.index
        return index, torch._C._cuda_getCurrentRawStream(index)

    def acquire(self) -> list:
        key = self._stream_key()
        try:
            return self._free[key].pop()  # atomic under the GIL
        except (KeyError, IndexError):
            return self._new_set()

    def _new_set(self) -> list:
        with torch.inference_mode(False):
            slots = [torch.empty(size, dtype=torch.uint8, device=self.device)
                     for size in self.slot_bytes]
            made = []
            for slot, shape, dtype, *strided in self.views:
                if strided:  # a static view of the slot's buffer: (strides, offset)
                    strides, offset = strided
                    whole = slots[slot][:self.slot_bytes[slot] // dtype.itemsize
                                        * dtype.itemsize]
                    made.append(whole.view(dtype).as_strided(shape, strides, offset))
                else:
                    made.append(slots[slot][:math.prod(shape) * dtype.itemsize]
                                .view(dtype).view(shape))
            return made

    def release(self, buffers: list) -> None:
        key = self._stream_key()
        if key is None:
            return
        kept = self._free.setdefault(key, [])
        if len(kept) < self._KEPT_SETS:
            kept.append(buffers)

    def clear(self) -> None:
        """Lets go of every kept set (their memory goes back to the allocator)."""
        self._free = {}


def empty_strided(device):
    """`f(sizes, strides, dtype)`: a new tensor on `device`. On the CPU, PyTorch's own
    allocation without argument parsing (Inductor's wrappers call it too): 0.5 us
    against torch.empty's 1.8 (2 threads, AMD Zen 4)."""
    if torch.device(device).type == "cpu":
        fast = getattr(torch._C._dynamo.guards, "_empty_strided_cpu", None)
        if fast is not None:
            return fast
    return lambda sizes, strides, dtype: torch.empty_strided(sizes, strides, dtype=dtype,
                                                             device=device)


def wrapper_globals(kernels, sync_threads, device="cpu"):
    """The names a wrapper's `call(args)` uses; tensors it allocates go on `device`."""
    if os.environ.get("DYNO_PROFILE_KERNELS", "0") not in ("", "0"):
        kernels = ProfiledKernels(kernels)
    return {
        "torch": torch,
        "_kernels": kernels,
        "_empty": functools.partial(torch.empty, device=device),
        "_empty_strided": empty_strided(device),
        "_constant": functools.partial(constant, device=device),
        "_mm": torch.mm, "_addmm": torch.addmm, "_linear": linear,
        "_linear_weight": linear_weight,
        "_bmm": torch.bmm, "_baddbmm": torch.baddbmm,
        "_conv2d": conv2d,
        "_as_eager": as_eager,
        "_view": _fast_view,
        "_dense_strides": dense_strides,
        "_divsi": divsi, "_remsi": remsi,
        "_sync_threads": sync_threads,
        "_get_num_threads": torch.get_num_threads,
        "_CheckFailed": CheckFailed,
        "_check_condition": check_condition,
        "_library_call": library_call,
        "_collective": collective,
        "_packed": PackedWeights(),
        "_padded": PaddedProducts(),
        "_Workspace": functools.partial(Workspace, device=device),
    }
