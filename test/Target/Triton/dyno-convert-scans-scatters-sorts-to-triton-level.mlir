// RUN: dyno-opt %s -split-input-file --dyno-convert-scans-scatters-sorts-to-triton-level | FileCheck %s

// cumsum along the rows of a 3x10 tensor: a block of lines, each whole in RBLOCK lanes,
// scanned in f64 (eager's CPU accumulator) and rounded back.
// CHECK-LABEL: func.func @scan_rows(
// CHECK-SAME:      %[[IN:.*]]: !tl.ptr<f32>, %[[OUT:.*]]: !tl.ptr<f32>)
// CHECK-SAME:      tl.configs = [{RBLOCK = 16 : i64, XBLOCK = 4 : i64
// CHECK-SAME:      tl.rnumel = 10 : i64, tl.xnumel = 3 : i64
// CHECK:         tl.range "XBLOCK" along 0
// CHECK:         tl.range "RBLOCK" along 1
// CHECK:         %[[V:.*]] = tl.load %[[IN]][%[[OFF:.*]]] mask %[[M:.*]] :
// CHECK:         %[[W:.*]] = arith.extf %[[V]] : tensor<?x?xf32> to tensor<?x?xf64>
// CHECK:         %[[S:.*]] = tl.scan "sum" %[[W]] along 1 : tensor<?x?xf64>
// CHECK:         %[[R:.*]] = arith.truncf %[[S]]
// CHECK:         tl.store %[[R]], %[[OUT]][%[[OFF]]] mask %[[M]]
func.func @scan_rows(%x: tensor<3x10xf32>) -> tensor<3x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x10xf32>
  %a = tensor.empty() : tensor<3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%a : tensor<3xf32>) -> tensor<3xf32>
  %r:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<3x10xf32>)
      outs(%e, %acc : tensor<3x10xf32>, tensor<3xf32>) {
  ^bb0(%p: f32, %i: f32):
    %s = arith.addf %p, %i : f32
    dyno.yield %s : f32
  } -> tensor<3x10xf32>, tensor<3xf32>
  return %r#0 : tensor<3x10xf32>
}

// -----

// An integer product along dimension 0: lines are 4 apart; no widening.
// CHECK-LABEL: func.func @scan_columns(
// CHECK:         %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:         arith.muli %{{.*}}, %{{.*}} : tensor<?x?xindex>
// CHECK-NOT:     arith.extsi
// CHECK:         tl.scan "prod" %{{.*}} along 1 : tensor<?x?xi32>
func.func @scan_columns(%x: tensor<5x4xi32>) -> tensor<5x4xi32> {
  %one = arith.constant 1 : i32
  %e = tensor.empty() : tensor<5x4xi32>
  %a = tensor.empty() : tensor<4xi32>
  %acc = linalg.fill ins(%one : i32) outs(%a : tensor<4xi32>) -> tensor<4xi32>
  %r:2 = dyno.scan dimension(0) inclusive(true) ins(%x : tensor<5x4xi32>)
      outs(%e, %acc : tensor<5x4xi32>, tensor<4xi32>) {
  ^bb0(%p: i32, %i: i32):
    %s = arith.muli %p, %i : i32
    dyno.yield %s : i32
  } -> tensor<5x4xi32>, tensor<4xi32>
  return %r#0 : tensor<5x4xi32>
}

// -----

// A descending float sort with its indices: keys are the values' ordered bits (NaN
// canonical, -0.0 as +0.0, negative values' magnitude flipped), inverted for descending,
// shifted above the position; both outputs are gathered from the sorted positions.
// CHECK-LABEL: func.func @sort_descending(
// CHECK-SAME:      %[[V:.*]]: !tl.ptr<f32>, %[[I:.*]]: !tl.ptr<i64>, %[[OV:.*]]: !tl.ptr<f32>, %[[OI:.*]]: !tl.ptr<i64>)
// CHECK:         %[[X:.*]] = tl.load %[[V]]
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[X]] : tensor<?x?xf32> to tensor<?x?xi32>
// CHECK:         %[[ISNAN:.*]] = arith.cmpf uno, %[[X]], %[[X]]
// CHECK:         %[[ISZERO:.*]] = arith.cmpf oeq, %[[X]]
// CHECK:         arith.constant 2143289344 : i32
// CHECK:         %[[CANON:.*]] = arith.select %[[ISNAN]], %{{.*}}, %[[BITS]]
// CHECK:         %[[NOZERO:.*]] = arith.select %[[ISZERO]], %{{.*}}, %[[CANON]]
// CHECK:         arith.constant 2147483647 : i32
// CHECK:         %[[FLIPPED:.*]] = arith.xori %[[NOZERO]]
// CHECK:         %[[ORDERED:.*]] = arith.select %{{.*}}, %[[FLIPPED]], %[[NOZERO]]
// CHECK:         %[[WIDE:.*]] = arith.extsi %[[ORDERED]] : tensor<?x?xi32> to tensor<?x?xi64>
// CHECK:         arith.constant -1 : i64
// CHECK:         %[[INV:.*]] = arith.xori %[[WIDE]]
// CHECK:         %[[POS:.*]] = arith.index_cast %{{.*}} : tensor<?x?xindex> to tensor<?x?xi64>
// CHECK:         arith.constant 32 : i64
// CHECK:         %[[HIGH:.*]] = arith.shli %[[INV]]
// CHECK:         %[[KEY:.*]] = arith.ori %[[HIGH]], %[[POS]]
// CHECK:         arith.constant 9223372036854775807 : i64
// CHECK:         %[[PADDED:.*]] = arith.select %{{.*}}, %[[KEY]], %{{.*}}
// CHECK:         %[[SORTED:.*]] = tl.sort %[[PADDED]] along 1 : tensor<?x?xi64>
// CHECK:         arith.andi %[[SORTED]]
// CHECK:         %[[GV:.*]] = tl.load %[[V]]
// CHECK:         tl.store %[[GV]], %[[OV]]
// CHECK:         %[[GI:.*]] = tl.load %[[I]]
// CHECK:         tl.store %[[GI]], %[[OI]]
func.func @sort_descending(%v: tensor<2x7xf32>, %i: tensor<2x7xi64>) -> (tensor<2x7xf32>, tensor<2x7xi64>) {
  %r:2 = dyno.sort dimension(1) outs(%v, %i : tensor<2x7xf32>, tensor<2x7xi64>) {
  ^bb0(%a: f32, %b: f32, %ia: i64, %ib: i64):
    %ge = arith.cmpf oge, %a, %b : f32
    dyno.yield %ge : i1
  } -> tensor<2x7xf32>, tensor<2x7xi64>
  return %r#0, %r#1 : tensor<2x7xf32>, tensor<2x7xi64>
}

// -----

// scatter_add: one lane per update element; repeated indices add atomically. The
// original's pointer is passed (the launch starts the result as its copy) but not read.
// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME:      %[[U:.*]]: !tl.ptr<f32>, %[[IDX:.*]]: !tl.ptr<i64>, %{{.*}}: !tl.ptr<f32>, %[[OUT:.*]]: !tl.ptr<f32>)
// One configuration only: the autotuner would run it twice on the same result, which
// would add the updates twice.
// CHECK-SAME:      tl.configs = [{XBLOCK = 8 : i64, num_warps = 1 : i64}]
// CHECK-SAME:      tl.xnumel = 8 : i64
// CHECK:         %[[X:.*]] = tl.load %[[U]]
// CHECK:         %[[K:.*]] = tl.load %[[IDX]]
// CHECK:         arith.index_cast %[[K]] : tensor<?xi64> to tensor<?xindex>
// CHECK:         tl.atomic "add" %[[X]], %[[OUT]][%{{.*}}] mask %{{.*}} : tensor<?xf32>
func.func @scatter_add(%u: tensor<4x2xf32>, %idx: tensor<4x1xi64>, %orig: tensor<6x2xf32>) -> tensor<6x2xf32> {
  %r = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %idx : tensor<4x2xf32>, tensor<4x1xi64>) outs(%orig : tensor<6x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    dyno.yield %s : f32
  } -> tensor<6x2xf32>
  return %r : tensor<6x2xf32>
}

// -----

// Float maxima and minima at repeated indices (scatter_reduce amax/amin): Triton's
// float atomics, with NaN kept: a NaN update becomes the NaN that wins in the atomic's
// bit order (+NaN for max, -NaN for min), and a lane whose element is already NaN skips.
// CHECK-LABEL: func.func @scatter_float_max(
// CHECK-SAME:      %[[U:.*]]: !tl.ptr<f32>, %{{.*}}: !tl.ptr<i64>, %{{.*}}: !tl.ptr<f32>, %[[OUT:.*]]: !tl.ptr<f32>)
// CHECK:         %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:         %[[ISNAN:.*]] = arith.cmpf uno, %[[X:.*]], %[[X]] : tensor<?xf32>
// CHECK:         %[[V:.*]] = arith.select %[[ISNAN]], %{{.*}}, %[[X]]
// CHECK:         %[[CUR:.*]] = tl.load %[[OUT]][%[[AT:.*]]] mask %[[M:.*]] :
// CHECK:         %[[NUM:.*]] = arith.cmpf ord, %[[CUR]], %[[CUR]]
// CHECK:         %[[M2:.*]] = arith.andi %[[M]], %[[NUM]]
// CHECK:         tl.atomic "max" %[[V]], %[[OUT]][%[[AT]]] mask %[[M2]] : tensor<?xf32>
func.func @scatter_float_max(%u: tensor<4xf32>, %idx: tensor<4x1xi64>, %orig: tensor<6xf32>) -> tensor<6xf32> {
  %r = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %idx : tensor<4xf32>, tensor<4x1xi64>) outs(%orig : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    dyno.yield %m : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}
// CHECK-LABEL: func.func @scatter_float_min(
// CHECK:         arith.constant 0xFFF8000000000000 : f64
// CHECK:         tl.atomic "min" %{{.*}} : tensor<?xf64>
func.func @scatter_float_min(%u: tensor<4xf64>, %idx: tensor<4x1xi64>, %orig: tensor<6xf64>) -> tensor<6xf64> {
  %r = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %idx : tensor<4xf64>, tensor<4x1xi64>) outs(%orig : tensor<6xf64>) {
  ^bb0(%a: f64, %o: f64):
    %m = arith.minimumf %a, %o : f64
    dyno.yield %m : f64
  } -> tensor<6xf64>
  return %r : tensor<6xf64>
}

// Counting (scatter_reduce's mean): the update is not read, the constant is added.
// CHECK-LABEL: func.func @scatter_count(
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         tl.atomic "add" %{{.*}}, %{{.*}}[%{{.*}}] mask
func.func @scatter_count(%u: tensor<4xf32>, %idx: tensor<4x1xi64>, %orig: tensor<6xf32>) -> tensor<6xf32> {
  %one = arith.constant 1.0 : f32
  %r = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %idx : tensor<4xf32>, tensor<4x1xi64>) outs(%orig : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %one : f32
    dyno.yield %s : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// An overwriting scatter stores; a scatter with unique indices reads, combines, writes.
// CHECK-LABEL: func.func @scatter_overwrite(
// CHECK:         tl.store
// CHECK-NOT:     tl.atomic
// CHECK-LABEL: func.func @scatter_unique_product(
// CHECK-SAME:      %{{.*}}: !tl.ptr<f32>, %{{.*}}: !tl.ptr<i64>, %{{.*}}: !tl.ptr<f32>, %[[OUT:.*]]: !tl.ptr<f32>)
// CHECK:         %[[CUR:.*]] = tl.load %[[OUT]][%[[AT:.*]]] mask
// CHECK:         %[[P:.*]] = arith.mulf %[[CUR]], %{{.*}} : tensor<?xf32>
// CHECK:         tl.store %[[P]], %[[OUT]][%[[AT]]]
func.func @scatter_overwrite(%u: tensor<4xf32>, %idx: tensor<4x1xi64>, %orig: tensor<6xf32>) -> tensor<6xf32> {
  %r = dyno.scatter dimension_map([0]) unique_indices(false) ins(%u, %idx : tensor<4xf32>, tensor<4x1xi64>) outs(%orig : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    dyno.yield %a : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}
func.func @scatter_unique_product(%u: tensor<4xf32>, %idx: tensor<4x1xi64>, %orig: tensor<6xf32>) -> tensor<6xf32> {
  %r = dyno.scatter dimension_map([0]) unique_indices(true) ins(%u, %idx : tensor<4xf32>, tensor<4x1xi64>) outs(%orig : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %o, %a : f32
    dyno.yield %p : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// Lines longer than one program holds (16384) are scanned chunk by chunk: one line per
// program (XBLOCK 1), a loop over RBLOCK chunks carrying the line's last value so far in
// f64; the first chunk takes no carry; the next carry is the chunk's last lane, picked
// by a NaN-propagating max over it and -inf lanes (exact, -0.0 kept); the accumulator is
// stored from the line's last element.
// CHECK-LABEL: func.func @scan_long_rows(
// CHECK-SAME:      %[[IN:.*]]: !tl.ptr<f32>, %[[OUT:.*]]: !tl.ptr<f32>, %[[ACC:.*]]: !tl.ptr<f32>)
// CHECK-SAME:      tl.configs = [{RBLOCK = 1024 : i64, XBLOCK = 1 : i64
// CHECK-SAME:      tl.rnumel = 40000 : i64, tl.xnumel = 2 : i64
// CHECK:         %[[ZERO:.*]] = tl.full %{{.*}} ["XBLOCK", "1"] : f64 -> tensor<?x?xf64>
// CHECK:         %[[STEP:.*]] = tl.block_size "RBLOCK"
// CHECK:         scf.for %[[START:.*]] = %{{.*}} to %c40000{{.*}} step %[[STEP]] iter_args(%[[CARRY:.*]] = %[[ZERO]]) -> (tensor<?x?xf64>) {
// CHECK:           %[[LANE:.*]] = tl.range "RBLOCK" along 1
// CHECK:           %[[R:.*]] = arith.addi %[[LANE]], %{{.*}} : tensor<?x?xindex>
// CHECK:           %[[V:.*]] = tl.load %[[IN]][%[[OFF:.*]]] mask %[[M:.*]] :
// CHECK:           %[[W:.*]] = arith.extf %[[V]] : tensor<?x?xf32> to tensor<?x?xf64>
// CHECK:           %[[S:.*]] = tl.scan "sum" %[[W]] along 1 : tensor<?x?xf64>
// CHECK:           %[[C:.*]] = arith.addf %[[CARRY]], %[[S]] : tensor<?x?xf64>
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[START]], %{{.*}} : index
// CHECK:           %[[LINE:.*]] = arith.select %[[FIRST]], %[[S]], %[[C]] : tensor<?x?xf64>
// CHECK:           %[[LAST:.*]] = arith.cmpi eq, %[[R]], %{{.*}} : tensor<?x?xindex>
// CHECK:           %[[PICK:.*]] = arith.select %[[LAST]], %[[LINE]], %{{.*}} : tensor<?x?xi1>, tensor<?x?xf64>
// CHECK:           %[[NEXT:.*]] = tl.reduce "max" %[[PICK]] along 1 : tensor<?x?xf64>
// CHECK:           %[[T:.*]] = arith.truncf %[[LINE]] : tensor<?x?xf64> to tensor<?x?xf32>
// CHECK:           tl.store %[[T]], %[[OUT]][%[[OFF]]] mask %[[M]]
// CHECK:           tl.store %[[T]], %[[ACC]]
// CHECK:           scf.yield %[[NEXT]] : tensor<?x?xf64>
func.func @scan_long_rows(%x: tensor<2x40000xf32>) -> (tensor<2x40000xf32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x40000xf32>
  %a = tensor.empty() : tensor<2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%a : tensor<2xf32>) -> tensor<2xf32>
  %r:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<2x40000xf32>)
      outs(%e, %acc : tensor<2x40000xf32>, tensor<2xf32>) {
  ^bb0(%p: f32, %i: f32):
    %s = arith.addf %p, %i : f32
    dyno.yield %s : f32
  } -> tensor<2x40000xf32>, tensor<2xf32>
  return %r#0, %r#1 : tensor<2x40000xf32>, tensor<2xf32>
}

// -----

// A combiner of its own (cummax's values) in a long line: the region is both the scan's
// combine function and, cloned on blocks, how a chunk combines with its carry.
// CHECK-LABEL: func.func @scan_long_combiner(
// CHECK:         scf.for
// CHECK:           tl.scan "combine"
// CHECK:             arith.maximumf %{{.*}} : f32
// CHECK:             tl.yield
// CHECK:           arith.maximumf %{{.*}} : tensor<?x?xf32>
// CHECK:           tl.reduce "max"
func.func @scan_long_combiner(%x: tensor<20000xf32>) -> tensor<20000xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<20000xf32>
  %a = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%ninf : f32) outs(%a : tensor<f32>) -> tensor<f32>
  %r:2 = dyno.scan dimension(0) inclusive(true) ins(%x : tensor<20000xf32>)
      outs(%e, %acc : tensor<20000xf32>, tensor<f32>) {
  ^bb0(%p: f32, %i: f32):
    %m = arith.maximumf %p, %i : f32
    %n = arith.addf %m, %ninf : f32
    %k = arith.maximumf %m, %n : f32
    dyno.yield %k : f32
  } -> tensor<20000xf32>, tensor<f32>
  return %r#0 : tensor<20000xf32>
}

// -----

// Symbolic sizes: the kernel takes one index per dynamic size of its tensors after its
// own arguments (dyno.launch's ABI); the line count's size argument sets the grid
// (tl.xnumel_args), the symbolic length bounds the chunk loop, and offsets are 64-bit.
// CHECK-LABEL: func.func @scan_symbolic_sizes(
// CHECK-SAME:      %[[IN:.*]]: !tl.ptr<f32>, %{{.*}}: index, %{{.*}}: index, %[[OUT:.*]]: !tl.ptr<f32>, %[[ROWS:.*]]: index, %[[LEN:.*]]: index, %{{.*}}: index, %{{.*}}: index)
// CHECK-SAME:      tl.index_bits = 64
// CHECK-SAME:      tl.rnumel = -1 : i64, tl.xnumel = 1 : i64, tl.xnumel_args = array<i64: 4>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args(
// CHECK:           tl.scan "sum"
// CHECK:           tl.store %{{.*}}, %[[OUT]]
func.func @scan_symbolic_sizes(%x: tensor<?x?xf32>, %rows: index, %length: index) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%rows, %length) : tensor<?x?xf32>
  %a = tensor.empty(%rows) : tensor<?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%a : tensor<?xf32>) -> tensor<?xf32>
  %r:2 = dyno.scan dimension(1) inclusive(true) ins(%x : tensor<?x?xf32>)
      outs(%e, %acc : tensor<?x?xf32>, tensor<?xf32>) {
  ^bb0(%p: f32, %i: f32):
    %s = arith.addf %p, %i : f32
    dyno.yield %s : f32
  } -> tensor<?x?xf32>, tensor<?xf32>
  return %r#0 : tensor<?x?xf32>
}
