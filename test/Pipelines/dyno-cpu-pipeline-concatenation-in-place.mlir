// RUN: dyno-opt %s --dyno-cpu-pipeline | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// A rotary embedding's rotate_half: x * cos + cat(-x[:, 32:], x[:, :32]) * sin. The
// reader of the concatenation is split where its pieces meet
// (dyno-split-at-concatenations); each part then writes its columns of the kernel's
// result in place (eliminate-empty-tensors) rather than into a 64 KiB temporary copied
// into the result afterwards.
// CHECK-LABEL: llvm.func @kernel_0
// CHECK-NOT:     llvm.call @malloc
// CHECK-NOT:     llvm.call @memrefCopy
// CHECK:         omp.parallel
// CHECK-NOT:     llvm.call @malloc
// CHECK-NOT:     llvm.call @memrefCopy
// CHECK:         llvm.return
func.func @main(%x: tensor<512x64xf32>, %cos: tensor<512x64xf32>, %sin: tensor<512x64xf32>) -> tensor<512x64xf32> {
  %low = tensor.extract_slice %x[0, 0] [512, 32] [1, 1] : tensor<512x64xf32> to tensor<512x32xf32>
  %high = tensor.extract_slice %x[0, 32] [512, 32] [1, 1] : tensor<512x64xf32> to tensor<512x32xf32>
  %e32 = tensor.empty() : tensor<512x32xf32>
  %negated = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%high : tensor<512x32xf32>) outs(%e32 : tensor<512x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<512x32xf32>
  %rotated = tensor.concat dim(1) %negated, %low : (tensor<512x32xf32>, tensor<512x32xf32>) -> tensor<512x64xf32>
  %e = tensor.empty() : tensor<512x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %cos, %rotated, %sin : tensor<512x64xf32>, tensor<512x64xf32>, tensor<512x64xf32>, tensor<512x64xf32>) outs(%e : tensor<512x64xf32>) {
  ^bb0(%a: f32, %c: f32, %r: f32, %s: f32, %o: f32):
    %p = arith.mulf %a, %c : f32
    %q = arith.mulf %r, %s : f32
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<512x64xf32>
  return %y : tensor<512x64xf32>
}
