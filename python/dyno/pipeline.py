"""Runs MLIR pass pipelines (Dyno's with dyno-opt, torch-mlir's with torch-mlir-opt) in
subprocesses and hands back the resulting IR.

A crash in a pass (an assertion, a division by zero in a lowering) can never take the
user's program down, and the command we ran is the reproducer we print.
"""
import os
import pathlib
import shlex
import shutil
import subprocess

from .errors import DynoCompileError

KERNEL_FORMATION = "dyno-kernel-formation-pipeline"
LOWERING = {"cpu": "dyno-cpu-lowering-pipeline", "triton": "dyno-triton-lowering-pipeline"}


def _tool_path(tool: str, variable: str) -> str:
    candidates = [
        os.environ.get(variable),
        str(pathlib.Path(__file__).parent / "_bin" / tool),
        shutil.which(tool),
    ]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise DynoCompileError("setup", f"{tool} not found (set {variable} or rebuild Dyno)")


def dyno_opt_path() -> str:
    return _tool_path("dyno-opt", "DYNO_OPT")


def run_tool(stage: str, command: list, output_path: pathlib.Path, reproducer: str) -> str:
    """Runs an MLIR tool in a subprocess and returns the IR it wrote to `output_path`.
    A failure or a crash of the tool becomes a DynoCompileError carrying `reproducer`."""
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        raise DynoCompileError(stage, f"{os.path.basename(command[0])} timed out",
                               reproducer) from None
    if completed.returncode != 0:
        diagnostics = [line for line in completed.stderr.splitlines() if line.strip()]
        errors = [line for line in diagnostics if "error" in line] or diagnostics
        tool = os.path.basename(command[0])
        reason = " | ".join(errors[:3]) or f"{tool} exited with {completed.returncode}"
        if completed.returncode < 0:
            reason = f"{tool} crashed (signal {-completed.returncode}): {reason}"
        raise DynoCompileError(stage, reason[:2000], reproducer)
    return output_path.read_text()


def _with_file(pass_name: str, path: pathlib.Path) -> str:
    """`pass_name{file=<path>}`, the path quoted for MLIR's pass-option parser."""
    text = str(path)
    for quote in ("'", '"'):
        if quote not in text:
            return f"{pass_name}{{file={quote}{text}{quote}}}"
    raise DynoCompileError("setup", f"a path MLIR's pass options cannot quote: {text}")


def run_dyno_passes(target: str, linalg_path: pathlib.Path, kernels_path: pathlib.Path,
                    lowered_path: pathlib.Path, options: str = "",
                    triton_source_path: pathlib.Path = None) -> str:
    """All of Dyno's passes for one graph, in one dyno-opt process: kernel formation,
    whose result (host schedule + kernels) it writes to `kernels_path`, then `target`'s
    lowering pipeline (with `options`), whose result it writes to `lowered_path` and
    returns; for the Triton target, with `triton_source_path`, the kernels' @triton.jit
    source too (what `dyno-translate --mlir-to-triton` prints). The command is the
    reproducer of a failure."""
    lowering = LOWERING[target] + (f"{{{options}}}" if options else "")
    passes = [KERNEL_FORMATION, _with_file("dyno-write-ir", kernels_path), lowering]
    if triton_source_path is not None:
        passes.append(_with_file("dyno-write-triton", triton_source_path))
    command = [dyno_opt_path(), f"--pass-pipeline=builtin.module({','.join(passes)})",
               str(linalg_path), "-o", str(lowered_path)]
    reproducer = " ".join(shlex.quote(part) for part in command)
    return run_tool(f"dyno-opt ({target})", command, lowered_path, reproducer)
