// RUN: dyno-opt %s -split-input-file --dyno-split-kernels-for-triton | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A row sum and a column sum of one tensor, then a pointwise op on the row sums: the
// reductions need different index spaces, so the kernel becomes one kernel per op,
// launched in order; the row sums pass through memory.
// CHECK-LABEL: func.func @main
// CHECK:         %[[ROWS:.*]] = dyno.launch @kernels::@kernel_0_0(%arg0) : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK:         %[[COLS:.*]] = dyno.launch @kernels::@kernel_0_1(%arg0) : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK:         %[[NEG:.*]] = dyno.launch @kernels::@kernel_0_2(%[[ROWS]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[NEG]], %[[COLS]]
// CHECK:       module @kernels
// CHECK:         func.func @kernel_0_0(%{{.*}}: tensor<4x8xf32> {bufferization.writable = false}) -> tensor<4xf32>
// CHECK:           linalg.fill
// CHECK:           linalg.generic
// CHECK:         func.func @kernel_0_1
// CHECK:         func.func @kernel_0_2(%{{.*}}: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32>
// CHECK-NOT:     func.func @kernel_0(
// A kernel that fits one index space is left alone.
// CHECK:         func.func @kernel_1(
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4x8xf32>) {
  %0:2 = dyno.launch @kernels::@kernel_0(%x) : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>)
  %1 = dyno.launch @kernels::@kernel_1(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0#0, %0#1, %1 : tensor<4xf32>, tensor<8xf32>, tensor<4x8xf32>
}
module @kernels {
  func.func @kernel_0(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
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
    %cols = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%f8 : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    %neg = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%rows : tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<4xf32>
    return %neg, %cols : tensor<4xf32>, tensor<8xf32>
  }
  func.func @kernel_1(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
}

// -----

// A kernel returning a splat constant (a folded torch.full): the constant becomes a
// fill the Triton lowering can store.
// CHECK-LABEL: func.func @main
// CHECK:         dyno.launch @kernels::@kernel_0()
// CHECK:       func.func @kernel_0() -> tensor<1x1xf32>
// CHECK-NOT:     arith.constant dense
// CHECK:         %[[C:.*]] = arith.constant -1.000000e+00 : f32
// CHECK:         linalg.generic {{.*}} ins(%[[C]] : f32)
func.func @main() -> tensor<1x1xf32> {
  %0 = dyno.launch @kernels::@kernel_0() : () -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}
module @kernels {
  func.func @kernel_0() -> tensor<1x1xf32> {
    %cst = arith.constant dense<-1.000000e+00> : tensor<1x1xf32>
    return %cst : tensor<1x1xf32>
  }
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A Triton program cannot read back a concatenation: it runs on the host (torch.cat)
// between the piece that computes its operand and the piece that reads it; views of
// computed tensors go along. A constant pad that only computing ops read is read by
// their piece from its stored source (a masked load), not made on the host.
// CHECK-LABEL: func.func @main
// CHECK:         %[[NEG:.*]] = dyno.launch @kernels::@kernel_0_0(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         %[[HALF:.*]] = tensor.extract_slice %[[NEG]][0, 0] [4, 4] [1, 1]
// CHECK:         %[[CAT:.*]] = tensor.concat dim(1) %[[HALF]], %arg0 : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x12xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         %[[EXP:.*]] = dyno.launch @kernels::@kernel_0_1(%[[CAT]]) : (tensor<4x12xf32>) -> tensor<5x14xf32>
// CHECK:         return %[[EXP]]
// CHECK:       func.func @kernel_0_0(
// CHECK:         arith.negf
// CHECK:       func.func @kernel_0_1(%[[STORED:.*]]: tensor<4x12xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         tensor.pad %[[STORED]] low[1, 0] high[0, 2]
// CHECK:         math.exp
func.func @main(%x: tensor<4x8xf32>) -> tensor<5x14xf32> {
  %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<4x8xf32>) -> tensor<5x14xf32>
  return %0 : tensor<5x14xf32>
}
module @kernels {
  func.func @kernel_0(%x: tensor<4x8xf32>) -> tensor<5x14xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x8xf32>
    %neg = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<4x8xf32>
    %half = tensor.extract_slice %neg[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
    %cat = tensor.concat dim(1) %half, %x : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x12xf32>
    %padded = tensor.pad %cat low[1, 0] high[0, 2] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<4x12xf32> to tensor<5x14xf32>
    %e2 = tensor.empty() : tensor<5x14xf32>
    %exp = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%padded : tensor<5x14xf32>) outs(%e2 : tensor<5x14xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = math.exp %a : f32
      linalg.yield %n : f32
    } -> tensor<5x14xf32>
    return %exp : tensor<5x14xf32>
  }
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A max pool over -inf padding of what the same kernel computes (ResNet's batch norm and
// ReLU, then its pool): the pool's generic reads the pad's strided windows, which no
// piece can read from a value it computes itself, so the pool starts a piece of its own
// that reads the stored ReLU through the pad. No pad on the host.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     tensor.pad
// CHECK:         %[[RELU:.*]] = dyno.launch @kernels::@kernel_0_0(%arg0) : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         %[[POOL:.*]] = dyno.launch @kernels::@kernel_0_1(%[[RELU]]) : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK:         return %[[POOL]]
// CHECK:       func.func @kernel_0_0(
// CHECK:         arith.maximumf
// CHECK-NOT:     tensor.pad
// CHECK:       func.func @kernel_0_1(%[[STORED:.*]]: tensor<1x4x4x2xf32>
// CHECK:         tensor.pad %[[STORED]] low[0, 1, 1, 0] high[0, 0, 0, 0]
// CHECK:         tensor.extract_slice
// CHECK:         arith.maximumf
func.func @main(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
module @kernels {
  func.func @kernel_0(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<1x4x4x2xf32>
    %relu = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x2xf32>) outs(%e : tensor<1x4x4x2xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %zero : f32
      linalg.yield %r : f32
    } -> tensor<1x4x4x2xf32>
    %padded = tensor.pad %relu low[0, 1, 1, 0] high[0, 0, 0, 0] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %ninf : f32
    } : tensor<1x4x4x2xf32> to tensor<1x5x5x2xf32>
    %w0 = tensor.extract_slice %padded[0, 0, 0, 0] [1, 2, 2, 2] [1, 2, 2, 1] : tensor<1x5x5x2xf32> to tensor<1x2x2x2xf32>
    %w1 = tensor.extract_slice %padded[0, 1, 1, 0] [1, 2, 2, 2] [1, 2, 2, 1] : tensor<1x5x5x2xf32> to tensor<1x2x2x2xf32>
    %e2 = tensor.empty() : tensor<1x2x2x2xf32>
    %pool = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w0, %w1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) outs(%e2 : tensor<1x2x2x2xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.maximumf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<1x2x2x2xf32>
    return %pool : tensor<1x2x2x2xf32>
  }
}

// -----

// A kernel that returns a reshape of its argument and a pad of it computes nothing a
// Triton program stores: both become the host's (torch-mlir's adaptive max pooling
// returns its input reshaped; max_pool3d's decomposition pads it).
// CHECK-LABEL: func.func @main
// CHECK-NOT:     dyno.launch
// CHECK-DAG:     %[[R:.*]] = tensor.expand_shape %arg0
// CHECK-DAG:     %[[P:.*]] = tensor.pad %arg0
// CHECK:         return %[[R]], %[[P]]
// CHECK:       module @kernels
// CHECK-NOT:     func.func
func.func @main(%x: tensor<4x6xf32>) -> (tensor<4x2x3xf32>, tensor<6x6xf32>) {
  %0:2 = dyno.launch @kernels::@kernel_0(%x) : (tensor<4x6xf32>) -> (tensor<4x2x3xf32>, tensor<6x6xf32>)
  return %0#0, %0#1 : tensor<4x2x3xf32>, tensor<6x6xf32>
}
module @kernels {
  func.func @kernel_0(%x: tensor<4x6xf32>) -> (tensor<4x2x3xf32>, tensor<6x6xf32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %r = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf32> into tensor<4x2x3xf32>
    %p = tensor.pad %x low[1, 0] high[1, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %ninf : f32
    } : tensor<4x6xf32> to tensor<6x6xf32>
    return %r, %p : tensor<4x2x3xf32>, tensor<6x6xf32>
  }
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// Pieces are runs of ops that fit one index space: the row sums and the division of
// every element by its row's sum (a normalization: one row space) stay one piece, which
// returns only the quotient; the column sums of the quotient need another space and
// read it from memory. (Until 2026-12-02 each op was a piece: a layer norm beside a
// window partition was five kernels.)
// CHECK-LABEL: func.func @main
// CHECK:         %[[NORMED:.*]] = dyno.launch @kernels::@kernel_0_0(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         %[[COLS:.*]] = dyno.launch @kernels::@kernel_0_1(%[[NORMED]]) : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK:         return %[[COLS]]
// CHECK:       module @kernels
// CHECK:         func.func @kernel_0_0(%{{.*}}: tensor<4x8xf32> {bufferization.writable = false}) -> tensor<4x8xf32>
// CHECK-COUNT-2:   linalg.generic
// CHECK:           return
// CHECK:         func.func @kernel_0_1(%{{.*}}: tensor<4x8xf32> {bufferization.writable = false}) -> tensor<8xf32>
// CHECK-NOT:     func.func @kernel_0(
func.func @main(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %0 = dyno.launch @kernels::@kernel_0(%x) : (tensor<4x8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
module @kernels {
  func.func @kernel_0(%x: tensor<4x8xf32>) -> tensor<8xf32> {
    %zero = arith.constant 0.0 : f32
    %e4 = tensor.empty() : tensor<4xf32>
    %e8 = tensor.empty() : tensor<8xf32>
    %e48 = tensor.empty() : tensor<4x8xf32>
    %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
    %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
    %rows = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%f4 : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %normed = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %rows : tensor<4x8xf32>, tensor<4xf32>) outs(%e48 : tensor<4x8xf32>) {
    ^bb0(%a: f32, %s: f32, %o: f32):
      %q = arith.divf %a, %s : f32
      linalg.yield %q : f32
    } -> tensor<4x8xf32>
    %cols = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%normed : tensor<4x8xf32>) outs(%f8 : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    return %cols : tensor<8xf32>
  }
}
