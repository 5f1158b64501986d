"""Compiles Dyno's CPU kernels for other x86 CPUs than this one, without running them.

    .venv/bin/python e2e/cross_cpu_codegen.py [--dtypes bfloat16,float16] [--cpus znver4,...]

Dyno compiles kernels for the host CPU, so a CPU's features meet its code generation first
on a user's machine: on CPUs with AVX512-BF16 (Cooper Lake, Sapphire Rapids, Zen 4) LLVM's
X86 backend asserted on masked loads of bfloat vectors that its vectorizer made for bf16
copies (kthvalue, a roll along the last dimension, a transpose), and the assertion took the
user's process down (issue 52). This compiles the kernels of the ops in `OPS` and of the zoo
models (e2e/zoo.py, "test" size) in each low-precision dtype on the CPU target,
and each graph's kernels (the LLVM dialect, 04-llvm.mlir of DYNO_DEBUG_DIR) with the kit's
`opt -O3` and `llc -O3` for each of `CPUS`, as the JIT does for its host (llc alone does not
meet the vectorizer's output), and links and loads the object as the JIT does, in a fresh
process (on Zen 4 LLVM called compiler-rt's __truncdfbf2, which GCC 12's libgcc lacks: the
kernels did not load). Every tool runs in a subprocess: a crash is a row of the table.
Exits 1 if any (graph, CPU) failed. e2e/test_cross_cpu_codegen.py runs a few.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import torch

# AVX512-BF16 (sapphirerapids, znver4, cooperlake), AVX-512 without it, AVX2.
CPUS = ("znver4", "sapphirerapids", "cooperlake", "skylake-avx512", "haswell")
TRIPLE = "x86_64-unknown-linux-gnu"

OPS = {
    "kthvalue": lambda x: torch.kthvalue(x, 2),
    "roll_last": lambda x: torch.roll(x, 1, -1),
    "roll_first": lambda x: torch.roll(x, 1, 0),
    "transpose": lambda x: x.transpose(0, 2).contiguous(),
    "sort": lambda x: torch.sort(x, 1),
    "topk": lambda x: torch.topk(x, 2),
    "cumsum": lambda x: torch.cumsum(x, -1),
    "amax": lambda x: torch.amax(x, 1),
    "strided_slice": lambda x: x[:, ::2, 1:] * 2,
}


def llvm_tool(name: str) -> str:
    """The prebuilt kit's `name` (opt, llc, mlir-translate), beside this Python's packages."""
    import importlib.util

    for package in ("llvm", "mlir"):
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            candidate = pathlib.Path(location) / "bin" / name
            if candidate.exists():
                return str(candidate)
    raise FileNotFoundError(f"{name}: not in the LLVM/MLIR kit of this environment")


def kernels_llvm_ir(llvm_dialect_path: pathlib.Path) -> str:
    """The LLVM IR of the `module @kernels` of a graph's 04-llvm.mlir (parsed as IR)."""
    from dyno import ir

    with ir.Context():
        module = ir.Module.parse(llvm_dialect_path.read_text())
        kernels = next(op for op in module.body.operations
                       if op.operation.name == "builtin.module")
        text = str(kernels)
    translated = subprocess.run([llvm_tool("mlir-translate"), "--mlir-to-llvmir"],
                                input=text, capture_output=True, text=True, timeout=600)
    if translated.returncode:
        raise RuntimeError(f"mlir-translate: {translated.stderr.strip()[:500]}")
    return translated.stdout


def compile_for(llvm_ir: str, cpu: str) -> str:
    """'' where `opt -O3` and `llc -O3` compile `llvm_ir` for `cpu` and the object links
    and loads as the JIT links and loads kernels, else what failed."""
    with tempfile.TemporaryDirectory() as directory:
        source, optimized = f"{directory}/kernels.ll", f"{directory}/kernels.bc"
        obj = f"{directory}/kernels.o"
        pathlib.Path(source).write_text(llvm_ir)
        for command in ([llvm_tool("opt"), "-O3", f"-mtriple={TRIPLE}", f"-mcpu={cpu}",
                         source, "-o", optimized],
                        [llvm_tool("llc"), "-O3", f"-mtriple={TRIPLE}", f"-mcpu={cpu}",
                         "-relocation-model=pic", "-filetype=obj", optimized, "-o", obj]):
            done = subprocess.run(command, capture_output=True, text=True, timeout=900)
            if done.returncode:
                lines = [line for line in done.stderr.splitlines()
                         if "Assertion" in line or "error" in line.lower()]
                tool = os.path.basename(command[0])
                return f"{tool} exit {done.returncode}: {(lines or [''])[0].strip()[:200]}"
        failures = unresolved_symbols(pathlib.Path(obj).read_bytes(), directory)
        if failures:
            return f"does not load: {failures[0]}"
    return ""


def unresolved_symbols(object_code: bytes, directory: str) -> list:
    """Why the library the JIT would link from `object_code` does not load beside the
    JIT's runtimes (its OpenMP entry points; MLIR's runner utilities where it calls
    memrefCopy, as the JIT loads them), in a fresh process; [] if it loads. (LLVM lowers
    f64 -> bf16 on Zen 4 to compiler-rt's __truncdfbf2, which GCC 12's libgcc lacks.)"""
    from dyno.targets.cpu import jit

    library = f"{directory}/kernels.so"
    failure = jit._link([object_code], library)
    if failure:
        return [failure]
    listed = subprocess.run([llvm_tool("llvm-nm"), "--undefined-only", "--dynamic", library],
                            capture_output=True, text=True, timeout=300)
    needed = {fields[1].split("@")[0] for fields in map(str.split, listed.stdout.splitlines())
              if len(fields) == 2 and fields[0] == "U"}
    runtimes = [jit.openmp_runtime().library]
    if "memrefCopy" in needed:
        runtimes.append(jit.runner_utils_library())
    loader = ("import ctypes, sys\n"
              "for path in sys.argv[2:]: ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)\n"
              "ctypes.CDLL(sys.argv[1])\n")
    loaded = subprocess.run([sys.executable, "-c", loader, library, *runtimes],
                            capture_output=True, text=True, timeout=300)
    if loaded.returncode == 0:
        return []
    return [(loaded.stderr.strip().splitlines() or ["did not load"])[-1][-200:]]


def compiled_graphs(fn, inputs, debug_dir: pathlib.Path):
    """Compiles `fn` on the CPU target (and runs it here, for this CPU); returns the
    04-llvm.mlir of each of its graphs."""
    import dyno  # noqa: F401 (registers the backend)

    previous = os.environ.get("DYNO_DEBUG_DIR")
    os.environ["DYNO_DEBUG_DIR"] = str(debug_dir)
    try:
        torch._dynamo.reset()
        with torch.no_grad():
            torch.compile(fn, backend="mlir", options={"target": "cpu"})(*inputs)
    finally:
        if previous is None:
            del os.environ["DYNO_DEBUG_DIR"]
        else:
            os.environ["DYNO_DEBUG_DIR"] = previous
    return sorted(debug_dir.glob("graph_*/04-llvm.mlir"))


def check(name, fn, inputs, cpus, rows):
    with tempfile.TemporaryDirectory() as directory:
        for path in compiled_graphs(fn, inputs, pathlib.Path(directory)):
            llvm_ir = kernels_llvm_ir(path)
            for cpu in cpus:
                start = time.perf_counter()
                failure = compile_for(llvm_ir, cpu)
                rows.append((name, path.parent.name, cpu, failure,
                             time.perf_counter() - start))
                print(f"{name} {path.parent.name} {cpu}: {failure or 'ok'}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtypes", default="bfloat16,float16")
    parser.add_argument("--cpus", default=",".join(CPUS))
    parser.add_argument("--no-zoo", action="store_true")
    args = parser.parse_args()
    cpus = args.cpus.split(",")
    rows = []
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        x = torch.randn(5, 5, 5).to(dtype)
        for name, fn in OPS.items():
            check(f"{name} {dtype_name}", fn, (x,), cpus, rows)
        if not args.no_zoo:
            import zoo

            for name in zoo.ZOO:
                model, inputs = zoo.build(name, dtype)
                check(f"{name} {dtype_name}", model, inputs, cpus, rows)
    failed = [row for row in rows if row[3]]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} (graph, CPU) compiles ok")
    for name, graph, cpu, failure, _ in failed:
        print(f"FAILED {name} {graph} {cpu}: {failure}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
