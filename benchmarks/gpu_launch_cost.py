"""Host time per kernel launch on a GPU: Dyno's Triton runtime against Triton's own entry
points and the host calls a wrapper makes between launches. Needs only torch and triton.

    python3 benchmarks/gpu_launch_cost.py [--runtime A.py --runtime B.py] [--launches 20000]

Each `--runtime` is a copy of python/dyno/targets/triton/runtime.py (by default this
checkout's); giving two (say, main's and a branch's) times both in one process. A launch
is timed on the host only: `launches` launches of a kernel whose GPU work is ~2 us, one
synchronization after them, wall time divided by the count; the median of 5 repeats.
With the GPU's work that short, the host's cost is what is measured.
"""
import argparse
import importlib.util
import os
import statistics
import tempfile
import time

import torch

KERNELS = '''
import triton
import triton.language as tl

LAUNCH_TABLE_VERSION = 2


@triton.jit
def add_one(in0, out0, XBLOCK: tl.constexpr):
    offsets = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offsets < 4096
    tl.store(out0 + offsets, tl.load(in0 + offsets, mask=mask) + 1.0, mask=mask)


@triton.jit
def add_five(in0, in1, in2, in3, in4, out0, XBLOCK: tl.constexpr):
    offsets = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offsets < 4096
    total = tl.load(in0 + offsets, mask=mask) + tl.load(in1 + offsets, mask=mask)
    total += tl.load(in2 + offsets, mask=mask) + tl.load(in3 + offsets, mask=mask)
    tl.store(out0 + offsets, total + tl.load(in4 + offsets, mask=mask), mask=mask)


KERNELS = {
    "add_one": {"args": ["float32", "float32"], "xnumel": 4096, "rnumel": 1,
                "configs": [{"XBLOCK": 1024, "num_warps": 4}]},
    "add_five": {"args": ["float32"] * 6, "xnumel": 4096, "rnumel": 1,
                 "configs": [{"XBLOCK": 1024, "num_warps": 4}]},
}
'''


def host_us(launch, launches: int) -> float:
    """Median host microseconds per call of `launch` over 5 repeats."""
    for _ in range(100):
        launch()
    torch.cuda.synchronize()
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(launches):
            launch()
        samples.append((time.perf_counter() - start) / launches * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def load_runtime(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", action="append", default=[])
    parser.add_argument("--launches", type=int, default=20000)
    args = parser.parse_args()
    runtimes = args.runtime or [os.path.join(os.path.dirname(__file__), "..", "python",
                                             "dyno", "targets", "triton", "runtime.py")]
    import triton

    device = torch.device("cuda")
    directory = tempfile.mkdtemp()
    path = os.path.join(directory, "kernels.py")
    with open(path, "w") as file:
        file.write(KERNELS)
    x = [torch.randn(4096, device=device) for _ in range(6)]
    rows = []
    for index, runtime_path in enumerate(runtimes):
        runtime = load_runtime(runtime_path, f"runtime_{index}")
        kernels = runtime.TritonKernels(path, device)
        one, five = kernels["add_one"], kernels["add_five"]
        label = f"Dyno launcher ({runtime_path})"
        rows.append((label + ", 2 tensors", host_us(lambda: one(x[0], x[1]), args.launches)))
        rows.append((label + ", 6 tensors", host_us(lambda: five(*x), args.launches)))
    module = kernels.module
    grid = (4,)
    rows.append(("triton JIT entry kernel[grid](...), 2 tensors",
                 host_us(lambda: module.add_one[grid](x[0], x[1], XBLOCK=1024),
                         args.launches)))
    compiled = module.add_one[grid](x[0], x[1], XBLOCK=1024)
    runner = compiled[(4, 1, 1)]
    rows.append(("triton CompiledKernel[grid] runner, 2 tensors",
                 host_us(lambda: runner(x[0], x[1], 1024), args.launches)))
    run, function, metadata = compiled.run, compiled.function, compiled.packed_metadata
    stream = torch.cuda.current_stream().cuda_stream
    rows.append(("triton C launcher alone (stream looked up once), 2 tensors",
                 host_us(lambda: run(4, 1, 1, stream, function, metadata, None, None, None,
                                     x[0], x[1], 1024), args.launches)))
    rows.append(("torch.cuda current raw stream lookup",
                 host_us(lambda: torch._C._cuda_getCurrentRawStream(
                     torch._C._cuda_getDevice()), args.launches)))
    rows.append(("torch.empty((8, 512, 768), bf16) on the GPU",
                 host_us(lambda: torch.empty((8, 512, 768), dtype=torch.bfloat16,
                                             device=device), args.launches)))
    a = torch.randn(64, 64, device=device)
    rows.append(("torch.mm 64x64 (cuBLAS, host side)",
                 host_us(lambda: torch.mm(a, a), args.launches)))
    rows.append(("tensor.view(4096) + .t() (two views)",
                 host_us(lambda: (a.view(4096), a.t()), args.launches)))
    # The wrapper's views and allocations, one by one (targets/view_layouts.py,
    # memory_planning.py), against what Inductor's wrappers call.
    y = torch.empty(8, 1, 256, 8, 2, 32, device=device, dtype=torch.bfloat16)
    for label, call in [
            ("permute([1, 0])", lambda: a.permute([1, 0])), (".t()", lambda: a.t()),
            (".mT", lambda: a.mT), ("reshape((4096,))", lambda: a.reshape((4096,))),
            ("as_strided 4-d", lambda: y.as_strided((8, 8, 256, 64), (131072, 64, 512, 1), 0))]:
        rows.append((label, host_us(call, args.launches)))
    try:
        from torch._C._dynamo.guards import _empty_strided_cuda, _reinterpret_tensor
        rows.append(("_reinterpret_tensor 4-d (Inductor's views)", host_us(
            lambda: _reinterpret_tensor(y, (8, 8, 256, 64), (131072, 64, 512, 1), 0),
            args.launches)))
        rows.append(("_empty_strided_cuda((8, 512, 768)) (Inductor's allocations)", host_us(
            lambda: _empty_strided_cuda((8, 512, 768), (393216, 768, 1), torch.bfloat16),
            args.launches)))
    except ImportError:  # another torch
        pass
    print(f"# Host time per launch, {torch.cuda.get_device_name()}, torch "
          f"{torch.__version__}, triton {triton.__version__}\n")
    print("| what | host us per call (median of 5 x %d) |" % args.launches)
    print("|---|---|")
    for label, us in rows:
        print(f"| {label} | {us:.2f} |")


if __name__ == "__main__":
    main()
