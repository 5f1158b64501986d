// RUN: dyno-opt %s -split-input-file --dyno-convert-kernels-to-triton-level -canonicalize -cse | FileCheck %s
// RUN: dyno-opt %s -split-input-file --dyno-convert-kernels-to-triton-level="persistent-rnumel=16" -canonicalize -cse | FileCheck %s --check-prefix=LOOPED

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>

// A pointwise kernel with a broadcast row vector and a transposed read: one rank-1
// program over the flattened output; reads at offsets from the indexing maps.
// CHECK-LABEL: func.func @kernel$pointwise
// CHECK-SAME:    (%[[X:.*]]: !tl.ptr<f32>, %[[B:.*]]: !tl.ptr<f32>, %[[T:.*]]: !tl.ptr<f32>, %[[OUT:.*]]: !tl.ptr<f32>)
// CHECK-SAME:    tl.configs = [{XBLOCK = 32 : i64, num_warps = 1 : i64}
// CHECK-SAME:    tl.rnumel = 1 : i64, tl.xnumel = 32 : i64
// CHECK:         %[[PID:.*]] = tl.program_id 0
// CHECK:         %[[RANGE:.*]] = tl.range "XBLOCK" along 0 : tensor<?xindex>
// CHECK:         %[[XI:.*]] = arith.addi %{{.*}}, %[[RANGE]] : tensor<?xindex>
// CHECK:         %[[XMASK:.*]] = arith.cmpi slt, %[[XI]], %{{.*}} : tensor<?xindex>
// CHECK:         %[[ROW:.*]] = arith.divsi %[[XI]]
// CHECK:         %[[COL:.*]] = arith.remsi %[[XI]]
// A row-major read of the iteration space's shape is at the program's linear index.
// CHECK:         tl.load %[[X]][%[[XI]]] mask %[[XMASK]]
// CHECK:         tl.load %[[B]][%[[COL]]] mask %[[XMASK]]
// Transposed: element (row, col) of T^T is T[col][row] at col * 4 + row.
// CHECK:         %[[TOFF:.*]] = arith.muli %[[COL]], %{{.*}} : tensor<?xindex>
// CHECK:         %[[TOFF2:.*]] = arith.addi %[[TOFF]], %[[ROW]] : tensor<?xindex>
// CHECK:         tl.load %[[T]][%[[TOFF2]]] mask %[[XMASK]]
// CHECK:         arith.addf
// CHECK:         arith.mulf
// CHECK:         tl.store %{{.*}}, %[[OUT]][%[[XI]]] mask %[[XMASK]]
func.func @kernel$pointwise(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %t: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #t, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b, %t : tensor<4x8xf32>, tensor<8xf32>, tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %m = arith.mulf %s, %d : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Reads and writes of row-major buffers of the loop's own shape: the program's linear
// index is their offset, with no division or remainder to recover positions (GPT-2's
// GELU kernel computed three of each per element and summed them back).
// CHECK-LABEL: func.func @kernel$contiguous
// CHECK:         %[[XI:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<?xindex>
// CHECK-NOT:     arith.divsi
// CHECK-NOT:     arith.remsi
// CHECK:         tl.load %{{.*}}[%[[XI]]]
// CHECK:         tl.store %{{.*}}, %{{.*}}[%[[XI]]]
func.func @kernel$contiguous(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %e = tensor.empty() : tensor<2x3x8xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x8xf32>) outs(%e : tensor<2x3x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x3x8xf32>
  return %r : tensor<2x3x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A softmax: max, exp-sum and division share the row space. Held whole (64 <= 4096):
// one block of rows per program, each intermediate computed once, masked to the
// reduction's identity past the row's end.
// CHECK-LABEL: func.func @kernel$softmax
// CHECK-SAME:    tl.configs = [{RBLOCK = 64 : i64, XBLOCK = 32 : i64
// CHECK-NOT:     scf.for
// CHECK:         %[[V:.*]] = tl.load
// CHECK:         %[[MASKED:.*]] = arith.select %{{.*}}, %[[V]], %{{.*}} : tensor<?x?xi1>, tensor<?x?xf32>
// CHECK:         %[[MAX:.*]] = tl.reduce "max" %[[MASKED]] along 1
// CHECK:         %[[SUB:.*]] = arith.subf %[[V]], %[[MAX]]
// CHECK:         %[[EXP:.*]] = math.exp %[[SUB]]
// CHECK:         %[[SUM:.*]] = tl.reduce "sum" %{{.*}} along 1
// CHECK:         %[[DIV:.*]] = arith.divf %[[EXP]], %[[SUM]]
// CHECK:         tl.store %[[DIV]]
// CHECK-NOT:     tl.load
// The same kernel past persistent-rnumel: a loop per reduction, a final loop for the
// output, each recomputing its row values from memory.
// LOOPED-LABEL: func.func @kernel$softmax
// LOOPED-SAME:    tl.configs = [{RBLOCK = 64 : i64, XBLOCK = 1 : i64
// LOOPED:         %[[ACC:.*]] = tl.full %{{.*}} ["XBLOCK", "RBLOCK"]
// LOOPED:         %[[M:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (tensor<?x?xf32>)
// LOOPED:           tl.load
// LOOPED:           arith.maximumf
// LOOPED:           scf.yield
// LOOPED:         tl.reduce "max" %[[M]] along 1
// LOOPED:         scf.for
// LOOPED:           math.exp
// LOOPED:         tl.reduce "sum"
// LOOPED:         scf.for
// LOOPED:           math.exp
// LOOPED:           arith.divf
// LOOPED:           tl.store
func.func @kernel$softmax(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<32x64xf32>) outs(%fm : tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<32xf32>
  %e = tensor.empty() : tensor<32x64xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<32x64xf32>, tensor<32xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    %x2 = math.exp %s : f32
    linalg.yield %x2 : f32
  } -> tensor<32x64xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<32x64xf32>) outs(%fz : tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<32xf32>
  %div = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<32x64xf32>, tensor<32xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<32x64xf32>
  return %div : tensor<32x64xf32>
}

// -----

#gather = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d0, d1)>

// An embedding lookup: tensor.extract with a loaded index becomes a gather.
// CHECK-LABEL: func.func @kernel$gather
// CHECK-SAME:    (%[[IDX:.*]]: !tl.ptr<i64>, %[[TABLE:.*]]: !tl.ptr<f32>, %[[OUT:.*]]: !tl.ptr<f32>)
// CHECK:         %[[I:.*]] = tl.load %[[IDX]]
// CHECK:         %[[ROW:.*]] = arith.index_cast %[[I]] : tensor<?xi64> to tensor<?xindex>
// CHECK:         %[[OFF:.*]] = arith.muli %[[ROW]], %{{.*}} : tensor<?xindex>
// CHECK:         %[[AT:.*]] = arith.addi %[[OFF]], %{{.*}} : tensor<?xindex>
// CHECK:         %[[V:.*]] = tl.load %[[TABLE]][%[[AT]]] mask
// CHECK:         tl.store %[[V]], %[[OUT]]
func.func @kernel$gather(%idx: tensor<5xi64>, %table: tensor<10x16xf32>) -> tensor<5x16xf32> {
  %e = tensor.empty() : tensor<5x16xf32>
  %r = linalg.generic {indexing_maps = [#gather, #out], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<5xi64>) outs(%e : tensor<5x16xf32>) {
  ^bb0(%i: i64, %o: f32):
    %row = arith.index_cast %i : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<10x16xf32>
    linalg.yield %v : f32
  } -> tensor<5x16xf32>
  return %r : tensor<5x16xf32>
}

// -----

#id4 = affine_map<(d0, d1) -> (d0, d1)>

// A padded read (max pooling's -inf border): lanes outside the tensor load nothing and
// take the pad value.
// CHECK-LABEL: func.func @kernel$padded
// CHECK:         %[[LOW:.*]] = arith.cmpi sge
// CHECK:         %[[HIGH:.*]] = arith.cmpi slt
// CHECK:         %[[IN:.*]] = arith.andi %[[LOW]], %[[HIGH]]
// CHECK:         %[[V:.*]] = tl.load %{{.*}}[%{{.*}}] mask %{{.*}}
// CHECK:         arith.select %{{.*}}, %[[V]], %{{.*}} : tensor<?xi1>, tensor<?xf32>
func.func @kernel$padded(%x: tensor<4x4xf32>) -> tensor<6x6xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %ninf : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  %e = tensor.empty() : tensor<6x6xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<6x6xf32>) outs(%e : tensor<6x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<6x6xf32>
  return %r : tensor<6x6xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// Reading an uninitialized tensor (torch-mlir's adaptive max pooling starts its indices
// from one): any value is a valid refinement; the program reads zeros, no load.
// CHECK-LABEL: func.func @kernel$reads_uninitialized
// CHECK-SAME:    (%[[X:.*]]: !tl.ptr<i64>, %[[OUT:.*]]: !tl.ptr<i64>)
// CHECK:         %[[V:.*]] = tl.load %[[X]]
// CHECK-NOT:     tl.load
// CHECK:         %[[S:.*]] = arith.maxsi %[[V]], %{{.*}} : tensor<?xi64>
// CHECK:         tl.store %[[S]], %[[OUT]]
func.func @kernel$reads_uninitialized(%x: tensor<16xi64>) -> tensor<16xi64> {
  %undefined = tensor.empty() : tensor<16xi64>
  %e = tensor.empty() : tensor<16xi64>
  %r = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%x, %undefined : tensor<16xi64>, tensor<16xi64>) outs(%e : tensor<16xi64>) {
  ^bb0(%a: i64, %u: i64, %o: i64):
    %m = arith.maxsi %a, %u : i64
    linalg.yield %m : i64
  } -> tensor<16xi64>
  return %r : tensor<16xi64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A slice of a dynamically shaped argument at an offset known only at run time (dynamic
// shapes: x[start : start + rows, 1:]): the offset, start * size(x, 1) + 1, is computed
// once at kernel entry and added to the row-major offsets of the slice's elements.
// CHECK-LABEL: func.func @kernel$dynamic_slice
// CHECK-SAME:    (%[[X:.*]]: !tl.ptr<f32>, %[[START:.*]]: index, %{{.*}}: index, %{{.*}}: !tl.ptr<f32>, %{{.*}}: index, %[[COLS:.*]]: index, %{{.*}}: index)
// CHECK:         %[[ROWOFF:.*]] = arith.muli %[[START]], %[[COLS]] : index
// CHECK:         %[[BASE:.*]] = arith.addi %[[ROWOFF]], %{{.*}} : index
// CHECK:         scf.for
// CHECK:           %[[SHIFT:.*]] = tl.splat %[[BASE]] : index -> tensor<?x?xindex>
// CHECK:           %[[OFF:.*]] = arith.addi %{{.*}}, %[[SHIFT]] : tensor<?x?xindex>
// CHECK:           tl.load %[[X]][%[[OFF]]] mask
func.func @kernel$dynamic_slice(%x: tensor<?x?xf32>, %start: index, %rows: index) -> tensor<?xf32> {
  %c1 = arith.constant 1 : index
  %cols = tensor.dim %x, %c1 : tensor<?x?xf32>
  %width = arith.subi %cols, %c1 : index
  %s = tensor.extract_slice %x[%start, 1] [%rows, %width] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%rows) : tensor<?xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sum = arith.addf %a, %o : f32
    linalg.yield %sum : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A float sum over rows of symbolic length (not blocked by dyno-block-long-sums on this
// target): lanes sum stretches of 16 RBLOCK chunks, each stretch's lanes are combined
// by tl.reduce, and the stretches' sums accumulate in f64, rounded once at the end.
// CHECK-LABEL: func.func @kernel$dynamic_row_sum
// CHECK-SAME:    (%[[X:.*]]: !tl.ptr<f32>, %[[OUT:.*]]: !tl.ptr<f32>, %[[N:.*]]: index)
// CHECK:         %[[TOTAL0:.*]] = tl.full %{{.*}} ["XBLOCK", "1"] : f64 -> tensor<?x?xf64>
// CHECK:         %[[STEP:.*]] = tl.block_size "RBLOCK"
// CHECK:         %[[STRETCH:.*]] = arith.muli %[[STEP]], %{{.*}} : index
// CHECK:         %[[TOTAL:.*]] = scf.for %[[BEGIN:.*]] = %{{.*}} to %[[N]] step %[[STRETCH]] iter_args(%[[T:.*]] = %[[TOTAL0]]) -> (tensor<?x?xf64>) {
// CHECK:           %[[NEXT:.*]] = arith.addi %[[BEGIN]], %[[STRETCH]] : index
// CHECK:           %[[END:.*]] = arith.minsi %[[NEXT]], %[[N]] : index
// CHECK:           %[[LANES:.*]] = scf.for %{{.*}} = %[[BEGIN]] to %[[END]] step %[[STEP]] iter_args(%[[L:.*]] = %{{.*}}) -> (tensor<?x?xf32>) {
// CHECK:             tl.load %[[X]]
// CHECK:             %[[ADD:.*]] = arith.addf %[[L]], %{{.*}} : tensor<?x?xf32>
// CHECK:             scf.yield %[[ADD]] : tensor<?x?xf32>
// CHECK:           %[[PART:.*]] = tl.reduce "sum" %[[LANES]] along 1 : tensor<?x?xf32>
// CHECK:           %[[WIDE:.*]] = arith.extf %[[PART]] : tensor<?x?xf32> to tensor<?x?xf64>
// CHECK:           %[[SUM:.*]] = arith.addf %[[T]], %[[WIDE]] : tensor<?x?xf64>
// CHECK:           scf.yield %[[SUM]] : tensor<?x?xf64>
// CHECK:         %[[R:.*]] = arith.truncf %[[TOTAL]] : tensor<?x?xf64> to tensor<?x?xf32>
// CHECK:         tl.store %[[R]], %[[OUT]]
func.func @kernel$dynamic_row_sum(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sum = arith.addf %a, %o : f32
    linalg.yield %sum : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
