// RUN: dyno-opt %s -split-input-file -verify-diagnostics

func.func @tl.block_size$outside_kernel() {
  // expected-error @+1 {{must be inside a kernel with a 'tl.configs' attribute}}
  %x = tl.block_size "XBLOCK"
  return
}

// -----

func.func @tl.block_size$unknown_name() attributes {tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}]} {
  // expected-error @+1 {{names block size 'RBLOCK', which the kernel's tl.configs does not define}}
  %x = tl.block_size "RBLOCK"
  return
}

// -----

func.func @tl.range$dim_out_of_range() attributes {tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}]} {
  // expected-error @+1 {{dimension 1 is out of range for a block of rank 1}}
  %x = tl.range "XBLOCK" along 1 : tensor<?xindex>
  return
}

// -----

func.func @tl.full$rank_mismatch(%v: f32) attributes {tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}]} {
  // expected-error @+1 {{has 1 block sizes for a block of rank 2}}
  %x = tl.full %v ["XBLOCK"] : f32 -> tensor<?x?xf32>
  return
}

// -----

func.func @tl.full$element_mismatch(%v: f32) attributes {tl.configs = [{XBLOCK = 4 : i64, num_warps = 1 : i64}]} {
  // expected-error @+1 {{fills a block of 'i32' with a 'f32'}}
  %x = tl.full %v ["XBLOCK"] : f32 -> tensor<?xi32>
  return
}

// -----

func.func @tl.splat$element_mismatch(%v: f32) {
  // expected-error @+1 {{splats a 'f32' into a block of 'f16'}}
  %x = tl.splat %v : f32 -> tensor<?xf16>
  return
}

// -----

func.func @tl.load$element_mismatch(%p: !tl.ptr<f32>, %o: tensor<?xindex>) {
  // expected-error @+1 {{loads 'f16' through a pointer to 'f32'}}
  %x = tl.load %p[%o] : !tl.ptr<f32>, tensor<?xindex> -> tensor<?xf16>
  return
}

// -----

func.func @tl.load$block_from_scalar_offset(%p: !tl.ptr<f32>, %o: index) {
  // expected-error @+1 {{result must be a block exactly when the offsets are a block}}
  %x = tl.load %p[%o] : !tl.ptr<f32>, index -> tensor<?xf32>
  return
}

// -----

func.func @tl.load$rank_mismatch(%p: !tl.ptr<f32>, %o: tensor<?xindex>) {
  // expected-error @+1 {{result rank differs from the offsets' rank}}
  %x = tl.load %p[%o] : !tl.ptr<f32>, tensor<?xindex> -> tensor<?x?xf32>
  return
}

// -----

func.func @tl.load$mask_rank(%p: !tl.ptr<f32>, %o: tensor<?xindex>, %m: tensor<?x?xi1>) {
  // expected-error @+1 {{has a mask whose rank differs from the offsets'}}
  %x = tl.load %p[%o] mask %m : !tl.ptr<f32>, tensor<?xindex>, tensor<?x?xi1> -> tensor<?xf32>
  return
}

// -----

func.func @tl.store$element_mismatch(%p: !tl.ptr<f32>, %o: tensor<?xindex>, %v: tensor<?xi32>) {
  // expected-error @+1 {{stores 'i32' through a pointer to 'f32'}}
  tl.store %v, %p[%o] : tensor<?xi32>, !tl.ptr<f32>, tensor<?xindex>
  return
}

// -----

func.func @tl.store$block_to_scalar_offset(%p: !tl.ptr<f32>, %o: index, %v: tensor<?xf32>) {
  // expected-error @+1 {{stores a block to a scalar offset}}
  tl.store %v, %p[%o] : tensor<?xf32>, !tl.ptr<f32>, index
  return
}

// -----

func.func @tl.store$mask_with_scalar_offset(%p: !tl.ptr<f32>, %o: index, %v: f32, %m: tensor<?xi1>) {
  // expected-error @+1 {{has a mask but a scalar offset}}
  tl.store %v, %p[%o] mask %m : f32, !tl.ptr<f32>, index, tensor<?xi1>
  return
}

// -----

func.func @tl.reduce$axis_out_of_range(%v: tensor<?x?xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a block of rank 2}}
  %x = tl.reduce "sum" %v along 2 : tensor<?x?xf32>
  return
}

// -----

func.func @tl.reduce$kind_for_type(%v: tensor<?x?xi32>) {
  // expected-error @+1 {{reduction kind 'max' is not defined for 'i32'}}
  %x = tl.reduce "max" %v along 1 : tensor<?x?xi32>
  return
}

// -----

func.func @tl.scan$kind(%v: tensor<?x?xf32>) {
  // expected-error @+1 {{scan kind 'max' is none of 'sum', 'prod', 'maxsi', 'minsi' and 'combine'}}
  %x = tl.scan "max" %v along 1 : tensor<?x?xf32>
  return
}

// -----

func.func @tl.scan$combine_without_region(%v: tensor<?x?xf32>) {
  // expected-error @+1 {{kind 'combine' needs a combiner of one block with two 'f32' arguments}}
  %x = tl.scan "combine" %v along 1 : tensor<?x?xf32>
  return
}

// -----

func.func @tl.scan$region_on_sum(%v: tensor<?x?xf32>) {
  // expected-error @+1 {{has a combiner region, which only kind 'combine' takes}}
  %x = tl.scan "sum" %v along 1 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tl.yield %r : f32
  } : tensor<?x?xf32>
  return
}

// -----

// A combiner whose block does not end in its terminator (fuzzing found the verifier
// asking such a block for its terminator: an assertion, where bad input needs a
// diagnostic).
func.func @tl.scan$combiner_not_ending_in_yield(%v: tensor<?x?xf32>) {
  // expected-error @+1 {{combiner must end in a tl.yield of one 'f32'}}
  %x = tl.scan "combine" %v along 1 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %b : f32
  } : tensor<?x?xf32>
  return
}

// -----

func.func @tl.sort$float_keys(%v: tensor<?x?xf32>) {
  // expected-error @+1 {{sorts 'f32'; keys must be integers}}
  %x = tl.sort %v along 1 : tensor<?x?xf32>
  return
}

// -----

func.func @tl.sort$axis(%v: tensor<?xi64>) {
  // expected-error @+1 {{axis 1 is out of range for a block of rank 1}}
  %x = tl.sort %v along 1 : tensor<?xi64>
  return
}

// -----

func.func @tl.atomic$half_max(%p: !tl.ptr<f16>, %o: tensor<?xindex>, %v: tensor<?xf16>) {
  // expected-error @+1 {{atomic kind 'max' is not defined for 'f16'}}
  tl.atomic "max" %v, %p[%o] : tensor<?xf16>, !tl.ptr<f16>, tensor<?xindex>
  return
}

// -----

func.func @tl.atomic$element_type(%p: !tl.ptr<f32>, %o: tensor<?xindex>, %v: tensor<?xi32>) {
  // expected-error @+1 {{combines 'i32' into a pointer to 'f32'}}
  tl.atomic "add" %v, %p[%o] : tensor<?xi32>, !tl.ptr<f32>, tensor<?xindex>
  return
}

// -----

func.func @tl.pick_reduce$kind(%v: tensor<?x?xf32>, %p: tensor<?x?xi64>) {
  // expected-error @+1 {{pick kind 'sum' is neither 'max' nor 'min'}}
  %a, %b = tl.pick_reduce "sum" first %v, %p along 1 : tensor<?x?xf32>, tensor<?x?xi64>
  return
}

// -----

func.func @tl.pick_reduce$positions(%v: tensor<?x?xf32>, %p: tensor<?x?xi32>) {
  // expected-error @+1 {{positions must be i64, got 'i32'}}
  %a, %b = tl.pick_reduce "max" %v, %p along 1 : tensor<?x?xf32>, tensor<?x?xi32>
  return
}
