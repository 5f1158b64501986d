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

// -----

// A value that is a bf16 already (a ReLU or a maximum of widened bf16 values, a
// selection among them and constants bf16 represents) narrows by taking its upper 16
// bits: no rounding. A sum rounds; so does a selection with a constant bf16 cannot
// represent (0.1), or with a value of unknown origin (an argument).
// CHECK-LABEL: func.func @exact_values
// CHECK: %[[RELU:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[RBITS:.*]] = arith.bitcast %[[RELU]] : f32 to i32
// CHECK: %[[RUPPER:.*]] = arith.shrui %[[RBITS]], %{{.*}} : i32
// CHECK-NEXT: %[[RNARROW:.*]] = arith.trunci %[[RUPPER]] : i32 to i16
// CHECK-NEXT: arith.bitcast %[[RNARROW]] : i16 to bf16
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[MAX]]
// CHECK-NEXT: %[[MBITS:.*]] = arith.bitcast %[[NEG]] : f32 to i32
// CHECK: %[[MUPPER:.*]] = arith.shrui %[[MBITS]], %{{.*}} : i32
// CHECK-NEXT: %[[MNARROW:.*]] = arith.trunci %[[MUPPER]] : i32 to i16
// CHECK-NEXT: arith.bitcast %[[MNARROW]] : i16 to bf16
// CHECK-NEXT: arith.addf
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : i16
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : i16
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : i16
func.func @exact_values(%b: bf16, %c: bf16, %f: f32, %p: i1) -> (bf16, bf16, bf16, bf16, bf16) {
  %zero = arith.constant 0.0 : f32
  %tenth = arith.constant 0.1 : f32
  %x = arith.extf %b : bf16 to f32
  %y = arith.extf %c : bf16 to f32
  %gt = arith.cmpf ugt, %x, %zero : f32
  %relu = arith.select %gt, %x, %zero : f32
  %0 = arith.truncf %relu : f32 to bf16
  %max = arith.maximumf %x, %y : f32
  %neg = arith.negf %max : f32
  %1 = arith.truncf %neg : f32 to bf16
  %sum = arith.addf %x, %y : f32
  %2 = arith.truncf %sum : f32 to bf16
  %inexact = arith.select %p, %x, %tenth : f32
  %3 = arith.truncf %inexact : f32 to bf16
  %unknown = arith.select %p, %x, %f : f32
  %4 = arith.truncf %unknown : f32 to bf16
  return %0, %1, %2, %3, %4 : bf16, bf16, bf16, bf16, bf16
}
