"""Float32 matrix products on the tensor cores, three TF32 products each (Triton's
`input_precision="tf32x3"`: a = a_hi + a_lo with a_hi rounded to TF32, then
a_hi*b_hi + a_hi*b_lo + a_lo*b_hi accumulated in float32).

On an H100, on the zoo's linear layers (a weight [N, K] read transposed, so both operands
are K-major in shared memory, as the tensor cores' TF32 operands must be), this ran 1.04x
to 1.7x faster than cuBLAS's float32 GEMM (what eager and Inductor run with TF32 off) on
the products host_runtime.tensor_core_float32_product chooses (from 2^18 outputs, K from
128), with the block configuration of `heuristic_config`, and its results were 2x to 5x
closer to the float64 product than cuBLAS's (relative L2 1.5e-7 to 2.6e-7 against 3.6e-7
to 8.1e-7; benchmarks/experiments/gpu_f32_gemm_precision.py,
benchmarks/results/gpu-float32-tensor-core-products-2026-12-05.md). A B stored N-major
(GPT-2's Conv1D weights [K, N]) read as it is ran 0.51x-1.13x cuBLAS's (Triton transposes
it on the way to the tensor cores): it is copied K-major first.

The wrapper calls `_kernels.float32_products(a, b, bias, out=...)` for the static float32
products it chose (WrapperBuilder.tensor_core_product). A B that is not K-major (a weight
stored [K, N]) is read from a K-major copy: made in the call, where A has enough rows to
share its cost (host_runtime.TENSOR_CORE_FLOAT32_COPY_MIN_ROWS) — the graph's weight
arguments four to a launch before their group's first product (`k_major_copies`), any
other such B in the product's own call — or, with `freezing`, kept here (`kept=slot`)
while the weight is unchanged. A call with an A whose rows are not
contiguous in K, or of another dtype, runs torch.mm/addmm. After the first
launch of a shape the compiled kernel launches through Triton's C launcher with nothing
but an alignment check (launch.py's direct launch), as the generated kernels do.
Interpreted (CPU tensors), the kernel runs under Triton's interpreter, compiled first for
the compile-check targets (compile_check.py) like every other kernel.
"""
import hashlib
import inspect
import warnings

import torch
import triton
import triton.language as tl

from triton.runtime.errors import OutOfResources

from .autotune import tune
from .compile_check import TritonCompileCheckError, check_gpu_compile
from .interpreter import interpreted
from .launch import LAUNCH_OPTIONS, _direct_launch

# Block configurations (BM x BN x BK, warps, pipeline stages). The heuristic
# (Float32Products.heuristic_config) picks one of the first three; autotuning times them
# all. Measured on an H100 over 39 products (2^17 to 2^28 outputs, K 128 to 5632; 16
# configurations each, gpu_f32_gemm_precision.py --configs): LARGE was the fastest where
# whole waves of 128 x 128 tiles fill the GPU, one of the 64 x 64 ones elsewhere; the
# heuristic's pick was within 2% of the best configuration on every shape (the fixed
# picks before it, 128 x 128 x 32 or 64 x 128 x 32: up to 1.87x the best). 128 x 128 x 32
# with 4 warps ran 2x slower than with 8.
LARGE = dict(BM=128, BN=128, BK=64, GROUP=8, num_warps=8, num_stages=3)
SMALL_DEEP = dict(BM=64, BN=64, BK=64, GROUP=8, num_warps=4, num_stages=3)
SMALL = dict(BM=64, BN=64, BK=32, GROUP=8, num_warps=4, num_stages=4)
CONFIGS = [
    LARGE, SMALL_DEEP, SMALL,
    dict(BM=128, BN=128, BK=32, GROUP=8, num_warps=8, num_stages=3),
    dict(BM=64, BN=128, BK=32, GROUP=8, num_warps=4, num_stages=4),
    dict(BM=128, BN=64, BK=32, GROUP=8, num_warps=4, num_stages=4),
    dict(BM=128, BN=256, BK=32, GROUP=8, num_warps=8, num_stages=3),
]
# LARGE where the 128 x 128 tiles' last wave is at least this full (their count over
# whole waves of the GPU's multiprocessors); SMALL_DEEP for few 64 x 64 tiles, or long K.
FULL_WAVES = 0.85


def _float32_product(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                     stride_bk, stride_bn, stride_cm, stride_cn, HAS_BIAS: tl.constexpr,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                     GROUP: tl.constexpr):
    # Programs in groups of GROUP row blocks, so that neighbouring programs share B's
    # column blocks in the L2 cache.
    pid = tl.program_id(0)
    # (no tl.cdiv, a jit function of its own: the interpreter runs only this one)
    grid_m = (M + BM - 1) // BM
    grid_n = (N + BN - 1) // BN
    width = GROUP * grid_n
    first_m = (pid // width) * GROUP
    size_m = tl.minimum(grid_m - first_m, GROUP)
    pid_m = first_m + (pid % width) % size_m
    pid_n = (pid % width) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.full((BM, BN), 0.0, tl.float32)  # (tl.zeros is a jit function too)
    for k in range(0, (K + BK - 1) // BK):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


# Weights copied K-major by one launch (Float32Products.k_major_copies), at most this many.
COPIES_PER_LAUNCH = 4
COPY_BLOCK = 64
# Larger matrices are copied by torch: a launch's offsets and indices stay below 2^31
# (the kernel's integers are 32-bit where their values fit).
MAX_GROUPED_ELEMENTS = 1 << 28


def _k_major_copies(out_ptr, b0, b1, b2, b3, k0, k1, k2, k3, n0, n1, n2, n3, first1,
                    first2, first3, offset1, offset2, offset3, BLOCK: tl.constexpr):
    # Up to four matrices stored [K, N] (N contiguous), each into `out` at its offset
    # stored [N, K] (K contiguous): program `pid` copies one BLOCK x BLOCK tile of the
    # matrix whose tiles start at or below it (first1..3: the first tiles of b1..b3).
    pid = tl.program_id(0)
    which = (pid >= first1).to(tl.int32) + (pid >= first2).to(tl.int32) + \
        (pid >= first3).to(tl.int32)
    b = tl.where(which == 0, b0, tl.where(which == 1, b1, tl.where(which == 2, b2, b3)))
    K = tl.where(which == 0, k0, tl.where(which == 1, k1, tl.where(which == 2, k2, k3)))
    N = tl.where(which == 0, n0, tl.where(which == 1, n1, tl.where(which == 2, n2, n3)))
    first = tl.where(which == 0, 0, tl.where(which == 1, first1,
                                             tl.where(which == 2, first2, first3)))
    offset = tl.where(which == 0, 0, tl.where(which == 1, offset1,
                                              tl.where(which == 2, offset2, offset3)))
    tile = pid - first
    tiles_n = (N + BLOCK - 1) // BLOCK
    rk = (tile // tiles_n) * BLOCK + tl.arange(0, BLOCK)
    rn = (tile % tiles_n) * BLOCK + tl.arange(0, BLOCK)
    inside = (rk[:, None] < K) & (rn[None, :] < N)
    tiles = tl.load(b + rk[:, None] * N + rn[None, :], mask=inside, other=0.0)
    tl.store(out_ptr + offset + rn[None, :] * K + rk[:, None], tiles, mask=inside)


_SOURCE_DIGEST = hashlib.sha256(inspect.getsource(_float32_product).encode()).hexdigest()[:24]
_COPIES_DIGEST = hashlib.sha256(inspect.getsource(_k_major_copies).encode()).hexdigest()[:24]
_jitted = {}  # (function, interpreted or not) -> the triton.jit function


def _kernel(interpret: bool, function=_float32_product):
    if (function, interpret) not in _jitted:
        with interpreted(interpret):
            _jitted[function, interpret] = triton.jit(function)
    return _jitted[function, interpret]


def _k_major_copy(b: torch.Tensor) -> torch.Tensor:
    """`b` ([K, N]) copied by torch into K-major memory, the same [K, N] view."""
    return b.t().contiguous().t()


def _pointers(tensors) -> int:
    result = 0
    for tensor in tensors:
        result |= tensor.data_ptr()
    return result


def runs_on_tensor_cores(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether a [M, K] @ [K, N] float32 product with these operands is one this module
    computes: both K-major (K contiguous in each), as measured."""
    return (a.dtype == b.dtype == torch.float32 and a.dim() == b.dim() == 2
            and a.stride(1) == 1 and b.stride(0) == 1 and a.device == b.device)


class Float32Products:
    """The tensor-core float32 products of one graph's kernels, on `device` (CPU tensors:
    interpreted). `autotune`: time CONFIGS on a shape's first product (kept on disk);
    `check_targets`: the compile-check targets of interpreted kernels."""

    def __init__(self, device, interpret: bool, autotune: bool = False, check_targets=()):
        self.device = torch.device(device)
        self.interpret = interpret
        self.autotune = autotune and not interpret
        self.check_targets = list(check_targets)
        self.configs = {}  # (M, N, K, strides, bias) -> the configuration chosen
        self.aligned = {}  # operands' layouts -> (direct launcher, its sizes and strides)
        self.unavailable = False  # the kernel failed to compile here: cuBLAS instead
        self.kept = {}  # slot -> (a frozen [K, N] weight's K-major copy, its identity)
        self.processors = None  # the GPU's multiprocessors (heuristic_config)
        self.copiers = {}  # weights' shapes -> direct launcher of their K-major copies
        self.copy_plans = {}  # weights' shapes -> their copies' sizes, tiles and views
        self.copies_checked = set()  # (shapes, direct launch) checked (_copies_checked)
        self.copies_unavailable = False

    def __call__(self, a, b, bias=None, out=None, kept=None):
        """a @ b (+ bias, a [N] row), into `out` where given (a dense [M, N] tensor).
        `kept`: b is a frozen weight stored [K, N] (CompileOptions.freezing: GPT-2's
        Conv1D weights), read from a K-major copy kept in slot `kept`."""
        if b.dim() == 2 and b.stride(0) != 1 and b.dtype == torch.float32 and b.numel():
            # A B not K-major (GPT-2's Conv1D weights, stored [K, N]): the tensor cores
            # read a K-major copy, kept while a frozen weight is unchanged (`kept`), else
            # made in the call. The wrapper calls this only where the copy pays
            # (host_runtime.tensor_core_float32_product: enough rows of A to share it).
            b = self.k_major(kept, b) if kept is not None else _k_major_copy(b)
        # After the first launch of a layout with every pointer 16-byte aligned: its
        # direct launcher, with nothing but this lookup and the alignment check.
        layout = (a.shape, a.stride(), a.dtype, b.shape, b.stride(), b.dtype,
                  None if bias is None else (bias.stride(), bias.dtype),
                  None if out is None else out.stride())
        aligned = self.aligned.get(layout)
        if aligned is not None:
            launch, sizes = aligned
            c = out if out is not None else torch.empty(sizes[:2], dtype=torch.float32,
                                                        device=a.device)
            pointers = a.data_ptr() | b.data_ptr() | c.data_ptr()
            if bias is not None:
                pointers |= bias.data_ptr()
            if not pointers & 15:
                launch(a, b, a if bias is None else bias, c, *sizes)
                return c
        if self.unavailable or not runs_on_tensor_cores(a, b) or (bias is not None and (
                bias.dim() != 1 or bias.dtype != torch.float32 or bias.stride(0) != 1)):
            if bias is None:
                return torch.mm(a, b, out=out) if out is not None else torch.mm(a, b)
            return torch.addmm(bias, a, b, out=out) if out is not None \
                else torch.addmm(bias, a, b)
        (M, K), N = a.shape, b.shape[1]
        c = out if out is not None else torch.empty((M, N), dtype=torch.float32,
                                                    device=a.device)
        if M == 0 or N == 0:
            return c
        if K == 0:
            return c.copy_(bias.expand(M, N)) if bias is not None else c.zero_()
        has_bias = bias is not None
        sizes = (M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                 c.stride(1))
        arguments = (a, b, bias if has_bias else a, c, *sizes)
        shape_key = (M, N, K, a.stride(0), b.stride(1), c.stride(0), c.stride(1), has_bias)
        try:
            config = self._config(shape_key, arguments)
            try:
                compiled, grid = self._launch(config, arguments, has_bias)
            except OutOfResources:
                if config is SMALL:
                    raise
                # A GPU with less shared memory (or registers) than the Hopper GPUs
                # the configurations were measured on: the smallest one.
                config = self.configs[shape_key] = SMALL
                compiled, grid = self._launch(config, arguments, has_bias)
        except Exception as error:
            if self.interpret or isinstance(error, TritonCompileCheckError):
                raise
            # A GPU whose Triton backend cannot compile the kernel (e.g. no TF32 tensor
            # cores): cuBLAS's float32 GEMM from now on, said once.
            self.unavailable = True
            warnings.warn(f"dyno: float32 products on the tensor cores are unavailable on "
                          f"this GPU ({type(error).__name__}: {str(error)[:200]}); they run "
                          f"as cuBLAS's float32 GEMM", RuntimeWarning, stacklevel=2)
            return self(a, b, bias, out=out)
        pointers = a.data_ptr() | b.data_ptr() | c.data_ptr() | (
            bias.data_ptr() if has_bias else 0)
        if not self.interpret and not pointers & 15:
            # (The JIT specialized this compile on the sizes, the strides and the
            # pointers' alignment: all in `layout`, or checked above.)
            launch = _direct_launch(compiled, grid, trailing=(
                has_bias, config["BM"], config["BN"], config["BK"], config["GROUP"]))
            if launch is not None:
                self.aligned[layout] = (launch, sizes)
        return c

    def k_major_copies(self, *weights):
        """K-major copies of float32 matrices stored [K, N] (weights of the graph's
        tensor-core products, GPT-2's Conv1D without freezing), made by one launch for
        up to COPIES_PER_LAUNCH of them (the wrapper groups a layer's weights): the
        copies, [K, N] views of one buffer. A matrix of another layout or dtype is given
        back as it is (the product copies it, or runs cuBLAS's)."""
        copied = [i for i, w in enumerate(weights) if w.dim() == 2 and w.dtype ==
                  torch.float32 and w.stride() == (w.shape[1], 1) and w.numel()
                  and w.numel() < MAX_GROUPED_ELEMENTS and w.device == weights[0].device]
        result = list(weights)
        for start in range(0, len(copied), COPIES_PER_LAUNCH):
            group = [weights[i] for i in copied[start:start + COPIES_PER_LAUNCH]]
            copies = None
            if not self.copies_unavailable:
                copies, direct = self._copy_group(group)
                if not self._copies_checked(group, copies, direct):
                    copies = None
            if copies is None:  # torch's copies, one per matrix
                copies = [_k_major_copy(w) for w in group]
            for i, copy in zip(copied[start:], copies):
                result[i] = copy
        return tuple(result)

    def _copies_checked(self, group, copies, direct: bool) -> bool:
        """Whether the copies equal the matrices, checked on a GPU once per launch path
        (the JIT's first launch of a group's shapes, then their direct launches): the
        grouped copy kernel was compiled for sm_90 in CI and run under Triton's
        interpreter, not yet timed on a GPU. A mismatch warns once; torch's copies are
        made from then on."""
        if self.interpret or not group[0].is_cuda or \
                torch.cuda.is_current_stream_capturing():
            return True
        path = (tuple(w.shape for w in group), direct)
        if path in self.copies_checked:
            return True
        # (bit for bit: a NaN in a weight is copied, not unequal)
        if all(torch.equal(copy.view(torch.int32), w.view(torch.int32))
               for copy, w in zip(copies, group)):
            self.copies_checked.add(path)
            return True
        self.copies_unavailable = True
        warnings.warn("dyno: the grouped K-major copy kernel gave wrong copies on this GPU; "
                      "torch copies the weights instead", RuntimeWarning, stacklevel=3)
        return False

    def _copy_group(self, group):
        """The group's K-major copies made by one launch, and whether that launch was
        a direct one (Triton's C launcher) rather than through the JIT."""
        shapes = tuple(w.shape for w in group)
        plan = self.copy_plans.get(shapes)
        if plan is None:
            # Each copy starts 16-byte aligned (the products launch directly on aligned
            # operands); the unused pointers of a smaller group repeat its last matrix.
            offsets, firsts, total, tiles = [], [], 0, 0
            for K, N in shapes:
                offsets.append(total)
                firsts.append(tiles)
                total += -(-K * N // 4) * 4
                tiles += triton.cdiv(K, COPY_BLOCK) * triton.cdiv(N, COPY_BLOCK)
            unused = COPIES_PER_LAUNCH - len(shapes)
            padded = list(shapes) + [shapes[-1]] * unused
            sizes = (*(K for K, _ in padded), *(N for _, N in padded),
                     *(firsts[1:] + [tiles] * unused), *(offsets[1:] + [0] * unused))
            views = [((K, N), (1, K), offset) for (K, N), offset in zip(shapes, offsets)]
            plan = self.copy_plans[shapes] = (total, tiles, unused, sizes, views)
        total, tiles, unused, sizes, views = plan
        out = torch.empty(total, dtype=torch.float32, device=group[0].device)
        arguments = (out, *group, *group[-1:] * unused, *sizes)
        aligned = not (out.data_ptr() | _pointers(group)) & 15
        launch = self.copiers.get(shapes)
        direct = launch is not None and aligned
        if direct:
            launch(*arguments)
        else:
            if self.interpret and self.check_targets:
                check_gpu_compile(_kernel(False, _k_major_copies), _COPIES_DIGEST,
                                  dict(BLOCK=COPY_BLOCK, num_warps=4), arguments,
                                  self.check_targets)
            compiled = _kernel(self.interpret, _k_major_copies)[(tiles,)](
                *arguments, BLOCK=COPY_BLOCK, num_warps=4, **LAUNCH_OPTIONS)
            if not self.interpret and aligned:
                launch = _direct_launch(compiled, tiles, trailing=(COPY_BLOCK,))
                if launch is not None:
                    self.copiers[shapes] = launch
        return [out.as_strided(*view) for view in views], direct

    def k_major(self, slot: int, b):
        """A K-major copy of the frozen weight `b` ([K, N]), made once and kept while
        `b` is the same tensor, unchanged (its version counter), except while a CUDA
        graph records the call, which then copies it on every replay: a replay must
        read the weight as it is then (as host_runtime.PaddedProducts keeps padded
        weights)."""
        if b.is_cuda and torch.cuda.is_current_stream_capturing():
            return _k_major_copy(b)
        identity = (b.data_ptr(), b._version, b.shape, b.stride())
        copy, copied = self.kept.get(slot, (None, None))
        if copied != identity:
            copy = _k_major_copy(b)
            self.kept[slot] = (copy, identity)
        return copy

    def _config(self, shape_key, arguments):
        config = self.configs.get(shape_key)
        if config is not None:
            return config
        M, N = shape_key[0], shape_key[1]
        has_bias = shape_key[-1]
        if self.autotune:
            name = f"float32_product_{M}x{N}x{shape_key[2]}"
            key = hashlib.sha256(repr((_SOURCE_DIGEST, shape_key, CONFIGS,
                                       torch.cuda.get_device_name(self.device))).encode()
                                 ).hexdigest()[:24]
            config = tune(lambda config: self._launch(config, arguments, has_bias),
                          CONFIGS, key, name)
        if config is None:
            config = self.heuristic_config(M, N, shape_key[2])
        self.configs[shape_key] = config
        return config

    def heuristic_config(self, M: int, N: int, K: int) -> dict:
        """The block configuration of an [M, K] @ [K, N] product, without timing (see
        CONFIGS)."""
        if self.interpret:
            return SMALL
        processors = self.processors
        if processors is None:
            processors = self.processors = torch.cuda.get_device_properties(
                self.device).multi_processor_count
        tiles = triton.cdiv(M, 128) * triton.cdiv(N, 128)
        if tiles >= FULL_WAVES * processors * triton.cdiv(tiles, processors):
            return LARGE
        small_tiles = triton.cdiv(M, 64) * triton.cdiv(N, 64)
        if small_tiles <= 256 or (K >= 2048 and small_tiles <= 1024):
            return SMALL_DEEP
        return SMALL

    def _launch(self, config, arguments, has_bias):
        """Launches the kernel through Triton's JIT entry: (its compiled kernel, grid)."""
        M, N = arguments[4], arguments[5]
        grid = triton.cdiv(M, config["BM"]) * triton.cdiv(N, config["BN"])
        blocks = dict(HAS_BIAS=has_bias, BM=config["BM"], BN=config["BN"], BK=config["BK"],
                      GROUP=config["GROUP"])
        if self.interpret and self.check_targets:
            check_gpu_compile(_kernel(False), _SOURCE_DIGEST,
                              dict(blocks, num_warps=config["num_warps"]), arguments,
                              self.check_targets)
        compiled = _kernel(self.interpret)[(grid,)](
            *arguments, **blocks, num_warps=config["num_warps"],
            num_stages=config["num_stages"], **LAUNCH_OPTIONS)
        return compiled, grid
