// RUN: dyno-opt %s --split-input-file --dyno-relax-softmax-maximum | FileCheck %s

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0) -> (d0)>

// A softmax normalized by the reciprocals of its sum: the maximum is relaxed.
// CHECK-LABEL: func.func @softmax$reciprocal
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : f32
// CHECK: math.exp %{{.*}} {dyno.nonpositive_argument} : f32
func.func @softmax$reciprocal(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %rows = tensor.empty() : tensor<4xf32>
  %elements = tensor.empty() : tensor<4x16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x16xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x16xf32>, tensor<4xf32>) outs(%elements : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_m: f32, %out: f32):
    %0 = arith.subf %in, %in_m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x16xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%rows : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.divf %one, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%e, %r : tensor<4x16xf32>, tensor<4xf32>) outs(%elements : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_r: f32, %out: f32):
    %0 = arith.mulf %in, %in_r : f32
    linalg.yield %0 : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A softmax divided by its sum: relaxed too.
// CHECK-LABEL: func.func @softmax$division
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : f32
func.func @softmax$division(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<4xf32>
  %elements = tensor.empty() : tensor<4x16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x16xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x16xf32>, tensor<4xf32>) outs(%elements : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_m: f32, %out: f32):
    %0 = arith.subf %in, %in_m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x16xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x16xf32>, tensor<4xf32>) outs(%elements : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_s: f32, %out: f32):
    %0 = arith.divf %in, %in_s : f32
    linalg.yield %0 : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The maximum is also a result (amax and softmax of one tensor): its NaN and zero sign
// are visible, so it stays exact.
// CHECK-LABEL: func.func @softmax$maximum_returned
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: fastmath<nnan
// exp(x - max) has an argument at most 0 all the same.
// CHECK: math.exp %{{.*}} {dyno.nonpositive_argument} : f32
func.func @softmax$maximum_returned(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<4xf32>
  %elements = tensor.empty() : tensor<4x16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x16xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x16xf32>, tensor<4xf32>) outs(%elements : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_m: f32, %out: f32):
    %0 = arith.subf %in, %in_m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x16xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x16xf32>, tensor<4xf32>) outs(%elements : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_s: f32, %out: f32):
    %0 = arith.divf %in, %in_s : f32
    linalg.yield %0 : f32
  } -> tensor<4x16xf32>
  return %y, %m : tensor<4x16xf32>, tensor<4xf32>
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The exponentials are a result themselves: a NaN elsewhere in the row would not reach
// them, so the maximum stays exact.
// CHECK-LABEL: func.func @softmax$exponentials_returned
// CHECK-NOT: fastmath<nnan
func.func @softmax$exponentials_returned(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<4xf32>
  %elements = tensor.empty() : tensor<4x16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x16xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x16xf32>, tensor<4xf32>) outs(%elements : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_m: f32, %out: f32):
    %0 = arith.subf %in, %in_m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x16xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x16xf32>, tensor<4xf32>) outs(%elements : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_s: f32, %out: f32):
    %0 = arith.divf %in, %in_s : f32
    linalg.yield %0 : f32
  } -> tensor<4x16xf32>
  return %y, %e : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// log_softmax's `x - m` is not under an exp: the sign of a zero can reach the result.
// CHECK-LABEL: func.func @log_softmax$shift
// CHECK-NOT: fastmath<nnan
// CHECK-NOT: dyno.nonpositive_argument
func.func @log_softmax$shift(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %rows = tensor.empty() : tensor<4xf32>
  %elements = tensor.empty() : tensor<4x16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x16xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %shifted = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x16xf32>, tensor<4xf32>) outs(%elements : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_m: f32, %out: f32):
    %0 = arith.subf %in, %in_m : f32
    linalg.yield %0 : f32
  } -> tensor<4x16xf32>
  return %shifted : tensor<4x16xf32>
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// The sum runs over the other dimension: a NaN in a row need not reach the row's
// results, so the maximum stays exact.
// CHECK-LABEL: func.func @softmax$sum_over_other_dimension
// CHECK-NOT: fastmath<nnan
func.func @softmax$sum_over_other_dimension(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<16xf32>
  %elements = tensor.empty() : tensor<16x16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%rows : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x16xf32>) outs(%minit : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<16xf32>
  %e = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%elements : tensor<16x16xf32>) {
  ^bb0(%in: f32, %in_m: f32, %out: f32):
    %0 = arith.subf %in, %in_m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<16x16xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%rows : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#rows, #col], iterator_types = ["reduction", "parallel"]}
      ins(%e : tensor<16x16xf32>) outs(%sinit : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<16x16xf32>, tensor<16xf32>) outs(%elements : tensor<16x16xf32>) {
  ^bb0(%in: f32, %in_s: f32, %out: f32):
    %0 = arith.divf %in, %in_s : f32
    linalg.yield %0 : f32
  } -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
