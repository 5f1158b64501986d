// RUN: dyno-opt %s -split-input-file -verify-diagnostics --dyno-convert-scans-scatters-sorts-to-triton-level

// A product at repeated indices has no Triton atomic: the op runs eagerly.
func.func @scatter_product(%u: tensor<4xf32>, %idx: tensor<4x1xi64>, %orig: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{combines repeated indices with an op Triton has no atomic for}}
  %r = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %idx : tensor<4xf32>, tensor<4x1xi64>) outs(%orig : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %o, %a : f32
    dyno.yield %p : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// float16 has no Triton max atomic.
func.func @scatter_half_max(%u: tensor<4xf16>, %idx: tensor<4x1xi64>, %orig: tensor<6xf16>) -> tensor<6xf16> {
  // expected-error @+1 {{combines repeated indices with an op Triton has no atomic for}}
  %r = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %idx : tensor<4xf16>, tensor<4x1xi64>) outs(%orig : tensor<6xf16>) {
  ^bb0(%a: f16, %o: f16):
    %m = arith.maximumf %a, %o : f16
    dyno.yield %m : f16
  } -> tensor<6xf16>
  return %r : tensor<6xf16>
}

// -----

func.func @sort_f64(%v: tensor<2x7xf64>) -> tensor<2x7xf64> {
  // expected-error @+1 {{packs values of at most 32 bits}}
  %r = dyno.sort dimension(1) outs(%v : tensor<2x7xf64>) {
  ^bb0(%a: f64, %b: f64):
    %le = arith.cmpf ole, %a, %b : f64
    dyno.yield %le : i1
  } -> tensor<2x7xf64>
  return %r : tensor<2x7xf64>
}

// -----

func.func @sort_long_lines(%v: tensor<2x20000xf32>) -> tensor<2x20000xf32> {
  // expected-error @+1 {{sorts lines of 20000 elements; the Triton lowering holds at most 16384}}
  %r = dyno.sort dimension(1) outs(%v : tensor<2x20000xf32>) {
  ^bb0(%a: f32, %b: f32):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<2x20000xf32>
  return %r : tensor<2x20000xf32>
}

// -----

func.func @sort_unsigned(%v: tensor<7xi32>) -> tensor<7xi32> {
  // expected-error @+1 {{has a comparator the Triton lowering does not sort by}}
  %r = dyno.sort dimension(0) outs(%v : tensor<7xi32>) {
  ^bb0(%a: i32, %b: i32):
    %le = arith.cmpi ule, %a, %b : i32
    dyno.yield %le : i1
  } -> tensor<7xi32>
  return %r : tensor<7xi32>
}

// -----

func.func @exclusive_scan(%x: tensor<8xf32>, %o: tensor<8xf32>, %acc: tensor<f32>) -> tensor<8xf32> {
  // expected-error @+1 {{is exclusive; the Triton lowering scans inclusively only}}
  %r:2 = dyno.scan dimension(0) inclusive(false) ins(%x : tensor<8xf32>)
      outs(%o, %acc : tensor<8xf32>, tensor<f32>) {
  ^bb0(%p: f32, %i: f32):
    %s = arith.addf %p, %i : f32
    dyno.yield %s : f32
  } -> tensor<8xf32>, tensor<f32>
  return %r#0 : tensor<8xf32>
}

// -----

// Sorts (and scatters) of symbolic sizes run eagerly; scans take them.
func.func @dynamic_sort(%v: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{has a Triton lowering for static shapes only (scans take symbolic sizes)}}
  %r = dyno.sort dimension(0) outs(%v : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A scan of symbolic sizes reads its input where an argument holds it.
func.func @dynamic_scan_of_a_reshape(%x: tensor<?x?xf32>, %n: index) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %a = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%a : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{scans a tensor of symbolic sizes that is not a kernel argument}}
  %r:2 = dyno.scan dimension(0) inclusive(true) ins(%flat : tensor<?xf32>)
      outs(%e, %acc : tensor<?xf32>, tensor<f32>) {
  ^bb0(%p: f32, %i: f32):
    %s = arith.addf %p, %i : f32
    dyno.yield %s : f32
  } -> tensor<?xf32>, tensor<f32>
  return %r#0 : tensor<?xf32>
}
