// RUN: dyno-opt %s --split-input-file --dyno-expand-bf16-conversions | FileCheck %s

// f32 -> bf16 rounds to nearest even in integer arithmetic; a NaN keeps its upper bits,
// quieted. bf16 -> f32 is the 16-bit shift.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[LOW:.*]] = arith.shrui %[[BITS]], %[[C16:.*]] : i32
// CHECK: %[[ODD:.*]] = arith.andi %[[LOW]], %{{.*}} : i32
// CHECK: %[[BIAS:.*]] = arith.addi %[[ODD]], %{{.*}} : i32
// CHECK: %[[SUM:.*]] = arith.addi %[[BITS]], %[[BIAS]] : i32
// CHECK: %[[ROUNDED:.*]] = arith.shrui %[[SUM]], %[[C16]] : i32
// CHECK: %[[NARROW:.*]] = arith.trunci %[[ROUNDED]] : i32 to i16
// CHECK: %[[QUIET:.*]] = arith.ori %{{.*}}, %{{.*}} : i16
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %{{.*}}, %{{.*}} : f32
// CHECK: %[[CHOSEN:.*]] = arith.select %[[NAN]], %[[QUIET]], %[[NARROW]] : i16
// CHECK: %[[B:.*]] = arith.bitcast %[[CHOSEN]] : i16 to bf16
// CHECK: %[[H:.*]] = arith.bitcast %{{.*}} : bf16 to i16
// CHECK: %[[W:.*]] = arith.extui %[[H]] : i16 to i32
// CHECK: %[[S:.*]] = arith.shli %[[W]], %{{.*}} : i32
// CHECK: %[[F:.*]] = arith.bitcast %[[S]] : i32 to f32
// CHECK: return %[[B]], %[[F]]
func.func @scalar(%x: f32, %b: bf16) -> (bf16, f32) {
  %0 = arith.truncf %x : f32 to bf16
  %1 = arith.extf %b : bf16 to f32
  return %0, %1 : bf16, f32
}

// -----

// Vectors convert element by element, with splat constants.
// CHECK-LABEL: func.func @vector
// CHECK: arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.constant dense<16> : vector<8xi32>
// CHECK: arith.select %{{.*}} : vector<8xi1>, vector<8xi16>
// CHECK: arith.bitcast %{{.*}} : vector<8xi16> to vector<8xbf16>
func.func @vector(%x: vector<8xf32>) -> vector<8xbf16> {
  %0 = arith.truncf %x : vector<8xf32> to vector<8xbf16>
  return %0 : vector<8xbf16>
}

// -----

// f16 conversions stay (their hardware conversions keep subnormals).
// CHECK-LABEL: func.func @others
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: arith.bitcast
func.func @others(%x: f32) -> f16 {
  %0 = arith.truncf %x : f32 to f16
  return %0 : f16
}

// -----

// f64 -> bf16 rounds to f32, then to bf16, as eager's static_cast<BFloat16>(double)
// does, with no f64 -> bf16 conversion left for LLVM (a libgcc call GCC 12 lacks).
// bf16 -> f64 widens to f32 exactly, then extends.
// CHECK-LABEL: func.func @f64
// CHECK: %[[NEAR:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.bitcast %[[NEAR]] : f32 to i32
// CHECK: %[[B:.*]] = arith.bitcast %{{.*}} : i16 to bf16
// CHECK: %[[S:.*]] = arith.shli %{{.*}}, %{{.*}} : i32
// CHECK: %[[W:.*]] = arith.bitcast %[[S]] : i32 to f32
// CHECK: %[[E:.*]] = arith.extf %[[W]] : f32 to f64
// CHECK-NOT: arith.truncf %{{.*}} to bf16
// CHECK-NOT: arith.extf %{{.*}} : bf16
// CHECK: return %[[B]], %[[E]]
func.func @f64(%d: f64, %b: bf16) -> (bf16, f64) {
  %0 = arith.truncf %d : f64 to bf16
  %1 = arith.extf %b : bf16 to f64
  return %0, %1 : bf16, f64
}
