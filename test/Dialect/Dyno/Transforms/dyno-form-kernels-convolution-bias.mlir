// RUN: dyno-opt %s --dyno-form-kernels="convolution-bias-in-library=false" | FileCheck %s

// The kernels' maps (printed first): identity, channel, NHWC read, permuted channel.
// CHECK-DAG:   #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[C1:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG:   #[[NHWC:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-DAG:   #[[C3:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d3)>

// cuDNN adds a convolution's bias in a kernel of its own: with the bias left out of the
// call, the kernel that reads the result adds it (widened from bf16, in f32), and where
// that reader only rounds the sum (as eager's separate add does) the add rounds in its
// own body: one generic, no f32 tensor.
// CHECK-LABEL: func.func @form$conv_bias_in_the_consumer
// CHECK-NEXT:    %[[C:.*]] = dyno.contraction "conv2d"(%arg0, %arg1) {dilations = array<i64: 1, 1>, groups = 8 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x8x6x6xbf16>, tensor<8x1x3x3xbf16>) -> tensor<2x8x6x6xbf16>
// CHECK-NEXT:    %[[R:.*]] = dyno.launch @kernels::@[[K1:kernel_[0-9]+]](%[[C]], %arg2) : (tensor<2x8x6x6xbf16>, tensor<8xbf16>) -> tensor<2x8x6x6xbf16>
// CHECK-NEXT:    return %[[R]]
func.func @form$conv_bias_in_the_consumer(%x: tensor<2x8x6x6xbf16>, %w: tensor<8x1x3x3xbf16>, %b: tensor<8xbf16>) -> tensor<2x8x6x6xbf16> {
  %zero = arith.constant 0.0 : bf16
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : bf16
  } : tensor<2x8x6x6xbf16> to tensor<2x8x8x8xbf16>
  %e = tensor.empty() : tensor<2x8x6x6xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<8xbf16>) outs(%e : tensor<2x8x6x6xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<2x8x6x6xf32>
  %wc = tensor.collapse_shape %w [[0, 1], [2], [3]] : tensor<8x1x3x3xbf16> into tensor<8x3x3xbf16>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %wc : tensor<2x8x8x8xbf16>, tensor<8x3x3xbf16>) outs(%init : tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %e2 = tensor.empty() : tensor<2x8x6x6xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<2x8x6x6xf32>) outs(%e2 : tensor<2x8x6x6xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<2x8x6x6xbf16>
  return %r : tensor<2x8x6x6xbf16>
}

// A reader that rounds the result while writing it channels-last (ViT's patch
// embedding): the add takes its place, reading the bias along the permuted channel dim.
// CHECK-LABEL: func.func @form$conv_bias_in_a_transposing_rounding
// CHECK-NEXT:    %[[C:.*]] = dyno.contraction "conv2d"(%arg2, %arg0) {{.*}} -> tensor<2x32x4x4xbf16>
// CHECK-NEXT:    %[[R:.*]] = dyno.launch @kernels::@[[K2:kernel_[0-9]+]](%[[C]], %arg1) : (tensor<2x32x4x4xbf16>, tensor<32xbf16>) -> tensor<2x4x4x32xbf16>
// CHECK-NEXT:    return %[[R]]
func.func @form$conv_bias_in_a_transposing_rounding(%w: tensor<32x3x4x4xbf16>, %b: tensor<32xbf16>, %x: tensor<2x3x16x16xbf16>) -> tensor<2x4x4x32xbf16> {
  %e = tensor.empty() : tensor<2x32x4x4xf32>
  %e1 = tensor.empty() : tensor<32xf32>
  %wb = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : tensor<32xbf16>) outs(%e1 : tensor<32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %init = linalg.broadcast ins(%wb : tensor<32xf32>) outs(%e : tensor<2x32x4x4xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<4> : vector<2xi64>} ins(%x, %w : tensor<2x3x16x16xbf16>, tensor<32x3x4x4xbf16>) outs(%init : tensor<2x32x4x4xf32>) -> tensor<2x32x4x4xf32>
  %e2 = tensor.empty() : tensor<2x4x4x32xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<2x32x4x4xf32>) outs(%e2 : tensor<2x4x4x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<2x4x4x32xbf16>
  return %r : tensor<2x4x4x32xbf16>
}

// The kernels: one generic each, the add widened, rounded in its body; the second reads
// the result transposed and the bias along its permuted channel dim.
// CHECK-LABEL: module @kernels
// CHECK:       func.func @[[K1]](
// CHECK-NEXT:    tensor.empty
// CHECK-NEXT:    linalg.generic {indexing_maps = [#[[ID]], #[[C1]], #[[ID]]]{{.*}} ins(%arg0, %arg1 : tensor<2x8x6x6xbf16>, tensor<8xbf16>)
// CHECK:           arith.addf
// CHECK-NEXT:      arith.truncf
// CHECK-NEXT:      linalg.yield
// CHECK-NEXT:    } -> tensor<2x8x6x6xbf16>
// CHECK-NEXT:    return
// CHECK:       func.func @[[K2]](
// CHECK-NEXT:    tensor.empty
// CHECK-NEXT:    linalg.generic {indexing_maps = [#[[NHWC]], #[[C3]], #[[ID]]]{{.*}} ins(%arg0, %arg1 : tensor<2x32x4x4xbf16>, tensor<32xbf16>)
// CHECK:           arith.addf
// CHECK-NEXT:      arith.truncf
// CHECK-NEXT:      linalg.yield
// CHECK-NEXT:    } -> tensor<2x4x4x32xbf16>
// CHECK-NEXT:    return
