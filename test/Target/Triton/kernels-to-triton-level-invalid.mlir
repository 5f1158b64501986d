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

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A size read past the tensor's rank (found by e2e/dyno_opt_fuzz.py; this asserted in
// the emitter) is diagnosed.
func.func @kernel$dim_past_the_rank(%x: tensor<?x?xf32>, %start: index, %rows: index) -> tensor<?xf32> {
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{computes a scalar the Triton target cannot compute at kernel entry}}
  %cols = tensor.dim %x, %c2 : tensor<?x?xf32>
  %width = arith.subi %cols, %c1 : index
  %s = tensor.extract_slice %x[%start, 1] [%rows, %width] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%rows) : tensor<?xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  // expected-error @+1 {{has a dynamic loop 1 whose size the Triton target cannot read from its operands}}
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sum = arith.addf %a, %o : f32
    linalg.yield %sum : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
