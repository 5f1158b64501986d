"""Runs MLIR tools (dyno-opt, torch-mlir-opt) in subprocesses and hands back the IR they
wrote. A crash in a pass (an assertion, a division by zero in a lowering) can never take
the user's program down, and the command we ran is the reproducer we print."""
import os
import pathlib
import shutil
import subprocess

from .. import environment
from ..errors import DynoCompileError


def _tool_path(tool: str, variable: str) -> str:
    candidates = [
        environment.get(variable),
        str(pathlib.Path(__file__).parent.parent / "_bin" / tool),
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
