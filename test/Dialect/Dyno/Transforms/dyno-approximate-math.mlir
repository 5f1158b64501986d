// RUN: dyno-opt %s --dyno-approximate-math | FileCheck %s
// RUN: dyno-opt %s --dyno-approximate-math="ops=atan,log1p" | FileCheck %s --check-prefix=SELECTED
// RUN: dyno-opt %s --dyno-approximate-math="ops=log" | FileCheck %s --check-prefix=LOG

// erf is one rational function of x*x on x clamped to [-4, 4] (NaN stays NaN: the
// clamp compares and selects): no exp, no select between formulas, no libm call.
// CHECK-LABEL: func.func @math.erf$f32
// CHECK-NOT:     math.erf
// CHECK:         %[[ABOVE:.*]] = arith.cmpf ogt, %arg0, %[[FOUR:.*]] : f32
// CHECK:         %[[UPPER:.*]] = arith.select %[[ABOVE]], %[[FOUR]], %arg0
// CHECK:         %[[BELOW:.*]] = arith.cmpf olt, %[[UPPER]], %[[MINUS_FOUR:.*]] : f32
// CHECK:         %[[X:.*]] = arith.select %[[BELOW]], %[[MINUS_FOUR]], %[[UPPER]]
// CHECK:         %[[T:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-COUNT-6: math.fma %{{.*}}, %[[T]], %{{.*}}
// CHECK-COUNT-4: math.fma %{{.*}}, %[[T]], %{{.*}}
// CHECK:         %[[P:.*]] = arith.mulf %[[X]], %{{.*}}
// CHECK:         %[[ERF:.*]] = arith.divf %[[P]], %{{.*}}
// CHECK-NOT:     math.exp
// CHECK:         return %[[ERF]]
func.func @math.erf$f32(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}

// CHECK-LABEL: func.func @math.exp$vector
// CHECK-NOT:     math.exp
// CHECK:         arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
func.func @math.exp$vector(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// CHECK-LABEL: func.func @math.tanh$f32
// CHECK-NOT:     math.tanh
func.func @math.tanh$f32(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// f64 keeps the precise library function.
// CHECK-LABEL: func.func @math.erf$f64
// CHECK:         math.erf %arg0 : f64
func.func @math.erf$f64(%x: f64) -> f64 {
  %0 = math.erf %x : f64
  return %0 : f64
}

// `ops=` approximates only the named ops (the Triton target keeps exp and erf native).
// SELECTED-LABEL: func.func @math.ops$selected
// SELECTED-NOT:     math.atan
// SELECTED-NOT:     math.log1p
// SELECTED:         math.exp %arg0
// SELECTED:         math.erf %arg0
func.func @math.ops$selected(%x: f32) -> (f32, f32, f32, f32) {
  %0 = math.atan %x : f32
  %1 = math.log1p %x : f32
  %2 = math.exp %x : f32
  %3 = math.erf %x : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// Subnormal arguments of log are scaled into the normal range first (upstream's
// approximation reads the exponent field): one (approximated) log either way.
// LOG-LABEL: func.func @math.log$subnormals
// LOG:         %[[ABS:.*]] = math.absf %arg0
// LOG:         %[[SUB:.*]] = arith.cmpf olt, %[[ABS]], %{{.*}} : vector<8xf32>
// LOG:         %[[SCALED:.*]] = arith.mulf %arg0, %{{.*}} : vector<8xf32>
// LOG:         %[[ARG:.*]] = arith.select %[[SUB]], %[[SCALED]], %arg0
// LOG:         %[[SHIFT:.*]] = arith.select %[[SUB]]
// LOG-NOT:     math.log
// LOG:         %[[RESULT:.*]] = arith.subf %{{.*}}, %[[SHIFT]] : vector<8xf32>
// LOG:         return %[[RESULT]]
func.func @math.log$subnormals(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.log %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// float64 log1p and expm1 are not approximated, but expanded without cancellation
// (convert-math-to-llvm would compute log(1 + x) and exp(x) - 1).
// CHECK-LABEL: func.func @math.log1p_expm1$f64
// CHECK:         %[[U:.*]] = arith.addf %arg0, %[[ONE:.*]] : f64
// CHECK:         %[[LOGU:.*]] = math.log %[[U]] : f64
// CHECK:         %[[UM1:.*]] = arith.subf %[[U]], %[[ONE]] : f64
// CHECK:         %[[PRODUCT:.*]] = arith.mulf %[[LOGU]], %arg0 : f64
// CHECK:         %[[QUOTIENT:.*]] = arith.divf %[[PRODUCT]], %[[UM1]] : f64
// CHECK:         %[[LOG1P:.*]] = arith.select %{{.*}}, %arg0, %[[QUOTIENT]] : f64
// CHECK:         %[[E:.*]] = math.exp %arg0 : f64
// CHECK:         %[[EM1:.*]] = arith.subf %[[E]], %{{.*}} : f64
// CHECK:         %[[LOGE:.*]] = math.log %[[E]] : f64
// CHECK:         %[[LARGE:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f64
// CHECK:         %[[FAR:.*]] = arith.select %[[LARGE]], %[[EM1]], %{{.*}} : f64
// CHECK:         %[[IS1:.*]] = arith.cmpf oeq, %[[E]], %{{.*}} : f64
// CHECK:         %[[EXPM1:.*]] = arith.select %[[IS1]], %arg0, %[[FAR]] : f64
// CHECK:         return %[[LOG1P]], %[[EXPM1]]
func.func @math.log1p_expm1$f64(%x: f64) -> (f64, f64) {
  %0 = math.log1p %x : f64
  %1 = math.expm1 %x : f64
  return %0, %1 : f64, f64
}

// An exp whose argument is at most 0 or NaN (a softmax's exp(x - max), marked by
// dyno-relax-softmax-maximum): upstream's expansion without the upper clamps of x and
// k; the lower ones stay, unordered, so NaN propagates. An unmarked exp keeps all four.
// CHECK-LABEL: func.func @math.exp$nonpositive_argument
// CHECK-NOT:     math.exp
// CHECK:         %[[LOW:.*]] = arith.cmpf uge, %arg0, %{{.*}} : f32
// CHECK:         %[[X:.*]] = arith.select %[[LOW]], %arg0, %{{.*}} : f32
// CHECK-NOT:     arith.cmpf ule
// CHECK:         math.floor
// CHECK:         arith.cmpf uge
// CHECK-NOT:     arith.cmpf ule
// CHECK:         arith.shli
// CHECK:         %[[A:.*]] = arith.mulf
// CHECK:         arith.cmpf uge, %arg1
// CHECK:         arith.cmpf ule
// CHECK:         return %[[A]]
func.func @math.exp$nonpositive_argument(%x: f32, %y: f32) -> (f32, f32) {
  %a = math.exp %x {dyno.nonpositive_argument} : f32
  %b = math.exp %y : f32
  return %a, %b : f32, f32
}
