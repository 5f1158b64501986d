// RUN: dyno-opt %s -split-input-file --dyno-convert-kernels-to-triton-level -verify-diagnostics

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An unordered comparison (`ugt` takes every NaN) picks no extremum.
func.func @kernel$unordered_argmax(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %fm = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %fi = linalg.fill ins(%zero : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  // expected-error @+1 {{accumulators that pick one element, as an argmax: no accumulator is compared with an element by an ordered <, <=, > or >=, and a find-first reduction has one accumulator}}
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%fm, %fi : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %gt = arith.cmpf ugt, %a, %m : f32
    %nm = arith.select %gt, %a, %m : f32
    %ni = arith.select %gt, %jj, %i : i64
    linalg.yield %nm, %ni : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// Two reductions over different dimensions need two index spaces (the pipeline splits
// such kernels first, with dyno-split-kernels-for-triton).
func.func @kernel$two_spaces(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %rows = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%f4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  // expected-error @+1 {{reduces over other dimensions than the kernel's first reduction}}
  %cols = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%f8 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %rows, %cols : tensor<4xf32>, tensor<8xf32>
}

// -----

// A kernel reading a tensor built by an op the lowering does not know.
func.func @kernel$unknown_producer(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{makes a tensor that the Triton target cannot read in a kernel}}
  %c = tensor.concat dim(0) %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%c : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
