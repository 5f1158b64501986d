// RUN: dyno-opt %s --dyno-bf16-as-i16 | FileCheck %s
// RUN: dyno-opt %s --dyno-bf16-as-i16 --canonicalize | FileCheck %s --check-prefix=FOLDED

// A copy of bf16 values (a roll, a transpose, a gather) loads and stores i16: LLVM's
// vectorizer then makes no masked load or store of bfloat vectors (issue 52).
// CHECK-LABEL: llvm.func @copy
// CHECK:         %[[BITS:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> i16
// CHECK:         %[[VALUE:.*]] = llvm.bitcast %[[BITS]] : i16 to bf16
// CHECK:         %[[STORED:.*]] = llvm.bitcast %[[VALUE]] : bf16 to i16
// CHECK:         llvm.store %[[STORED]], %{{.*}} {alignment = 2 : i64} : i16, !llvm.ptr
// FOLDED-LABEL: llvm.func @copy
// FOLDED:         %[[BITS:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> i16
// FOLDED-NEXT:    llvm.store %[[BITS]], %{{.*}} {alignment = 2 : i64} : i16, !llvm.ptr
// FOLDED-NOT:     bf16
llvm.func @copy(%src: !llvm.ptr, %dst: !llvm.ptr) {
  %v = llvm.load %src {alignment = 2 : i64} : !llvm.ptr -> bf16
  llvm.store %v, %dst {alignment = 2 : i64} : bf16, !llvm.ptr
  llvm.return
}

// A sort's compare-and-swap: the comparison widens exactly (the 16-bit shift), the
// select chooses bits.
// CHECK-LABEL: llvm.func @min
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK:         %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK:         %[[ABITS:.*]] = llvm.bitcast %{{.*}} : bf16 to i16
// CHECK:         %[[AWIDE:.*]] = llvm.zext %[[ABITS]] : i16 to i32
// CHECK:         %[[SIXTEEN:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK:         %[[ASHIFT:.*]] = llvm.shl %[[AWIDE]], %[[SIXTEEN]] : i32
// CHECK:         %[[AF:.*]] = llvm.bitcast %[[ASHIFT]] : i32 to f32
// CHECK:         %[[BF:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[LT:.*]] = llvm.fcmp "olt" %[[AF]], %[[BF]] {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK:         %[[PICK:.*]] = llvm.select %[[LT]], %{{.*}}, %{{.*}} : i1, i16
// CHECK:         llvm.bitcast %[[PICK]] : i16 to bf16
// FOLDED-LABEL: llvm.func @min
// FOLDED-NOT:     bf16
// FOLDED:         llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i16
// FOLDED-NOT:     bf16
llvm.func @min(%a: !llvm.ptr, %b: !llvm.ptr, %out: !llvm.ptr) {
  %x = llvm.load %a : !llvm.ptr -> bf16
  %y = llvm.load %b : !llvm.ptr -> bf16
  %lt = llvm.fcmp "olt" %x, %y {fastmathFlags = #llvm.fastmath<contract>} : bf16
  %m = llvm.select %lt, %x, %y : i1, bf16
  llvm.store %m, %out : bf16, !llvm.ptr
  llvm.return
}

// Vectors too; other types are left alone.
// CHECK-LABEL: llvm.func @vector
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> vector<8xi16>
// CHECK:         llvm.mlir.constant(dense<16> : vector<8xi32>) : vector<8xi32>
// CHECK:         llvm.fcmp "oeq" %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         llvm.store %{{.*}}, %{{.*}} : vector<8xi16>, !llvm.ptr
// CHECK:         %[[F:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:         llvm.store %[[F]], %{{.*}} : f32, !llvm.ptr
// FOLDED-LABEL: llvm.func @vector
// FOLDED:         llvm.store %{{.*}}, %{{.*}} : vector<8xi16>, !llvm.ptr
llvm.func @vector(%p: !llvm.ptr, %q: !llvm.ptr, %r: !llvm.ptr) -> vector<8xi1> {
  %v = llvm.load %p : !llvm.ptr -> vector<8xbf16>
  %e = llvm.fcmp "oeq" %v, %v : vector<8xbf16>
  llvm.store %v, %q : vector<8xbf16>, !llvm.ptr
  %f = llvm.load %r : !llvm.ptr -> f32
  llvm.store %f, %r : f32, !llvm.ptr
  llvm.return %e : vector<8xi1>
}
