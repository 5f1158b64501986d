// RUN: dyno-opt %s --dyno-form-kernels="convolution-bias-in-library=false" | FileCheck %s

// cuDNN adds a convolution's bias in a kernel of its own: with the bias left out of the
// call, the kernel that reads the result adds it (widened from bf16, in f32), and where
// that reader only rounds the sum (as eager's separate add does) the add rounds in its
// own body: one generic, no f32 tensor.
// CHECK-LABEL: func.func @form$conv_bias_in_the_consumer
// CHECK-NEXT:    %[[C:.*]] = dyno.contraction "conv2d"(%arg0, %arg1) {dilations = array<i64: 1, 1>, groups = 8 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x8x6x6xbf16>, tensor<8x1x3x3xbf16>) -> tensor<2x8x6x6xbf16>
// CHECK-NEXT:    %[[R:.*]] = dyno.launch @kernels::@[[K:kernel_[0-9]+]](%[[C]], %arg2) : (tensor<2x8x6x6xbf16>, tensor<8xbf16>) -> tensor<2x8x6x6xbf16>
// CHECK-NEXT:    return %[[R]]
// CHECK:       func.func @[[K]](
// CHECK:         linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2x8x6x6xbf16>, tensor<8xbf16>)
// CHECK:           arith.extf
// CHECK:           arith.extf
// CHECK:           arith.addf
// CHECK-NEXT:      arith.truncf
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     linalg.generic
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
