// RUN: dyno-opt %s --dyno-fuse-elementwise -split-input-file -verify-diagnostics

// A tensor.expand_shape whose output_shape says -1 where its result type says 16 passes
// upstream's verifier; the reshape-fusion patterns then built a tensor type of size -1
// and asserted (found by e2e/dyno_opt_fuzz.py, seed 2). The pass rejects it instead.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @expand_shape$output_shape_not_the_result_type(%a: tensor<4x16xf32>) -> tensor<2x2x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = math.absf %x : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  // expected-error @+1 {{output_shape size -1 of dimension 2 differs from the result type's 16}}
  %view = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 2, -1] : tensor<4x16xf32> into tensor<2x2x16xf32>
  return %view : tensor<2x2x16xf32>
}
