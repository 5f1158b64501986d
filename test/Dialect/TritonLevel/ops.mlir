// RUN: dyno-opt %s | dyno-opt | FileCheck %s

// Every tl op round-trips through its printed form.
// CHECK-LABEL: func.func @tl.ops$round_trip
// CHECK-SAME:    (%[[IN:.*]]: !tl.ptr<f32>, %[[OUT:.*]]: !tl.ptr<f32>)
// CHECK:         %[[PID:.*]] = tl.program_id 0
// CHECK:         %[[XB:.*]] = tl.block_size "XBLOCK"
// CHECK:         %[[XS:.*]] = tl.range "XBLOCK" along 0 : tensor<?x?xindex>
// CHECK:         %[[RS:.*]] = tl.range "RBLOCK" along 1 : tensor<?x?xindex>
// CHECK:         tl.splat %{{.*}} : index -> tensor<?x?xindex>
// CHECK:         %[[V:.*]] = tl.load %[[IN]][%{{.*}}] mask %{{.*}} : !tl.ptr<f32>, tensor<?x?xindex>, tensor<?x?xi1> -> tensor<?x?xf32>
// CHECK:         tl.load %[[IN]][%{{.*}}] : !tl.ptr<f32>, index -> f32
// CHECK:         tl.full %{{.*}} ["XBLOCK", "RBLOCK"] : f32 -> tensor<?x?xf32>
// CHECK:         %[[S:.*]] = tl.reduce "sum" %[[V]] along 1 : tensor<?x?xf32>
// CHECK:         tl.store %[[S]], %[[OUT]][%{{.*}}] mask %{{.*}} : tensor<?x?xf32>, !tl.ptr<f32>, tensor<?x?xindex>, tensor<?x?xi1>
func.func @tl.ops$round_trip(%in: !tl.ptr<f32>, %out: !tl.ptr<f32>) attributes {
    tl.configs = [{XBLOCK = 2 : i64, RBLOCK = 64 : i64, num_warps = 1 : i64}],
    tl.xnumel = 8 : i64, tl.rnumel = 64 : i64, tl.index_bits = 32 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %pid = tl.program_id 0
  %xblock = tl.block_size "XBLOCK"
  %xs = tl.range "XBLOCK" along 0 : tensor<?x?xindex>
  %rs = tl.range "RBLOCK" along 1 : tensor<?x?xindex>
  %base = arith.muli %pid, %xblock : index
  %base_block = tl.splat %base : index -> tensor<?x?xindex>
  %rows = arith.addi %base_block, %xs : tensor<?x?xindex>
  %width = tl.splat %c64 : index -> tensor<?x?xindex>
  %row_offsets = arith.muli %rows, %width : tensor<?x?xindex>
  %offsets = arith.addi %row_offsets, %rs : tensor<?x?xindex>
  %mask = arith.cmpi slt, %rs, %width : tensor<?x?xindex>
  %v = tl.load %in[%offsets] mask %mask : !tl.ptr<f32>, tensor<?x?xindex>, tensor<?x?xi1> -> tensor<?x?xf32>
  %first = tl.load %in[%c0] : !tl.ptr<f32>, index -> f32
  %acc = tl.full %first ["XBLOCK", "RBLOCK"] : f32 -> tensor<?x?xf32>
  %sum = tl.reduce "sum" %v along 1 : tensor<?x?xf32>
  %xmask = arith.cmpi slt, %rows, %width : tensor<?x?xindex>
  tl.store %sum, %out[%rows] mask %xmask : tensor<?x?xf32>, !tl.ptr<f32>, tensor<?x?xindex>, tensor<?x?xi1>
  return
}

// CHECK-LABEL: func.func @tl.ops$scan_sort_atomic
// CHECK:         tl.scan "prod" %{{.*}} along 1 : tensor<?x?xf64>
// CHECK:         tl.sort %{{.*}} along 1 : tensor<?x?xi64>
// CHECK:         tl.atomic "add" %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<?x?xf32>, !tl.ptr<f32>, tensor<?x?xindex>, tensor<?x?xi1>
func.func @tl.ops$scan_sort_atomic(%out: !tl.ptr<f32>, %v: tensor<?x?xf64>, %k: tensor<?x?xi64>,
                                   %x: tensor<?x?xf32>, %o: tensor<?x?xindex>, %m: tensor<?x?xi1>) {
  %s = tl.scan "prod" %v along 1 : tensor<?x?xf64>
  %t = tl.sort %k along 1 : tensor<?x?xi64>
  tl.atomic "add" %x, %out[%o] mask %m : tensor<?x?xf32>, !tl.ptr<f32>, tensor<?x?xindex>, tensor<?x?xi1>
  return
}

// CHECK-LABEL: func.func @tl.any$round_trip
// CHECK:         %{{.*}} = tl.any %{{.*}} : tensor<?xi1>
func.func @tl.any$round_trip(%mask: tensor<?xi1>) -> i1 {
  %any = tl.any %mask : tensor<?xi1>
  return %any : i1
}

// CHECK-LABEL: func.func @tl.scan$combine
// CHECK:         tl.scan "combine" %{{.*}} along 1 {
// CHECK:           arith.maximumf
// CHECK:           tl.yield %{{.*}} : f32
// CHECK:         } : tensor<?x?xf32>
func.func @tl.scan$combine(%v: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %m = tl.scan "combine" %v along 1 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %b : f32
    tl.yield %r : f32
  } : tensor<?x?xf32>
  return %m : tensor<?x?xf32>
}
