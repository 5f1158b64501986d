"""Convolutions (a family of the decomposition table, decompositions.py).

Kernel formation keeps 2-D convolutions (`linalg.conv_2d_nchw_fchw`, grouped
`linalg.conv_2d_ngchw_gfchw`, depthwise `linalg.depthwise_conv_2d_nchw_chw`) library
calls (`dyno.contraction "conv2d"` with its groups: cuDNN on GPUs, oneDNN on CPUs) and
compiles every other convolution as a loop kernel. A 1-D convolution, grouped or not, is
a 2-D one of height 1, which is how PyTorch's own CUDA and oneDNN paths run it: wav2vec
2.0's feature extractor (bf16, bench size, H200) spent 4.3 ms of GPU time per call in
Dyno's loop kernels against Inductor's 0.65 ms in cuDNN, and its grouped positional
convolution another 1.74 ms (docs/Architecture.md, 2026-12-02).

On the CPU, a float32 patch embedding (a convolution whose stride is its kernel's size,
without padding, dilation or groups: ViT's, Swin's and ConvNeXt's stems, ConvNeXt's
downsampling layers) is a matrix product of the image's patches with the flattened
filter: each output pixel reads its own patch. oneDNN's call of such a convolution
cost about 45 us more than the convolution itself (ConvNeXt's 4x4 stem on 4 images of
32x32: 58 us a call, 12 us in the primitive by ONEDNN_VERBOSE; AMD Zen 4, 2 threads),
MKL's product a few; a kernel of Dyno's gathers the patches. Paired, one process
(benchmarks/experiments/patch_embeddings_ab.py, oneDNN's convolution against the
product, two runs): ConvNeXt 1.07x-1.08x, Swin 1.09x-1.12x, ViT 1.03x-1.05x. In bf16,
whose products are oneDNN's too, it gained nothing (1.00x, 1.01x, 0.97x): bf16 stays a
convolution.
"""
import torch

from .decompositions import decomposes, declined, lowered_by_torch_mlir

aten = torch.ops.aten


def _convolution_1d_as_2d(input, weight, bias, stride, padding, dilation, transposed,
                          output_padding, groups):
    """A batched 1-D convolution (grouped or not) as a 2-D convolution over a unit
    height; NotImplemented for any other convolution."""
    if (declined(aten.convolution.default) or transposed
            or input.dim() != 3 or weight.dim() != 3 or len(stride) != 1
            or len(padding) != 1 or len(dilation) != 1):
        return NotImplemented
    with lowered_by_torch_mlir(aten.convolution.default):
        result = aten.convolution.default(
            aten.unsqueeze.default(input, 2), aten.unsqueeze.default(weight, 2), bias,
            [1, stride[0]], [0, padding[0]], [1, dilation[0]], False, [0, 0], groups)
    return aten.squeeze.dim(result, 2)


def _patches_as_matmul(input, weight, bias, stride, padding, dilation, transposed,
                       output_padding, groups):
    """A float32 2-D convolution whose stride is its kernel's size (more than one
    pixel), without padding, dilation or groups, as the product of the image's patches
    [N*H'*W', C*kh*kw] with the flattened filter (+ bias), copied from NHWC to NCHW as
    eager's result is (a graph's output keeps its strides; a kernel reading it may read
    the product through the copy). (A batched product of the filter with each image's
    patches gives NCHW at once, but copies the filter once per image.) NotImplemented
    for any other convolution. Rows and columns past the last whole patch are read by no
    output, as in the convolution."""
    if (input.dtype != torch.float32 or transposed or input.dim() != 4
            or weight.dim() != 4 or groups != 1 or list(stride) != list(weight.shape[2:])
            or any(padding) or any(d != 1 for d in dilation)
            or weight.shape[2] * weight.shape[3] == 1):
        return NotImplemented
    batch, channels, height, width = input.shape
    out_channels, _, kernel_h, kernel_w = weight.shape
    rows, columns = height // kernel_h, width // kernel_w
    whole = aten.slice.Tensor(aten.slice.Tensor(input, 2, 0, rows * kernel_h), 3, 0,
                              columns * kernel_w)
    # [N, C, H', kh, W', kw] -> [N, H', W', C, kh, kw]: each row one patch, in the
    # filter's order.
    patches = aten.permute.default(
        aten.view.default(aten.clone.default(whole, memory_format=torch.contiguous_format),
                          [batch, channels, rows, kernel_h, columns, kernel_w]),
        [0, 2, 4, 1, 3, 5])
    patches = aten.view.default(aten.clone.default(patches,
                                                   memory_format=torch.contiguous_format),
                                [batch * rows * columns, channels * kernel_h * kernel_w])
    matrix = aten.t.default(aten.view.default(weight, [out_channels, -1]))
    product = (aten.mm.default(patches, matrix) if bias is None
               else aten.addmm.default(bias, patches, matrix))
    # NHWC, made NCHW as eager's result is (a graph's output keeps its strides).
    return aten.clone.default(
        aten.permute.default(aten.view.default(product, [batch, rows, columns, out_channels]),
                             [0, 3, 1, 2]),
        memory_format=torch.contiguous_format)


@decomposes(aten.convolution.default, targets=("triton",))
def convolution_1d_as_2d(input, weight, bias, stride, padding, dilation, transposed,
                         output_padding, groups):
    return _convolution_1d_as_2d(input, weight, bias, stride, padding, dilation,
                                 transposed, output_padding, groups)


@decomposes(aten.convolution.default, targets=("cpu",))
def convolution_for_the_cpu(input, weight, bias, stride, padding, dilation, transposed,
                            output_padding, groups):
    """A patch embedding as a matrix product (_patches_as_matmul), a 1-D convolution as
    a 2-D one (_convolution_1d_as_2d)."""
    arguments = (input, weight, bias, stride, padding, dilation, transposed,
                 output_padding, groups)
    if declined(aten.convolution.default):
        return NotImplemented
    result = _patches_as_matmul(*arguments)
    return _convolution_1d_as_2d(*arguments) if result is NotImplemented else result
