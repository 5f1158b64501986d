// RUN: dyno-opt %s -split-input-file -verify-diagnostics

func.func @dyno.launch$dynamic_result_without_size(%x: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{results have 1 dynamic dimension(s) but the launch gives 0 size(s) in dims(...)}}
  %0 = dyno.launch @kernels::@k(%x) : (tensor<4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
module @kernels {
  func.func @k(%x: tensor<4xf32>) -> tensor<?xf32> {
    %c = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
    return %c : tensor<?xf32>
  }
}

// -----

func.func @dyno.launch$missing_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'@kernels::@nowhere' does not reference a kernel}}
  %0 = dyno.launch @kernels::@nowhere(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
}

// -----

func.func @dyno.launch$type_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kernel type '(tensor<8xf32>) -> tensor<4xf32>' does not match the launch's operand and result types}}
  %0 = dyno.launch @kernels::@k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  func.func @k(%x: tensor<8xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    return %e : tensor<4xf32>
  }
}

// -----

func.func @dyno.launch$bufferized_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{bufferized kernel type '(memref<4xf32>) -> ()' does not take one buffer per launch operand and result}}
  %0 = dyno.launch @kernels::@k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  func.func @k(%x: memref<4xf32>) {
    return
  }
}

// -----

func.func @dyno.launch$lowered_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{lowered kernel takes 3 arguments but the launch passes 2 (operands, result buffers and dynamic sizes)}}
  %0 = dyno.launch @kernels::@k(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr) {
    llvm.return
  }
}

// -----

func.func @dyno.launch$not_a_function(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'@kernels::@g' is neither a func.func nor an llvm.func}}
  %0 = dyno.launch @kernels::@g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  memref.global "private" @g : memref<4xf32>
}

// -----

func.func @dyno.contraction$unknown(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{unknown library operation 'gemm'}}
  %0 = dyno.contraction "gemm"(%a, %a) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.contraction$operand_count(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'matmul' takes 2 to 3 operands, got 1}}
  %0 = dyno.contraction "matmul"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.contraction$epilogue_on_batch_matmul(%a: tensor<2x4x4xbf16>) -> tensor<2x4x4xbf16> {
  // expected-error @+1 {{only 'matmul' takes an epilogue}}
  %0 = dyno.contraction "batch_matmul"(%a, %a) {epilogue = "gelu"} : (tensor<2x4x4xbf16>, tensor<2x4x4xbf16>) -> tensor<2x4x4xbf16>
  return %0 : tensor<2x4x4xbf16>
}

// -----

func.func @dyno.contraction$unknown_epilogue(%a: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  // expected-error @+1 {{unknown epilogue 'relu' (known: 'gelu')}}
  %0 = dyno.contraction "matmul"(%a, %a) {epilogue = "relu"} : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
  return %0 : tensor<4x4xbf16>
}

// -----

func.func @dyno.contraction$epilogue_with_accumulator(%a: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  // expected-error @+1 {{a 'matmul' with an epilogue adds a bias of rank 1, not an accumulator}}
  %0 = dyno.contraction "matmul"(%a, %a, %a) {epilogue = "gelu"} : (tensor<4x4xbf16>, tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
  return %0 : tensor<4x4xbf16>
}

// -----

func.func @dyno.contraction$rank(%a: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{operand #1 of 'matmul' must have rank 2}}
  %0 = dyno.contraction "matmul"(%a, %b) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.contraction$conv_without_attributes(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'conv2d' needs strides, padding, dilations and groups}}
  %0 = dyno.contraction "conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @dyno.contraction$attributes_on_matmul(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{only 'conv2d' takes strides, padding, dilations or groups}}
  %0 = dyno.contraction "matmul"(%a, %a) {groups = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.contraction$conv_attribute_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'conv2d' strides, padding and dilations have two values each}}
  %0 = dyno.contraction "conv2d"(%x, %w) {strides = array<i64: 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @dyno.launch$lowered_without_sizes(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  // expected-error @+1 {{lowered kernel takes 2 arguments but the launch passes 4 (operands, result buffers and dynamic sizes)}}
  %0 = dyno.launch @kernels::@k(%x) dims(%n) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
module @kernels {
  llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr) {
    llvm.return
  }
}

// -----

func.func @dyno.scan$accumulator_shape(%x: tensor<3x5xf32>, %o: tensor<3x5xf32>, %acc: tensor<5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{accumulator must have the input's shape without dimension 1}}
  %0:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x5xf32>) outs(%o, %acc : tensor<3x5xf32>, tensor<5xf32>) {
  ^bb0(%p: f32, %i: f32):
    dyno.yield %p : f32
  } -> tensor<3x5xf32>, tensor<5xf32>
  return %0#0 : tensor<3x5xf32>
}

// -----

func.func @dyno.scan$dimension_out_of_range(%x: tensor<3x5xf32>, %o: tensor<3x5xf32>, %acc: tensor<3xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{dimension 2 is out of range for rank 2}}
  %0:2 = dyno.scan dimension(2) inclusive(true) ins(%x : tensor<3x5xf32>) outs(%o, %acc : tensor<3x5xf32>, tensor<3xf32>) {
  ^bb0(%p: f32, %i: f32):
    dyno.yield %p : f32
  } -> tensor<3x5xf32>, tensor<3xf32>
  return %0#0 : tensor<3x5xf32>
}

// -----

func.func @dyno.scan$operand_count(%x: tensor<3x5xf32>, %o: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{takes one input and two outputs (output, accumulator)}}
  %0 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x5xf32>) outs(%o : tensor<3x5xf32>) {
  ^bb0(%p: f32, %i: f32):
    dyno.yield %p : f32
  } -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @dyno.scan$output_type(%x: tensor<3x5xf32>, %o: tensor<3x5xf16>, %acc: tensor<3xf32>) -> tensor<3x5xf16> {
  // expected-error @+1 {{output must have the input's type}}
  %0:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x5xf32>) outs(%o, %acc : tensor<3x5xf16>, tensor<3xf32>) {
  ^bb0(%p: f32, %i: f32):
    dyno.yield %p : f32
  } -> tensor<3x5xf16>, tensor<3xf32>
  return %0#0 : tensor<3x5xf16>
}

// -----

func.func @dyno.scan$region_arguments(%x: tensor<3x5xf32>, %o: tensor<3x5xf32>, %acc: tensor<3xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{region arguments must be 2 scalars of the operands' element types}}
  %0:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x5xf32>) outs(%o, %acc : tensor<3x5xf32>, tensor<3xf32>) {
  ^bb0(%p: f64, %i: f32):
    dyno.yield %i : f32
  } -> tensor<3x5xf32>, tensor<3xf32>
  return %0#0 : tensor<3x5xf32>
}

// -----

func.func @dyno.scan$yield_type(%x: tensor<3x5xf32>, %o: tensor<3x5xf32>, %acc: tensor<3xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{region must yield one value of type 'f32'}}
  %0:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x5xf32>) outs(%o, %acc : tensor<3x5xf32>, tensor<3xf32>) {
  ^bb0(%p: f32, %i: f32):
    %c = arith.cmpf olt, %p, %i : f32
    dyno.yield %c : i1
  } -> tensor<3x5xf32>, tensor<3xf32>
  return %0#0 : tensor<3x5xf32>
}

// -----

func.func @dyno.scan$result_types(%x: tensor<3x5xf32>, %o: tensor<3x5xf32>, %acc: tensor<3xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{result types must be the outputs' types}}
  %0:2 = "dyno.scan"(%x, %o, %acc) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%p: f32, %i: f32):
    "dyno.yield"(%p) : (f32) -> ()
  }) : (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> (tensor<3x5xf32>, tensor<5xf32>)
  return %0#0 : tensor<3x5xf32>
}

// -----

func.func @dyno.scatter$operand_count(%u: tensor<4x3xf32>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{takes two inputs (updates, indices) and one output (original)}}
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u : tensor<4x3xf32>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @dyno.scatter$indices_rank(%u: tensor<4x3xf32>, %i: tensor<4xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{indices must be a 2-d integer tensor of static depth}}
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<4x3xf32>, tensor<4xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @dyno.scatter$map_size(%u: tensor<4x3xf32>, %i: tensor<4x1xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{dimension_map needs one entry per index column (1)}}
  %0 = dyno.scatter dimension_map([0, 1]) unique_indices(false) ins(%u, %i : tensor<4x3xf32>, tensor<4x1xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @dyno.scatter$map_duplicate(%u: tensor<4xf32>, %i: tensor<4x2xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{dimension_map entries must be distinct dimensions of original}}
  %0 = dyno.scatter dimension_map([0, 0]) unique_indices(false) ins(%u, %i : tensor<4xf32>, tensor<4x2xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @dyno.scatter$update_rank(%u: tensor<4x1x1x3xf32>, %i: tensor<4x1xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{updates must have rank 1 to 1 + rank(original)}}
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<4x1x1x3xf32>, tensor<4x1xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @dyno.scatter$row_count(%u: tensor<5x3xf32>, %i: tensor<4x1xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{updates and indices must have one row per update}}
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<5x3xf32>, tensor<4x1xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @dyno.scatter$coverage(%u: tensor<4xf32>, %i: tensor<4x1xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{indices and update slices must address every dimension of original}}
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<4xf32>, tensor<4x1xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @dyno.scatter$element_types(%u: tensor<4x3xf16>, %i: tensor<4x1xi64>, %o: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{updates and original must have one element type}}
  %0 = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %i : tensor<4x3xf16>, tensor<4x1xi64>) outs(%o : tensor<6x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @dyno.sort$inputs(%x: tensor<7xf32>, %v: tensor<7xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{sorts its outputs: no inputs, at least one output}}
  %0 = dyno.sort dimension(0) ins(%x : tensor<7xf32>) outs(%v : tensor<7xf32>) {
  ^bb0(%a: f32, %b: f32):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @dyno.sort$dimension(%v: tensor<7xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{dimension 1 is out of range for rank 1}}
  %0 = dyno.sort dimension(1) outs(%v : tensor<7xf32>) {
  ^bb0(%a: f32, %b: f32):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @dyno.sort$shapes(%v: tensor<7xf32>, %i: tensor<8xi64>) -> tensor<7xf32> {
  // expected-error @+1 {{outputs must have one shape}}
  %0:2 = dyno.sort dimension(0) outs(%v, %i : tensor<7xf32>, tensor<8xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<7xf32>, tensor<8xi64>
  return %0#0 : tensor<7xf32>
}

// -----

func.func @dyno.sort$comparator(%v: tensor<7xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{region must yield one value of type 'i1'}}
  %0 = dyno.sort dimension(0) outs(%v : tensor<7xf32>) {
  ^bb0(%a: f32, %b: f32):
    dyno.yield %a : f32
  } -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @dyno.yield$parent(%x: f32) {
  // expected-error @+1 {{expects parent op to be one of 'dyno.scan, dyno.scatter, dyno.sort'}}
  dyno.yield %x : f32
}

// -----

func.func @dyno.sort$prefix(%v: tensor<7xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{prefix 8 must be in [1, 7]}}
  %0 = dyno.sort dimension(0) prefix(8) outs(%v : tensor<7xf32>) {
  ^bb0(%a: f32, %b: f32):
    %le = arith.cmpf ole, %a, %b : f32
    dyno.yield %le : i1
  } -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @dyno.launch$initial_values_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 2 initial value(s) for 1 result(s)}}
  %0 = dyno.launch @kernels::@k(%x) {initial_values = array<i64: 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  func.func @k(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

func.func @dyno.launch$initial_value_type(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result 0 of type 'tensor<4xf32>' cannot start as argument 0 of type 'tensor<8xf32>'}}
  %0 = dyno.launch @kernels::@k(%x) {initial_values = array<i64: 0>} : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  func.func @k(%x: tensor<8xf32>) -> tensor<4xf32> {
    %s = tensor.extract_slice %x[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

// -----

func.func @dyno.launch$initial_value_position(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{initial value 3 of result 0 is not an argument position}}
  %0 = dyno.launch @kernels::@k(%x) {initial_values = array<i64: 3>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
module @kernels {
  func.func @k(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

func.func @dyno.library_call$not_aten(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{calls ATen operators (aten.<op>.<overload>) and torch.distributed's functional collectives (_c10d_functional.<op>.<overload>), not 'dgetrf'}}
  %0 = dyno.library_call "dgetrf"(%a) {arguments = [unit]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.library_call$tensor_count(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'arguments' names 2 tensors (unit) but the call has 1 tensor operands}}
  %0 = dyno.library_call "aten.linalg_inv_ex.default"(%a) {arguments = [unit, unit]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dyno.library_call$argument_kind(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{is neither a tensor (unit), none, a bool, an integer, a float, a string nor an array<i64>}}
  %0 = dyno.library_call "aten.linalg_inv_ex.default"(%a) {arguments = [unit, [1, 2]]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// A region that does not end in dyno.yield (found by e2e/dyno_opt_fuzz.py; the verifier
// asserted asking for its terminator).
func.func @dyno.sort$no_terminator(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{region must yield one value of type 'i1'}}
  %0 = dyno.sort dimension(0) outs(%x : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.cmpf olt, %a, %b : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
