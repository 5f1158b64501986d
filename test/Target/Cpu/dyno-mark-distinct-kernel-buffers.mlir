// RUN: dyno-opt %s --dyno-mark-distinct-kernel-buffers | FileCheck %s

// A kernel's loads and stores through its pointer arguments (directly or through
// getelementptr chains, inside OpenMP regions too) get their argument's alias scope and
// are declared not to alias the other arguments'. Accesses to the kernel's own
// allocations, private functions and kernels with one pointer are left unmarked.

// CHECK-DAG: #[[DOMAIN:.*]] = #llvm.alias_scope_domain<{{.*}}description = "gather buffers">
// CHECK-DAG: #[[A0:.*]] = #llvm.alias_scope<{{.*}}domain = #[[DOMAIN]], description = "argument 0">
// CHECK-DAG: #[[A1:.*]] = #llvm.alias_scope<{{.*}}domain = #[[DOMAIN]], description = "argument 1">
// CHECK-DAG: #[[A3:.*]] = #llvm.alias_scope<{{.*}}domain = #[[DOMAIN]], description = "argument 3">

// CHECK-LABEL: llvm.func @gather
llvm.func @gather(%ids: !llvm.ptr, %table: !llvm.ptr, %n: i64, %out: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %scratch = llvm.alloca %c1 x f32 : (i64) -> !llvm.ptr
  omp.parallel {
    // CHECK: llvm.load %{{.*}} {alias_scopes = [#[[A0]]], noalias_scopes = [#[[A1]], #[[A3]]]} : !llvm.ptr -> i64
    %id = llvm.load %ids : !llvm.ptr -> i64
    %row = llvm.getelementptr %table[%id] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %element = llvm.getelementptr inbounds %row[%n] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    // CHECK: llvm.load %{{.*}} {alias_scopes = [#[[A1]]], noalias_scopes = [#[[A0]], #[[A3]]]} : !llvm.ptr -> f32
    %v = llvm.load %element : !llvm.ptr -> f32
    // CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
    // CHECK-NOT: alias_scopes
    llvm.store %v, %scratch : f32, !llvm.ptr
    // CHECK: llvm.store %{{.*}}, %{{.*}} {alias_scopes = [#[[A3]]], noalias_scopes = [#[[A0]], #[[A1]]]} : f32, !llvm.ptr
    llvm.store %v, %out : f32, !llvm.ptr
    omp.terminator
  }
  llvm.return
}

// CHECK-LABEL: llvm.func @one_buffer
// CHECK-NOT: alias_scopes
llvm.func @one_buffer(%x: !llvm.ptr) {
  %v = llvm.load %x : !llvm.ptr -> f32
  llvm.store %v, %x : f32, !llvm.ptr
  llvm.return
}

// CHECK-LABEL: llvm.func private @helper
// CHECK-NOT: alias_scopes
llvm.func private @helper(%x: !llvm.ptr, %y: !llvm.ptr) {
  %v = llvm.load %x : !llvm.ptr -> f32
  llvm.store %v, %y : f32, !llvm.ptr
  llvm.return
}
