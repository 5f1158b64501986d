// RUN: dyno-opt %s --dyno-channels-last-convolutions="element-types=bf16" --split-input-file | FileCheck %s
// RUN: dyno-opt %s --dyno-channels-last-convolutions --split-input-file | FileCheck %s --check-prefix=OFF
// RUN: dyno-opt %s --dyno-channels-last-convolutions="element-types=bf16 copy-host-operands=true" --split-input-file --mlir-print-local-scope | FileCheck %s --check-prefix=COPY
// RUN: dyno-opt %s --dyno-channels-last-convolutions="element-types=bf16 copy-host-operands=true packed-host-filters=true" --split-input-file --mlir-print-local-scope | FileCheck %s --check-prefix=PACKED

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>

// A kernel computes a bf16 convolution's input and another reads its result. The first
// writes NHWC through a permuted output map; the convolution takes an NCHW view of it.
// The second reads the convolution's NHWC view through a permuted map (its per-channel
// operand keeps its map).
// CHECK-LABEL: func.func @conv_between_kernels
// CHECK:         %[[IN:.*]] = dyno.launch @kernels::@relu(%arg0) : (tensor<2x3x8x8xbf16>) -> tensor<2x8x8x3xbf16>
// CHECK:         %[[INV:.*]] = linalg.transpose ins(%[[IN]] : tensor<2x8x8x3xbf16>) outs(%{{.*}} : tensor<2x3x8x8xbf16>) permutation = [0, 3, 1, 2]
// CHECK:         %[[Y:.*]] = dyno.contraction "conv2d"(%[[INV]], %arg1)
// CHECK:         %[[YV:.*]] = linalg.transpose ins(%[[Y]] : tensor<2x4x8x8xbf16>) outs(%{{.*}} : tensor<2x8x8x4xbf16>) permutation = [0, 2, 3, 1]
// CHECK:         dyno.launch @kernels::@scale(%[[YV]], %arg2) : (tensor<2x8x8x4xbf16>, tensor<4xbf16>) -> tensor<2x4x8x8xbf16>
// CHECK:       func.func @relu(%{{.*}}: tensor<2x3x8x8xbf16>) -> tensor<2x8x8x3xbf16>
// CHECK:         tensor.empty() : tensor<2x8x8x3xbf16>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[NHWC:.*]]],
// CHECK:       func.func @scale(%{{.*}}: tensor<2x8x8x4xbf16>, %{{.*}}: tensor<4xbf16>) -> tensor<2x4x8x8xbf16>
// CHECK:         linalg.generic {indexing_maps = [#[[NHWC]], #{{.*}}, #{{.*}}],
// OFF-LABEL:   func.func @conv_between_kernels
// OFF-NOT:       linalg.transpose
module {
  func.func @conv_between_kernels(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %s: tensor<4xbf16>) -> tensor<2x4x8x8xbf16> {
    %0 = dyno.launch @kernels::@relu(%x) : (tensor<2x3x8x8xbf16>) -> tensor<2x3x8x8xbf16>
    %1 = dyno.contraction "conv2d"(%0, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x4x8x8xbf16>
    %2 = dyno.launch @kernels::@scale(%1, %s) : (tensor<2x4x8x8xbf16>, tensor<4xbf16>) -> tensor<2x4x8x8xbf16>
    return %2 : tensor<2x4x8x8xbf16>
  }
  module @kernels {
    func.func @relu(%arg0: tensor<2x3x8x8xbf16>) -> tensor<2x3x8x8xbf16> {
      %e = tensor.empty() : tensor<2x3x8x8xbf16>
      %zero = arith.constant 0.0 : bf16
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x3x8x8xbf16>) outs(%e : tensor<2x3x8x8xbf16>) {
      ^bb0(%in: bf16, %out: bf16):
        %m = arith.maximumf %in, %zero : bf16
        linalg.yield %m : bf16
      } -> tensor<2x3x8x8xbf16>
      return %r : tensor<2x3x8x8xbf16>
    }
    func.func @scale(%arg0: tensor<2x4x8x8xbf16>, %arg1: tensor<4xbf16>) -> tensor<2x4x8x8xbf16> {
      %e = tensor.empty() : tensor<2x4x8x8xbf16>
      %r = linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg1 : tensor<2x4x8x8xbf16>, tensor<4xbf16>) outs(%e : tensor<2x4x8x8xbf16>) {
      ^bb0(%in: bf16, %c: bf16, %out: bf16):
        %m = arith.mulf %in, %c : bf16
        linalg.yield %m : bf16
      } -> tensor<2x4x8x8xbf16>
      return %r : tensor<2x4x8x8xbf16>
    }
  }
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// The convolution's input is also reshaped on the host (a view PyTorch could not take
// of a permuted tensor): its kernel keeps writing NCHW. A reader that is not a generic
// (tensor.extract) reads an NCHW transpose made in its kernel.
// CHECK-LABEL: func.func @input_also_reshaped
// CHECK:         dyno.launch @kernels::@copy(%arg0) : (tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
// CHECK:         %[[Y:.*]] = dyno.contraction "conv2d"
// CHECK:         %[[YV:.*]] = linalg.transpose ins(%[[Y]] : tensor<1x2x2x2xbf16>) outs(%{{.*}} : tensor<1x2x2x2xbf16>) permutation = [0, 2, 3, 1]
// CHECK:         dyno.launch @kernels::@first(%[[YV]])
// CHECK:       func.func @first(%[[ARG:.*]]: tensor<1x2x2x2xbf16>) -> tensor<bf16>
// CHECK:         %[[NCHW:.*]] = linalg.transpose ins(%[[ARG]] : tensor<1x2x2x2xbf16>) outs(%{{.*}} : tensor<1x2x2x2xbf16>) permutation = [0, 3, 1, 2]
// CHECK:         tensor.extract %[[NCHW]]
module {
  func.func @input_also_reshaped(%x: tensor<1x2x2x2xbf16>, %w: tensor<2x2x1x1xbf16>) -> (tensor<bf16>, tensor<8xbf16>) {
    %0 = dyno.launch @kernels::@copy(%x) : (tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
    %flat = tensor.collapse_shape %0 [[0, 1, 2, 3]] : tensor<1x2x2x2xbf16> into tensor<8xbf16>
    %1 = dyno.contraction "conv2d"(%0, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x2x2xbf16>, tensor<2x2x1x1xbf16>) -> tensor<1x2x2x2xbf16>
    %2 = dyno.launch @kernels::@first(%1) : (tensor<1x2x2x2xbf16>) -> tensor<bf16>
    return %2, %flat : tensor<bf16>, tensor<8xbf16>
  }
  module @kernels {
    func.func @copy(%arg0: tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16> {
      %e = tensor.empty() : tensor<1x2x2x2xbf16>
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x2x2xbf16>) outs(%e : tensor<1x2x2x2xbf16>) {
      ^bb0(%in: bf16, %out: bf16):
        linalg.yield %in : bf16
      } -> tensor<1x2x2x2xbf16>
      return %r : tensor<1x2x2x2xbf16>
    }
    func.func @first(%arg0: tensor<1x2x2x2xbf16>) -> tensor<bf16> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %v = tensor.extract %arg0[%c0, %c1, %c0, %c0] : tensor<1x2x2x2xbf16>
      %t = tensor.from_elements %v : tensor<bf16>
      return %t : tensor<bf16>
    }
  }
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// An f32 convolution (not listed): nothing changes.
// CHECK-LABEL: func.func @f32_convolution
// CHECK-NOT:     linalg.transpose
// CHECK:         return
module {
  func.func @f32_convolution(%x: tensor<1x2x2x2xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32> {
    %1 = dyno.contraction "conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
    %2 = dyno.launch @kernels::@copy(%1) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    return %2 : tensor<1x2x2x2xf32>
  }
  module @kernels {
    func.func @copy(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
      %e = tensor.empty() : tensor<1x2x2x2xf32>
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      } -> tensor<1x2x2x2xf32>
      return %r : tensor<1x2x2x2xf32>
    }
  }
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>

// A kernel between two convolutions reads one's result and writes the other's input:
// both channels-last, so its channel loop moves innermost (every 4-d access is then
// contiguous); the batch loop stays first.
// (The maps are printed before the module.)
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[LAST:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @between_two_convolutions
// CHECK:       func.func @bias_relu(%{{.*}}: tensor<2x4x4x8xbf16>, %{{.*}}: tensor<8xbf16>) -> tensor<2x4x4x8xbf16>
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[LAST]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
module {
  func.func @between_two_convolutions(%x: tensor<2x8x4x4xbf16>, %w: tensor<8x8x1x1xbf16>, %b: tensor<8xbf16>) -> tensor<2x8x4x4xbf16> {
    %0 = dyno.contraction "conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8x4x4xbf16>, tensor<8x8x1x1xbf16>) -> tensor<2x8x4x4xbf16>
    %1 = dyno.launch @kernels::@bias_relu(%0, %b) : (tensor<2x8x4x4xbf16>, tensor<8xbf16>) -> tensor<2x8x4x4xbf16>
    %2 = dyno.contraction "conv2d"(%1, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8x4x4xbf16>, tensor<8x8x1x1xbf16>) -> tensor<2x8x4x4xbf16>
    return %2 : tensor<2x8x4x4xbf16>
  }
  module @kernels {
    func.func @bias_relu(%arg0: tensor<2x8x4x4xbf16>, %arg1: tensor<8xbf16>) -> tensor<2x8x4x4xbf16> {
      %e = tensor.empty() : tensor<2x8x4x4xbf16>
      %zero = arith.constant 0.0 : bf16
      %r = linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg1 : tensor<2x8x4x4xbf16>, tensor<8xbf16>) outs(%e : tensor<2x8x4x4xbf16>) {
      ^bb0(%in: bf16, %c: bf16, %out: bf16):
        %s = arith.addf %in, %c : bf16
        %m = arith.maximumf %s, %zero : bf16
        linalg.yield %m : bf16
      } -> tensor<2x8x4x4xbf16>
      return %r : tensor<2x8x4x4xbf16>
    }
  }
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A kernel launched twice is left alone (its argument types serve both launches), and
// no host transpose is left behind for it.
// CHECK-LABEL: func.func @kernel_launched_twice
// CHECK-NOT:     linalg.transpose
// CHECK:         dyno.launch @kernels::@copy(%{{.*}}) : (tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
// CHECK-NOT:     linalg.transpose
// CHECK:         dyno.launch @kernels::@copy(%{{.*}}) : (tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
// CHECK:       func.func @copy(%{{.*}}: tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
module {
  func.func @kernel_launched_twice(%x: tensor<1x2x2x2xbf16>, %w: tensor<2x2x1x1xbf16>) -> (tensor<1x2x2x2xbf16>, tensor<1x2x2x2xbf16>) {
    %0 = dyno.contraction "conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x2x2xbf16>, tensor<2x2x1x1xbf16>) -> tensor<1x2x2x2xbf16>
    %1 = dyno.launch @kernels::@copy(%0) : (tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
    %2 = dyno.launch @kernels::@copy(%x) : (tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
    return %1, %2 : tensor<1x2x2x2xbf16>, tensor<1x2x2x2xbf16>
  }
  module @kernels {
    func.func @copy(%arg0: tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16> {
      %e = tensor.empty() : tensor<1x2x2x2xbf16>
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x2x2xbf16>) outs(%e : tensor<1x2x2x2xbf16>) {
      ^bb0(%in: bf16, %out: bf16):
        linalg.yield %in : bf16
      } -> tensor<1x2x2x2xbf16>
      return %r : tensor<1x2x2x2xbf16>
    }
  }
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// Inside the kernel reading a convolution's result, a ReLU's intermediate reaches the
// max-pool generic through a -inf pad and strided window slices (a ResNet stem): the
// intermediate, the pad and the slices are NHWC too (pad widths, offsets, sizes and
// strides permuted), so that no loop of the kernel writes or reads across channels. The
// channel loop of both generics is then innermost (identity maps on NHWC tensors).
// CHECK-LABEL: func.func @pool_after_conv
// CHECK:       func.func @relu_pool(%{{.*}}: tensor<2x8x8x4xbf16>) -> tensor<2x4x4x4xbf16>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<2x8x8x4xbf16>) outs(%{{.*}} : tensor<2x8x8x4xbf16>)
// CHECK:         %[[P:.*]] = tensor.pad %[[R]] low[0, 1, 1, 0] high[0, 0, 0, 0]
// CHECK:         } : tensor<2x8x8x4xbf16> to tensor<2x9x9x4xbf16>
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[P]][0, 0, 0, 0] [2, 4, 4, 4] [1, 2, 2, 1] : tensor<2x9x9x4xbf16> to tensor<2x4x4x4xbf16>
// CHECK:         %[[S1:.*]] = tensor.extract_slice %[[P]][0, 1, 1, 0] [2, 4, 4, 4] [1, 2, 2, 1] : tensor<2x9x9x4xbf16> to tensor<2x4x4x4xbf16>
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[S0]], %[[S1]] : tensor<2x4x4x4xbf16>, tensor<2x4x4x4xbf16>) outs(%{{.*}} : tensor<2x4x4x4xbf16>)
module {
  func.func @pool_after_conv(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>) -> tensor<2x4x4x4xbf16> {
    %0 = dyno.contraction "conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x4x8x8xbf16>
    %1 = dyno.launch @kernels::@relu_pool(%0) : (tensor<2x4x8x8xbf16>) -> tensor<2x4x4x4xbf16>
    %2 = dyno.contraction "conv2d"(%1, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x4x4xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x4x4x4xbf16>
    return %2 : tensor<2x4x4x4xbf16>
  }
  module @kernels {
    func.func @relu_pool(%arg0: tensor<2x4x8x8xbf16>) -> tensor<2x4x4x4xbf16> {
      %e = tensor.empty() : tensor<2x4x8x8xbf16>
      %zero = arith.constant 0.0 : bf16
      %ninf = arith.constant 0xFF80 : bf16
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x4x8x8xbf16>) outs(%e : tensor<2x4x8x8xbf16>) {
      ^bb0(%in: bf16, %out: bf16):
        %m = arith.maximumf %in, %zero : bf16
        linalg.yield %m : bf16
      } -> tensor<2x4x8x8xbf16>
      %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 0, 0] {
      ^bb0(%i: index, %j: index, %k: index, %l: index):
        tensor.yield %ninf : bf16
      } : tensor<2x4x8x8xbf16> to tensor<2x4x9x9xbf16>
      %s0 = tensor.extract_slice %p[0, 0, 0, 0] [2, 4, 4, 4] [1, 1, 2, 2] : tensor<2x4x9x9xbf16> to tensor<2x4x4x4xbf16>
      %s1 = tensor.extract_slice %p[0, 0, 1, 1] [2, 4, 4, 4] [1, 1, 2, 2] : tensor<2x4x9x9xbf16> to tensor<2x4x4x4xbf16>
      %e2 = tensor.empty() : tensor<2x4x4x4xbf16>
      %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s0, %s1 : tensor<2x4x4x4xbf16>, tensor<2x4x4x4xbf16>) outs(%e2 : tensor<2x4x4x4xbf16>) {
      ^bb0(%a: bf16, %b: bf16, %out: bf16):
        %m = arith.maximumf %a, %b : bf16
        linalg.yield %m : bf16
      } -> tensor<2x4x4x4xbf16>
      return %y : tensor<2x4x4x4xbf16>
    }
  }
}

// -----

#nchw_to_nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A kernel that only puts a convolution's result in NHWC order (ViT's patch embedding)
// reads it NHWC, copies it unchanged, and is dropped: the host reads the NHWC view.
// CHECK-LABEL: func.func @patch_embedding
// CHECK:         %[[Y:.*]] = dyno.contraction "conv2d"
// CHECK:         %[[YV:.*]] = linalg.transpose ins(%[[Y]] : tensor<2x4x2x2xbf16>) outs(%{{.*}} : tensor<2x2x2x4xbf16>) permutation = [0, 2, 3, 1]
// CHECK-NOT:     dyno.launch
// CHECK:         return %[[YV]]
// CHECK-NOT:   func.func @to_nhwc
// OFF-LABEL:   func.func @patch_embedding
// OFF:           dyno.launch @kernels::@to_nhwc
module {
  func.func @patch_embedding(%x: tensor<2x3x4x4xbf16>, %w: tensor<4x3x2x2xbf16>) -> tensor<2x2x2x4xbf16> {
    %0 = dyno.contraction "conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x3x4x4xbf16>, tensor<4x3x2x2xbf16>) -> tensor<2x4x2x2xbf16>
    %1 = dyno.launch @kernels::@to_nhwc(%0) : (tensor<2x4x2x2xbf16>) -> tensor<2x2x2x4xbf16>
    return %1 : tensor<2x2x2x4xbf16>
  }
  module @kernels {
    func.func @to_nhwc(%arg0: tensor<2x4x2x2xbf16>) -> tensor<2x2x2x4xbf16> {
      %e = tensor.empty() : tensor<2x2x2x4xbf16>
      %r = linalg.generic {indexing_maps = [#nchw_to_nhwc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x4x2x2xbf16>) outs(%e : tensor<2x2x2x4xbf16>) {
      ^bb0(%in: bf16, %out: bf16):
        %w = arith.extf %in : bf16 to f32
        %n = arith.truncf %w : f32 to bf16
        linalg.yield %n : bf16
      } -> tensor<2x2x2x4xbf16>
      return %r : tensor<2x2x2x4xbf16>
    }
  }
}

// -----

// Graph inputs read by channels-last convolutions. With copy-host-operands (the CPU
// target), the image and the 3x5 filter are copied NHWC by kernels of their own (named
// apart from the kernel_0 already there), launched once before their first
// convolution; the second convolution that reads them reuses the copies. Each copy
// iterates over its NHWC result and reads the source at (n, c, h, w). The 1x1 filter
// and the depthwise filter are channels-last in memory as they are (one pixel, one
// channel): no copy. Without the option, nothing is copied. With packed-host-filters too
// (the CPU target's inference graphs, whose runtime packs the filters), only the image
// is copied: every convolution takes its filter as the graph does.
// CHECK-LABEL: func.func @host_operands
// CHECK-NOT:     dyno.launch
// CHECK:         dyno.contraction "conv2d"(%arg0, %arg1)
// COPY-LABEL:  func.func @host_operands
// COPY:          %[[XC:.*]] = dyno.launch @kernels::@[[XK:kernel_[1-9][0-9]*]](%arg0) : (tensor<2x3x8x8xbf16>) -> tensor<2x8x8x3xbf16>
// COPY:          %[[XV:.*]] = linalg.transpose ins(%[[XC]] : tensor<2x8x8x3xbf16>) outs(%{{.*}} : tensor<2x3x8x8xbf16>) permutation = [0, 3, 1, 2]
// COPY:          %[[WC:.*]] = dyno.launch @kernels::@[[WK:kernel_[1-9][0-9]*]](%arg1) : (tensor<4x3x3x5xbf16>) -> tensor<4x3x5x3xbf16>
// COPY:          %[[WV:.*]] = linalg.transpose ins(%[[WC]] : tensor<4x3x5x3xbf16>) outs(%{{.*}} : tensor<4x3x3x5xbf16>) permutation = [0, 3, 1, 2]
// COPY:          %[[Y:.*]] = dyno.contraction "conv2d"(%[[XV]], %[[WV]])
// COPY:          %[[Z:.*]] = dyno.contraction "conv2d"(%[[Y]], %arg2)
// COPY:          dyno.contraction "conv2d"(%[[Z]], %arg3)
// COPY-NOT:      dyno.launch
// COPY:          dyno.contraction "conv2d"(%[[XV]], %[[WV]])
// COPY:        func.func @[[XK]](%[[S:.*]]: tensor<2x3x8x8xbf16> {bufferization.writable = false}) -> tensor<2x8x8x3xbf16>
// COPY:          %[[E:.*]] = tensor.empty() : tensor<2x8x8x3xbf16>
// COPY:          linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[S]] : tensor<2x3x8x8xbf16>) outs(%[[E]] : tensor<2x8x8x3xbf16>)
// COPY-NEXT:     ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// COPY-NEXT:       linalg.yield %[[IN]] : bf16
// COPY:        func.func @[[WK]](%[[F:.*]]: tensor<4x3x3x5xbf16> {bufferization.writable = false}) -> tensor<4x3x5x3xbf16>
// COPY:          linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} ins(%[[F]] : tensor<4x3x3x5xbf16>)
// PACKED-LABEL: func.func @host_operands
// PACKED:         %[[XC:.*]] = dyno.launch @kernels::@{{kernel_[1-9][0-9]*}}(%arg0) : (tensor<2x3x8x8xbf16>) -> tensor<2x8x8x3xbf16>
// PACKED:         %[[XV:.*]] = linalg.transpose ins(%[[XC]] : tensor<2x8x8x3xbf16>)
// PACKED-NOT:     dyno.launch
// PACKED:         %[[Y:.*]] = dyno.contraction "conv2d"(%[[XV]], %arg1)
// PACKED:         %[[Z:.*]] = dyno.contraction "conv2d"(%[[Y]], %arg2)
// PACKED:         dyno.contraction "conv2d"(%[[Z]], %arg3)
// PACKED-NOT:     dyno.launch
// PACKED:         dyno.contraction "conv2d"(%[[XV]], %arg1)
// PACKED:       module @kernels
// PACKED-COUNT-2: func.func @kernel_
// PACKED-NOT:     func.func @kernel_
// OFF-LABEL:   func.func @host_operands
// OFF-NOT:       dyno.launch
module {
  func.func @host_operands(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x5xbf16>, %w1: tensor<4x4x1x1xbf16>, %dw: tensor<4x1x3x3xbf16>) -> (tensor<2x4x8x8xbf16>, tensor<2x4x8x8xbf16>) {
    %0 = dyno.contraction "conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 2>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x5xbf16>) -> tensor<2x4x8x8xbf16>
    %1 = dyno.contraction "conv2d"(%0, %w1) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xbf16>, tensor<4x4x1x1xbf16>) -> tensor<2x4x8x8xbf16>
    %2 = dyno.contraction "conv2d"(%1, %dw) {dilations = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xbf16>, tensor<4x1x3x3xbf16>) -> tensor<2x4x8x8xbf16>
    %3 = dyno.contraction "conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 2>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x5xbf16>) -> tensor<2x4x8x8xbf16>
    return %2, %3 : tensor<2x4x8x8xbf16>, tensor<2x4x8x8xbf16>
  }
  module @kernels {
    func.func @kernel_0(%arg0: tensor<2xbf16>) -> tensor<2xbf16> {
      return %arg0 : tensor<2xbf16>
    }
  }
}
