// RUN: dyno-opt %s -split-input-file --dyno-expand-loops-through-reshapes | FileCheck %s

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#none = affine_map<(d0, d1) -> ()>

// A residual add over (2, 4, 4), then a row sum and a centering over its flattened
// (8, 4) rows: the reductions' and the centering's loops take the add's shape, the
// kernel returns the (2, 4, 4) result and the host reshapes it after the launch.
// CHECK-LABEL: func.func @main
// CHECK:         %[[R:.*]] = dyno.launch @kernels::@kernel_0(%arg0, %arg1) : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
// CHECK:         return %[[C]]
// CHECK:       module @kernels
// CHECK:         func.func @kernel_0({{.*}}) -> tensor<2x4x4xf32>
// CHECK-NOT:       tensor.collapse_shape
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:        outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:           %[[OUT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:        outs(%{{.*}} : tensor<2x4x4xf32>)
// CHECK:           return %[[OUT]] : tensor<2x4x4xf32>
func.func @main(%a: tensor<2x4x4xf32>, %b: tensor<2x4x4xf32>) -> tensor<8x4xf32> {
  %0 = dyno.launch @kernels::@kernel_0(%a, %b) : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
module @kernels {
  func.func @kernel_0(%a: tensor<2x4x4xf32>, %b: tensor<2x4x4xf32>) -> tensor<8x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e3 = tensor.empty() : tensor<2x4x4xf32>
    %sum = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a, %b : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%e3 : tensor<2x4x4xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<2x4x4xf32>
    %rows = tensor.collapse_shape %sum [[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
    %e8 = tensor.empty() : tensor<8xf32>
    %f8 = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%zero : f32) outs(%e8 : tensor<8xf32>) {
    ^bb0(%z: f32, %o: f32):
      linalg.yield %z : f32
    } -> tensor<8xf32>
    %total = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%rows : tensor<8x4xf32>) outs(%f8 : tensor<8xf32>) {
    ^bb0(%x: f32, %o: f32):
      %s = arith.addf %x, %o : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    %e84 = tensor.empty() : tensor<8x4xf32>
    %centered = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%rows, %total : tensor<8x4xf32>, tensor<8xf32>) outs(%e84 : tensor<8x4xf32>) {
    ^bb0(%x: f32, %t: f32, %o: f32):
      %q = arith.constant 0.25 : f32
      %m = arith.mulf %t, %q : f32
      %c = arith.subf %x, %m : f32
      linalg.yield %c : f32
    } -> tensor<8x4xf32>
    return %centered : tensor<8x4xf32>
  }
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#swap = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A transpose, then a row sum of the transposed tensor read through a reshape that
// merges its last three dimensions: the sum reduces over three loops, which the
// transpose's loops meet one to one. The kernel's result is not reshaped: no host op.
// CHECK-LABEL: func.func @main
// CHECK:         %[[R:.*]] = dyno.launch @kernels::@kernel_0(%arg0) : (tensor<2x3x4x5xf32>) -> tensor<2xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK:       module @kernels
// CHECK:         func.func @kernel_0(%{{.*}}: tensor<2x3x4x5xf32>) -> tensor<2xf32>
// CHECK-NOT:       tensor.collapse_shape
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "reduction"]
// CHECK-SAME:        ins(%{{.*}} : tensor<2x4x3x5xf32>)
func.func @main(%a: tensor<2x3x4x5xf32>) -> tensor<2xf32> {
  %0 = dyno.launch @kernels::@kernel_0(%a) : (tensor<2x3x4x5xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
module @kernels {
  func.func @kernel_0(%a: tensor<2x3x4x5xf32>) -> tensor<2xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x4x3x5xf32>
    %t = linalg.generic {indexing_maps = [#swap, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<2x3x4x5xf32>) outs(%e : tensor<2x4x3x5xf32>) {
    ^bb0(%x: f32, %o: f32):
      %n = arith.negf %x : f32
      linalg.yield %n : f32
    } -> tensor<2x4x3x5xf32>
    %flat = tensor.collapse_shape %t [[0], [1, 2, 3]] : tensor<2x4x3x5xf32> into tensor<2x60xf32>
    %e2 = tensor.empty() : tensor<2xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
    %total = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%flat : tensor<2x60xf32>) outs(%f2 : tensor<2xf32>) {
    ^bb0(%x: f32, %o: f32):
      %s = arith.addf %x, %o : f32
      linalg.yield %s : f32
    } -> tensor<2xf32>
    return %total : tensor<2xf32>
  }
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#rotated = affine_map<(d0, d1) -> (d0, (d1 + 1) mod 12)>

// A product read through a merging reshape beside a rotated read of another tensor
// (torch.roll): the reader's loops cannot be expanded (its maps are not permutations),
// so the kernel stays exactly as it was, for dyno-split-kernels-for-triton.
// CHECK-LABEL: func.func @main
// CHECK:         dyno.launch @kernels::@kernel_0(%arg0, %arg1) : (tensor<2x3x4xf32>, tensor<2x12xf32>) -> tensor<2x12xf32>
// CHECK:       module @kernels
// CHECK:         func.func @kernel_0({{.*}}) -> tensor<2x12xf32>
// CHECK:           %[[P:.*]] = linalg.generic
// CHECK:           tensor.collapse_shape %[[P]] {{\[}}[0], [1, 2]]
// CHECK:           linalg.fill
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x12xf32>) -> tensor<2x12xf32> {
  %0 = dyno.launch @kernels::@kernel_0(%a, %b) : (tensor<2x3x4xf32>, tensor<2x12xf32>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}
module @kernels {
  func.func @kernel_0(%a: tensor<2x3x4xf32>, %b: tensor<2x12xf32>) -> tensor<2x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e3 = tensor.empty() : tensor<2x3x4xf32>
    %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<2x3x4xf32>) outs(%e3 : tensor<2x3x4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %m = arith.mulf %x, %x : f32
      linalg.yield %m : f32
    } -> tensor<2x3x4xf32>
    %flat = tensor.collapse_shape %p [[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
    %e = tensor.empty() : tensor<2x12xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12xf32>) -> tensor<2x12xf32>
    %r = linalg.generic {indexing_maps = [#id, #rotated, #id], iterator_types = ["parallel", "parallel"]} ins(%flat, %b : tensor<2x12xf32>, tensor<2x12xf32>) outs(%f : tensor<2x12xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      %t = arith.addf %s, %o : f32
      linalg.yield %t : f32
    } -> tensor<2x12xf32>
    return %r : tensor<2x12xf32>
  }
}

// -----

// Swin's shifted block, in small: a window reversal of a bf16 matrix product's result
// (a copy in another order whose body is the exact round trip bf16 -> f32 -> bf16 its
// explicit casts leave), collapsed to the image's rows and read shifted back (a
// rotation's mod map) by the residual add. The add reads the product's result itself,
// each image index split into the windows' and shifted: one generic, one index space,
// where the copy was a kernel of its own.
// CHECK-DAG:   #[[SHIFTED:.*]] = affine_map<(d0, d1) -> (((d0 + 3) mod 4) floordiv 2, ((d1 + 3) mod 4) floordiv 2, (d0 + 3) mod 2, (d1 + 3) mod 2)>
// CHECK-LABEL: func.func @kernel_0(%arg0: tensor<16xbf16>
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         %[[WINDOWS:.*]] = tensor.expand_shape %arg0
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[SHIFTED]], #{{.*}}]{{.*}} ins(%arg1, %[[WINDOWS]] : tensor<4x4xbf16>, tensor<2x2x2x2xbf16>)
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @main(%product: tensor<16xbf16>, %shortcut: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  %0 = dyno.launch @kernels::@kernel_0(%product, %shortcut) : (tensor<16xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
  return %0 : tensor<4x4xbf16>
}
module @kernels {
  func.func @kernel_0(%product: tensor<16xbf16>, %shortcut: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
    %windows = tensor.expand_shape %product [[0, 1, 2, 3]] output_shape [2, 2, 2, 2] : tensor<16xbf16> into tensor<2x2x2x2xbf16>
    %e4 = tensor.empty() : tensor<2x2x2x2xbf16>
    %reversed = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%windows : tensor<2x2x2x2xbf16>) outs(%e4 : tensor<2x2x2x2xbf16>) {
    ^bb0(%x: bf16, %o: bf16):
      %w = arith.extf %x : bf16 to f32
      %n = arith.truncf %w : f32 to bf16
      linalg.yield %n : bf16
    } -> tensor<2x2x2x2xbf16>
    %image = tensor.collapse_shape %reversed [[0, 1], [2, 3]] : tensor<2x2x2x2xbf16> into tensor<4x4xbf16>
    %e2 = tensor.empty() : tensor<4x4xbf16>
    %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ((d0 + 3) mod 4, (d1 + 3) mod 4)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%shortcut, %image : tensor<4x4xbf16>, tensor<4x4xbf16>) outs(%e2 : tensor<4x4xbf16>) {
    ^bb0(%s: bf16, %a: bf16, %o: bf16):
      %sw = arith.extf %s : bf16 to f32
      %aw = arith.extf %a : bf16 to f32
      %t = arith.addf %sw, %aw : f32
      %r = arith.truncf %t : f32 to bf16
      linalg.yield %r : bf16
    } -> tensor<4x4xbf16>
    return %sum : tensor<4x4xbf16>
  }
}
