/*===- KmpcOnGomp.c - LLVM OpenMP entry points on PyTorch's libgomp --------===//
 *
 * MLIR's omp dialect lowers to the LLVM OpenMP ABI (__kmpc_*). PyTorch's CPU wheels run
 * their own parallel regions (matmul, conv, eager ops) on GNU libgomp, and a second
 * OpenMP runtime in the process means two thread pools competing for the same cores:
 * each spins after its regions while the other runs. This library implements the five
 * entry points Dyno's kernels call on top of the libgomp PyTorch already loaded, so
 * kernels and library calls share one pool and follow torch.set_num_threads().
 *
 * dyno_openmp_bind() must be called with libgomp's functions before a kernel runs (the
 * Python runtime finds PyTorch's copy in the process). Only the static schedule is
 * implemented: it is the only one Dyno's lowering emits.
 *===----------------------------------------------------------------------===*/
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*Microtask)(int32_t *globalTid, int32_t *boundTid, ...);
typedef void (*GompParallel)(void (*fn)(void *), void *data, unsigned numThreads,
                             unsigned flags);
typedef void (*GompBarrier)(void);
typedef int (*OmpQuery)(void);

static GompParallel gompParallel;
static GompBarrier gompBarrier;
static OmpQuery threadNum;
static OmpQuery numThreads;

enum { kMaxArgs = 16, kScheduleStaticChunked = 33, kScheduleStatic = 34 };

int dyno_openmp_bind(void *parallel, void *barrier, void *getThreadNum,
                     void *getNumThreads) {
  if (!parallel || !barrier || !getThreadNum || !getNumThreads)
    return 1;
  gompParallel = (GompParallel)parallel;
  gompBarrier = (GompBarrier)barrier;
  threadNum = (OmpQuery)getThreadNum;
  numThreads = (OmpQuery)getNumThreads;
  return 0;
}

static void unbound(const char *entry) {
  fprintf(stderr, "dyno: %s called before dyno_openmp_bind\n", entry);
  abort();
}

struct ForkContext {
  Microtask task;
  int32_t argc;
  void *args[kMaxArgs];
};

static void runMicrotask(void *data) {
  struct ForkContext *ctx = (struct ForkContext *)data;
  int32_t gtid = threadNum(), btid = gtid;
  void **a = ctx->args;
  switch (ctx->argc) {
  case 0: ctx->task(&gtid, &btid); break;
  case 1: ctx->task(&gtid, &btid, a[0]); break;
  case 2: ctx->task(&gtid, &btid, a[0], a[1]); break;
  case 3: ctx->task(&gtid, &btid, a[0], a[1], a[2]); break;
  case 4: ctx->task(&gtid, &btid, a[0], a[1], a[2], a[3]); break;
  case 5: ctx->task(&gtid, &btid, a[0], a[1], a[2], a[3], a[4]); break;
  case 6: ctx->task(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5]); break;
  case 7: ctx->task(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
  case 8: ctx->task(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
  default:
    ctx->task(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
              a[10], a[11], a[12], a[13], a[14], a[15]);
  }
}

void __kmpc_fork_call(void *loc, int32_t argc, Microtask task, ...) {
  (void)loc;
  if (!gompParallel)
    unbound("__kmpc_fork_call");
  if (argc < 0 || argc > kMaxArgs) {
    fprintf(stderr, "dyno: __kmpc_fork_call with %d arguments (at most %d)\n", argc,
            kMaxArgs);
    abort();
  }
  struct ForkContext ctx = {task, argc, {0}};
  va_list ap;
  va_start(ap, task);
  for (int32_t i = 0; i < argc; ++i)
    ctx.args[i] = va_arg(ap, void *);
  va_end(ap);
  gompParallel(runMicrotask, &ctx, /*numThreads=*/0, /*flags=*/0);
}

int32_t __kmpc_global_thread_num(void *loc) {
  (void)loc;
  if (!threadNum)
    unbound("__kmpc_global_thread_num");
  return threadNum();
}

void __kmpc_barrier(void *loc, int32_t gtid) {
  (void)loc, (void)gtid;
  if (!gompBarrier)
    unbound("__kmpc_barrier");
  gompBarrier();
}

void __kmpc_for_static_fini(void *loc, int32_t gtid) { (void)loc, (void)gtid; }

/* Inclusive bounds [*lower, *upper] with a positive increment, as libomp defines them.
 * Static: one balanced block per thread (an empty thread gets lower = upper + incr).
 * Static chunked: chunks dealt round robin; the generated loop clamps the last one. */
#define DEFINE_STATIC_INIT(SUFFIX, UT, ST)                                               \
  void __kmpc_for_static_init_##SUFFIX(void *loc, int32_t gtid, int32_t schedule,        \
                                        int32_t *lastIter, UT *lower, UT *upper,         \
                                        ST *stride, ST incr, ST chunk) {                 \
    (void)loc, (void)gtid;                                                               \
    if (!threadNum)                                                                      \
      unbound("__kmpc_for_static_init");                                                 \
    uint64_t nth = (uint64_t)numThreads(), tid = (uint64_t)threadNum();                  \
    uint64_t step = (uint64_t)(incr > 0 ? incr : 1);                                     \
    uint64_t trip = (uint64_t)(*upper - *lower) / step + 1;                              \
    if (schedule == kScheduleStaticChunked && chunk > 0) {                               \
      uint64_t span = (uint64_t)chunk * step;                                            \
      *lower = (UT)(*lower + tid * span);                                                \
      *upper = (UT)(*lower + span - step);                                               \
      *stride = (ST)(span * nth);                                                        \
      *lastIter = tid == ((trip - 1) / (uint64_t)chunk) % nth;                           \
      return;                                                                            \
    }                                                                                    \
    uint64_t base = trip / nth, extra = trip % nth;                                      \
    uint64_t begin = tid * base + (tid < extra ? tid : extra);                           \
    uint64_t count = base + (tid < extra ? 1 : 0);                                       \
    *stride = (ST)(trip * step);                                                         \
    if (count == 0) {                                                                    \
      *lower = (UT)(*upper + step);                                                      \
      *lastIter = 0;                                                                     \
      return;                                                                            \
    }                                                                                    \
    *lower = (UT)(*lower + begin * step);                                                \
    *upper = (UT)(*lower + (count - 1) * step);                                          \
    *lastIter = begin + count == trip;                                                   \
  }

DEFINE_STATIC_INIT(4, int32_t, int32_t)
DEFINE_STATIC_INIT(4u, uint32_t, int32_t)
DEFINE_STATIC_INIT(8, int64_t, int64_t)
DEFINE_STATIC_INIT(8u, uint64_t, int64_t)
