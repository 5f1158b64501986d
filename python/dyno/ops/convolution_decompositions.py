"""Convolutions (a family of the decomposition table, decompositions.py).

Kernel formation keeps 2-D convolutions (`linalg.conv_2d_nchw_fchw`, grouped
`linalg.conv_2d_ngchw_gfchw`, depthwise `linalg.depthwise_conv_2d_nchw_chw`) library
calls (`dyno.contraction "conv2d"` with its groups: cuDNN on GPUs, oneDNN on CPUs) and
compiles every other convolution as a loop kernel. A 1-D convolution, grouped or not, is
a 2-D one of height 1, which is how PyTorch's own CUDA and oneDNN paths run it: wav2vec
2.0's feature extractor (bf16, bench size, H200) spent 4.3 ms of GPU time per call in
Dyno's loop kernels against Inductor's 0.65 ms in cuDNN, and its grouped positional
convolution another 1.74 ms (docs/Architecture.md, 2026-12-02).
"""
import torch

from .decompositions import decomposes, declined, lowered_by_torch_mlir

aten = torch.ops.aten


@decomposes(aten.convolution.default)
def convolution_1d_as_2d(input, weight, bias, stride, padding, dilation, transposed,
                         output_padding, groups):
    """A batched 1-D convolution (grouped or not) as a 2-D convolution over a unit
    height."""
    if (declined(aten.convolution.default) or transposed
            or input.dim() != 3 or weight.dim() != 3 or len(stride) != 1
            or len(padding) != 1 or len(dilation) != 1):
        return NotImplemented
    with lowered_by_torch_mlir(aten.convolution.default):
        result = aten.convolution.default(
            aten.unsqueeze.default(input, 2), aten.unsqueeze.default(weight, 2), bias,
            [1, stride[0]], [0, padding[0]], [1, dilation[0]], False, [0, 0], groups)
    return aten.squeeze.dim(result, 2)
