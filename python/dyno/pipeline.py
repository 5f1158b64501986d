"""Runs Dyno's named pipelines with dyno-opt and hands back the resulting IR.

Running the passes in a dyno-opt subprocess means a crash in a pass can never take the
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


def dyno_opt_path() -> str:
    candidates = [
        os.environ.get("DYNO_OPT"),
        str(pathlib.Path(__file__).parent / "_bin" / "dyno-opt"),
        shutil.which("dyno-opt"),
    ]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise DynoCompileError("setup", "dyno-opt not found (set DYNO_OPT or rebuild Dyno)")


def run_pipeline(pipeline: str, input_path: pathlib.Path, output_path: pathlib.Path) -> str:
    """Runs `dyno-opt --<pipeline>` on input_path, writes output_path, returns its text."""
    command = [dyno_opt_path(), f"--{pipeline}", str(input_path), "-o", str(output_path)]
    reproducer = " ".join(shlex.quote(part) for part in command[:3])
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        raise DynoCompileError(pipeline, "dyno-opt timed out", reproducer) from None
    if completed.returncode != 0:
        diagnostics = [line for line in completed.stderr.splitlines() if line.strip()]
        errors = [line for line in diagnostics if "error" in line] or diagnostics
        reason = " | ".join(errors[:3]) or f"dyno-opt exited with {completed.returncode}"
        if completed.returncode < 0:
            reason = f"dyno-opt crashed (signal {-completed.returncode}): {reason}"
        raise DynoCompileError(pipeline, reason[:2000], reproducer)
    return output_path.read_text()
