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
CPU_LOWERING = "dyno-cpu-lowering-pipeline"
TRITON_LOWERING = "dyno-triton-lowering-pipeline"


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


def dyno_translate_path() -> str:
    return _tool_path("dyno-translate", "DYNO_TRANSLATE")


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


def run_pipeline(pipeline: str, input_path: pathlib.Path, output_path: pathlib.Path,
                 options: str = "") -> str:
    """Runs `dyno-opt --<pipeline>[=<options>]` on input_path, writes output_path, returns
    its text."""
    flag = f"--{pipeline}={options}" if options else f"--{pipeline}"
    command = [dyno_opt_path(), flag, str(input_path), "-o", str(output_path)]
    reproducer = " ".join(shlex.quote(part) for part in command[:3])
    return run_tool(pipeline, command, output_path, reproducer)


def translate_to_triton(input_path: pathlib.Path, output_path: pathlib.Path) -> str:
    """Runs `dyno-translate --mlir-to-triton` and returns the Triton source it printed."""
    command = [dyno_translate_path(), "--mlir-to-triton", str(input_path), "-o",
               str(output_path)]
    reproducer = " ".join(shlex.quote(part) for part in command[:3])
    return run_tool("mlir-to-triton", command, output_path, reproducer)
