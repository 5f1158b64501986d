// RUN: dyno-opt %s --dyno-mark-distinct-kernel-buffers | FileCheck %s

// A kernel's loads and stores through its pointer arguments (directly or through
// getelementptr chains, inside OpenMP regions too) get their argument's alias scope and
// are declared not to alias the other arguments'. Its stack slots (LLVM knows them
// apart), private functions and kernels with one buffer are left unmarked; its heap
// allocations are buffers of their own (@padded below).

// CHECK-DAG: #[[DOMAIN:.*]] = #llvm.alias_scope_domain<{{.*}}description = "gather buffers">
// CHECK-DAG: #[[A0:.*]] = #llvm.alias_scope<{{.*}}domain = #[[DOMAIN]], description = "argument 0">
// CHECK-DAG: #[[A1:.*]] = #llvm.alias_scope<{{.*}}domain = #[[DOMAIN]], description = "argument 1">
// CHECK-DAG: #[[A3:.*]] = #llvm.alias_scope<{{.*}}domain = #[[DOMAIN]], description = "argument 3">
// CHECK-DAG: #[[PDOMAIN:.*]] = #llvm.alias_scope_domain<{{.*}}description = "padded buffers">
// CHECK-DAG: #[[P0:.*]] = #llvm.alias_scope<{{.*}}domain = #[[PDOMAIN]], description = "argument 0">
// CHECK-DAG: #[[M0:.*]] = #llvm.alias_scope<{{.*}}domain = #[[PDOMAIN]], description = "allocation 0">
// CHECK-DAG: #[[M1:.*]] = #llvm.alias_scope<{{.*}}domain = #[[PDOMAIN]], description = "allocation 1">

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

// A kernel's malloc'd intermediate, aligned to 64 bytes by integer arithmetic, is a
// buffer of its own: its accesses and the argument's are declared apart (a padded copy
// from one allocation into another stayed scalar without this).
// CHECK-LABEL: llvm.func @padded
// CHECK: llvm.load %{{.*}} {alias_scopes = [#[[P0]]], noalias_scopes = [#[[M0]], #[[M1]]]} : !llvm.ptr -> f32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alias_scopes = [#[[M0]]], noalias_scopes = [#[[P0]], #[[M1]]]} : f32, !llvm.ptr
// CHECK: llvm.load %{{.*}} {alias_scopes = [#[[M0]]], noalias_scopes = [#[[P0]], #[[M1]]]} : !llvm.ptr -> f32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alias_scopes = [#[[M1]]], noalias_scopes = [#[[P0]], #[[M0]]]} : f32, !llvm.ptr
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @padded(%x: !llvm.ptr, %n: i64) {
  %size = llvm.mlir.constant(4160 : i64) : i64
  %align = llvm.mlir.constant(64 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %raw = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %address = llvm.ptrtoint %raw : !llvm.ptr to i64
  %bump = llvm.sub %align, %one : i64
  %up = llvm.add %address, %bump : i64
  %rest = llvm.urem %up, %align : i64
  %aligned = llvm.sub %up, %rest : i64
  %buffer = llvm.inttoptr %aligned : i64 to !llvm.ptr
  %second = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %v = llvm.load %x : !llvm.ptr -> f32
  %slot = llvm.getelementptr %buffer[%n] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %v, %slot : f32, !llvm.ptr
  %w = llvm.load %slot : !llvm.ptr -> f32
  llvm.store %w, %second : f32, !llvm.ptr
  llvm.return
}
