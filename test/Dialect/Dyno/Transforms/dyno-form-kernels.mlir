// RUN: dyno-opt %s --dyno-form-kernels | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// The matmul goes to the library without its zero init; the weight transpose stays a
// host view; bias + relu form a kernel whose inputs are read-only.
// CHECK-LABEL: func.func @form$linear_relu
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%arg1
// CHECK:         %[[MM:.*]] = dyno.contraction "matmul"(%arg0, %[[WT]]) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK:         %[[R:.*]] = dyno.launch @kernels::@[[K0:kernel_[0-9]+]](%[[MM]], %arg2) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK:         return %[[R]]
func.func @form$linear_relu(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<16x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %wt : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Zero padding and the broadcast bias become the convolution call's operands.
// CHECK-LABEL: func.func @form$conv_pad_bias
// CHECK-NEXT:    %[[C:.*]] = dyno.contraction "conv2d"(%arg0, %arg1, %arg2) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
// CHECK-NEXT:    return %[[C]]
func.func @form$conv_pad_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<4xf32>) outs(%e : tensor<1x4x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %c : tensor<1x4x8x8xf32>
}

// A reduction whose only user is the next op joins its kernel.
// CHECK-LABEL: func.func @form$row_pipeline_is_one_kernel
// CHECK-NEXT:    %[[D:.*]] = dyno.launch @kernels::@[[K1:kernel_[0-9]+]](%arg0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[D]]
func.func @form$row_pipeline_is_one_kernel(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<4x16xf32>
  return %d : tensor<4x16xf32>
}

// torch-mlir's text is in generic form, which spells out the matmul's default maps.
// CHECK-LABEL: func.func @form$generic_form_matmul
// CHECK:         dyno.contraction "matmul"(%arg0, %arg1)
// CHECK-NOT:     dyno.launch
func.func @form$generic_form_matmul(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = "linalg.matmul"(%a, %b, %f) <{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], operandSegmentSizes = array<i32: 2, 1>}> ({
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }) : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// A bias broadcast by the named linalg.broadcast also becomes the convolution's bias.
// CHECK-LABEL: func.func @form$conv_named_broadcast_bias
// CHECK-NEXT:    dyno.contraction "conv2d"(%arg0, %arg1, %arg2) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 2, 2>}
func.func @form$conv_named_broadcast_bias(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %init = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<1x4x4x4xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}

// A depthwise convolution is a library convolution with one group per channel: its
// [c, kh, kw] filter is the [c, 1, kh, kw] weight it was collapsed from.
// CHECK-LABEL: func.func @form$depthwise_conv
// CHECK-NEXT:    dyno.contraction "conv2d"(%arg0, %arg1, %arg2) {dilations = array<i64: 1, 1>, groups = 8 : i64, padding = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<2x8x14x14xf32>, tensor<8x1x7x7xf32>, tensor<8xf32>) -> tensor<2x8x14x14xf32>
func.func @form$depthwise_conv(%x: tensor<2x8x14x14xf32>, %w: tensor<8x1x7x7xf32>, %b: tensor<8xf32>) -> tensor<2x8x14x14xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 3, 3] high[0, 0, 3, 3] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x8x14x14xf32> to tensor<2x8x20x20xf32>
  %e = tensor.empty() : tensor<2x8x14x14xf32>
  %init = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<2x8x14x14xf32>) dimensions = [0, 2, 3]
  %wc = tensor.collapse_shape %w [[0, 1], [2], [3]] : tensor<8x1x7x7xf32> into tensor<8x7x7xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %wc : tensor<2x8x20x20xf32>, tensor<8x7x7xf32>) outs(%init : tensor<2x8x14x14xf32>) -> tensor<2x8x14x14xf32>
  return %c : tensor<2x8x14x14xf32>
}

// A grouped bf16 convolution (a 1-D one over a unit height, as wav2vec 2.0's positional
// convolution): groups merged into the channels, the 5-D padding of the spatial dims,
// the bf16 bias widened into the accumulator, the bf16 result read widened.
// CHECK-LABEL: func.func @form$grouped_conv_bf16
// CHECK-DAG:     %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] : tensor<2x4x16x1x50xbf16> into tensor<2x64x1x50xbf16>
// CHECK-DAG:     %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3], [4]] : tensor<4x16x16x1x16xbf16> into tensor<64x16x1x16xbf16>
// CHECK:         %[[C:.*]] = dyno.contraction "conv2d"(%[[X]], %[[W]], %arg2) {dilations = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 0, 8>, strides = array<i64: 1, 1>} : (tensor<2x64x1x50xbf16>, tensor<64x16x1x16xbf16>, tensor<64xbf16>) -> tensor<2x64x1x51xbf16>
// CHECK:         tensor.expand_shape %[[C]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 4, 16, 1, 51] : tensor<2x64x1x51xbf16> into tensor<2x4x16x1x51xbf16>
// CHECK-NOT:     linalg.conv_2d_ngchw_gfchw
func.func @form$grouped_conv_bf16(%x: tensor<2x4x16x1x50xbf16>, %w: tensor<4x16x16x1x16xbf16>, %b: tensor<64xbf16>) -> tensor<2x4x16x1x51xbf16> {
  %zero = arith.constant 0.0 : bf16
  %p = tensor.pad %x low[0, 0, 0, 0, 8] high[0, 0, 0, 0, 8] {
  ^bb0(%i: index, %j: index, %k: index, %l: index, %m: index):
    tensor.yield %zero : bf16
  } : tensor<2x4x16x1x50xbf16> to tensor<2x4x16x1x66xbf16>
  %bg = tensor.expand_shape %b [[0, 1]] output_shape [4, 16] : tensor<64xbf16> into tensor<4x16xbf16>
  %e = tensor.empty() : tensor<2x4x16x1x51xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%bg : tensor<4x16xbf16>) outs(%e : tensor<2x4x16x1x51xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %v = arith.extf %in : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<2x4x16x1x51xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<2x4x16x1x66xbf16>, tensor<4x16x16x1x16xbf16>) outs(%init : tensor<2x4x16x1x51xf32>) -> tensor<2x4x16x1x51xf32>
  %e2 = tensor.empty() : tensor<2x4x16x1x51xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<2x4x16x1x51xf32>) outs(%e2 : tensor<2x4x16x1x51xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<2x4x16x1x51xbf16>
  return %r : tensor<2x4x16x1x51xbf16>
}

// Dynamic shapes: the matmul with a symbolic batch still goes to the library; the kernel
// takes the graph's scalar (a symbolic size) as an argument, and its result's size is
// computed on the host from the inputs, for the runtime to allocate.
// CHECK-LABEL: func.func @form$dynamic_batch
// CHECK-SAME:    (%[[X:.*]]: tensor<?x16xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[N:.*]]: i64)
// CHECK:         %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x16xf32>
// CHECK:         %[[MM:.*]] = dyno.contraction "matmul"(%[[X]], %[[W]]) : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
// CHECK:         %[[DM:.*]] = tensor.dim %[[MM]], %{{.*}} : tensor<?x8xf32>
// CHECK:         %[[R:.*]] = dyno.launch @kernels::@[[K2:kernel_[0-9]+]](%[[MM]], %[[D]], %[[N]]) dims(%[[DM]]) : (tensor<?x8xf32>, index, i64) -> tensor<?x8xf32>
// CHECK:         return %[[R]]
func.func @form$dynamic_batch(%x: tensor<?x16xf32>, %w: tensor<16x8xf32>, %n: i64) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%d) : tensor<?x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.sitofp %n : i64 to f32
    %t = arith.mulf %a, %s : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// A float32 bias rounded to bf16 inside its row broadcast (autocast's cast of a float32
// Linear's bias, fused by dyno-fuse-elementwise): the rounding becomes a kernel of its
// own and the library's addmm takes the bf16 vector as its accumulator; the product is
// not computed in a kernel.
// CHECK-LABEL: func.func @form$addmm_bf16_rounded_bias
// CHECK:         %[[BIAS:.*]] = dyno.launch @kernels::@{{kernel_[0-9]+}}(%arg2) : (tensor<3xf32>) -> tensor<3xbf16>
// CHECK:         %[[MM:.*]] = dyno.contraction "matmul"(%arg0, %arg1, %[[BIAS]]) : (tensor<4x8xbf16>, tensor<8x3xbf16>, tensor<3xbf16>) -> tensor<4x3xbf16>
// CHECK-NOT:     linalg.matmul
// CHECK:         return %[[MM]]
func.func @form$addmm_bf16_rounded_bias(%a: tensor<4x8xbf16>, %b: tensor<8x3xbf16>, %bias: tensor<3xf32>) -> tensor<4x3xbf16> {
  %e = tensor.empty() : tensor<4x3xf32>
  %broadcast = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.truncf %x : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<4x3xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%broadcast : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e2 = tensor.empty() : tensor<4x3xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<4x3xf32>) outs(%e2 : tensor<4x3xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x3xbf16>
  return %r : tensor<4x3xbf16>
}

// A reduction that is also returned is a kernel of its own; the reshape of a result
// stays on the host as a view.
// CHECK-LABEL: func.func @form$returned_intermediate_and_host_view
// CHECK:         %[[S:.*]] = dyno.launch @kernels::@{{kernel_[0-9]+}}(%arg0) : (tensor<4x16xf32>) -> tensor<4xf32>
// CHECK:         %[[D:.*]] = dyno.launch @kernels::@{{kernel_[0-9]+}}(%arg0, %[[S]]) : (tensor<4x16xf32>, tensor<4xf32>) -> tensor<4x16xf32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[D]]
// CHECK:         return %[[S]], %[[FLAT]]

// bf16 operands with an f32 accumulator (torch-mlir's bmm): the library is called in
// bf16 (it accumulates in f32 and rounds once); the kernel that used its f32 result
// reads the bf16 result and widens each element itself (no f32 copy in memory).
// CHECK-LABEL: func.func @form$bmm_bf16
// CHECK:         %[[B:.*]] = dyno.contraction "batch_matmul"(%arg0, %arg1) : (tensor<2x4x8xbf16>, tensor<2x8x3xbf16>) -> tensor<2x4x3xbf16>
// CHECK:         dyno.launch @kernels::@[[KB:kernel_[0-9]+]](%[[B]]) : (tensor<2x4x3xbf16>) -> tensor<2x4x3xbf16>

// Slices of a bf16 product's f32 result (rotary embeddings' halves of q) are views of
// the library's bf16 result on the host; the kernel reading them widens each element.
// CHECK-LABEL: func.func @form$slices_of_bf16_product
// CHECK:         %[[P:.*]] = dyno.contraction "matmul"(%arg0, %arg1) : (tensor<4x8xbf16>, tensor<8x6xbf16>) -> tensor<4x6xbf16>
// CHECK:         dyno.launch @kernels::@[[KS:kernel_[0-9]+]](%[[P]]) : (tensor<4x6xbf16>) -> tensor<4x3xbf16>

// CHECK:       module @kernels
// CHECK:         func.func @[[K0]](%{{.*}}: tensor<4x8xf32> {bufferization.writable = false}, %{{.*}}: tensor<8xf32> {bufferization.writable = false}) -> tensor<4x8xf32>
// CHECK:           arith.maximumf
// CHECK:         func.func @[[K1]](%{{.*}}: tensor<4x16xf32> {bufferization.writable = false}) -> tensor<4x16xf32>
// CHECK:           linalg.fill
// CHECK:           linalg.generic {{.*}}["parallel", "reduction"]
// CHECK:           linalg.generic {{.*}}["parallel", "parallel"]
// CHECK:         func.func @[[K2]](%{{.*}}: tensor<?x8xf32> {bufferization.writable = false}, %[[KD:.*]]: index, %{{.*}}: i64) -> tensor<?x8xf32>
// CHECK:           tensor.empty(%[[KD]]) : tensor<?x8xf32>
// CHECK:         func.func @[[KB]](%{{.*}}: tensor<2x4x3xbf16> {bufferization.writable = false}) -> tensor<2x4x3xbf16>
// CHECK:           ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:        arith.extf %[[IN]] : bf16 to f32
// CHECK:         func.func @[[KS]](%[[PK:.*]]: tensor<4x6xbf16> {bufferization.writable = false}) -> tensor<4x3xbf16>
// CHECK-DAG:       tensor.extract_slice %[[PK]][0, 0] [4, 3] [1, 1] : tensor<4x6xbf16> to tensor<4x3xbf16>
// CHECK-DAG:       tensor.extract_slice %[[PK]][0, 3] [4, 3] [1, 1] : tensor<4x6xbf16> to tensor<4x3xbf16>
// CHECK-NOT:       f32>
// CHECK:           return
func.func @form$returned_intermediate_and_host_view(%x: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<4x16xf32>
  %flat = tensor.collapse_shape %d [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
  return %s, %flat : tensor<4xf32>, tensor<64xf32>
}

func.func @form$bmm_bf16(%a: tensor<2x4x8xbf16>, %b: tensor<2x8x3xbf16>) -> tensor<2x4x3xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xbf16>, tensor<2x8x3xbf16>) outs(%f : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %e2 = tensor.empty() : tensor<2x4x3xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : tensor<2x4x3xf32>) outs(%e2 : tensor<2x4x3xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %g = arith.maximumf %x, %zero : f32
    %t = arith.truncf %g : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4x3xbf16>
  return %r : tensor<2x4x3xbf16>
}


func.func @form$slices_of_bf16_product(%a: tensor<4x8xbf16>, %b: tensor<8x6xbf16>) -> tensor<4x3xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x6xbf16>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %lo = tensor.extract_slice %m[0, 0] [4, 3] [1, 1] : tensor<4x6xf32> to tensor<4x3xf32>
  %hi = tensor.extract_slice %m[0, 3] [4, 3] [1, 1] : tensor<4x6xf32> to tensor<4x3xf32>
  %e2 = tensor.empty() : tensor<4x3xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%lo, %hi : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e2 : tensor<4x3xbf16>) {
  ^bb0(%x: f32, %y: f32, %o: bf16):
    %s = arith.subf %x, %y : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x3xbf16>
  return %r : tensor<4x3xbf16>
}
