// RUN: dyno-opt %s --dyno-hoist-kernel-constants -verify-diagnostics

// A constant whose blob was elided from the file: nothing to give the host.
func.func @main(%x: tensor<3xi64>) -> tensor<3xi64> {
  %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}
module @kernels {
  func.func @kernel_0(%x: tensor<3xi64>) -> tensor<3xi64> {
    // expected-error @+1 {{holds a tensor whose elements are not available to copy to the host}}
    %c = arith.constant dense_resource<__elided__> : tensor<3xi64>
    %e = tensor.empty() : tensor<3xi64>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %c : tensor<3xi64>, tensor<3xi64>) outs(%e : tensor<3xi64>) {
    ^bb0(%a: i64, %b: i64, %o: i64):
      %s = arith.addi %a, %b : i64
      linalg.yield %s : i64
    } -> tensor<3xi64>
    return %r : tensor<3xi64>
  }
}
