// RUN: dyno-translate --mlir-to-triton %s -split-input-file -verify-diagnostics

// An op with no Triton spelling is a diagnostic, not a crash or partial output (the
// lowering pipeline approximates atan before printing).
func.func @kernel$atan(%p: !tl.ptr<f32>) attributes {tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}], tl.xnumel = 4 : i64, tl.rnumel = 1 : i64} {
  %r = tl.range "XBLOCK" along 0 : tensor<?xindex>
  %v = tl.load %p[%r] : !tl.ptr<f32>, tensor<?xindex> -> tensor<?xf32>
  // expected-error @+1 {{'math.atan' op cannot be printed as Triton}}
  %t = math.atan %v : tensor<?xf32>
  tl.store %t, %p[%r] : tensor<?xf32>, !tl.ptr<f32>, tensor<?xindex>
  return
}

// -----

// A kernel argument must be a pointer or an integer (a size or a graph scalar).
// expected-error @+1 {{'func.func' op has an argument that is neither a pointer nor an integer}}
func.func @kernel$tensor_argument(%x: tensor<4xf32>) attributes {tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}], tl.xnumel = 4 : i64, tl.rnumel = 1 : i64} {
  return
}

// -----

// The launch table needs the index-space sizes: a kernel without them is a diagnostic.
// expected-error @+1 {{'func.func' op lacks the integer attribute tl.rnumel}}
func.func @kernel$no_rnumel(%p: !tl.ptr<f32>) attributes {tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}], tl.xnumel = 4 : i64} {
  return
}
