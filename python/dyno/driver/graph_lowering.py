"""A graph's way down to a target's lowered module, the part both targets share:
torch-mlir's FX import (in process), torch-mlir's lowering to linalg (torch-mlir-opt),
then all of Dyno's passes in one dyno-opt process (kernel formation, the target's
lowering pipeline and, for Triton, the kernels' translation to Python).

The tools run in subprocesses (mlir_tools.py), so a crash in a pass never takes the
user's program down; the command that failed is the reproducer printed. Each stage's
output goes to the graph's dump directory:

  01-torch.mlir    torch-mlir's FX import (torch dialect)
  02-linalg.mlir   after torch-mlir's lowering (linalg-on-tensors)
  03-kernels.mlir  after dyno-kernel-formation-pipeline (host schedule + kernels;
                   written by dyno-write-ir)
  04-llvm.mlir     CPU: after dyno-cpu-lowering-pipeline (kernels in the LLVM dialect)
  04-triton.mlir   Triton: after dyno-triton-lowering-pipeline (tl block programs)
  05-kernels.py    Triton: the @triton.jit kernels (written by dyno-write-triton)
"""
import pathlib
import re
import shlex

from ..errors import DynoCompileError
from .mlir_tools import dyno_opt_path, run_tool

LOWERED_NAMES = {"cpu": "04-llvm.mlir", "triton": "04-triton.mlir"}

# Kernel formation per target: cuDNN adds a convolution's bias in a kernel of its own,
# so on GPUs the Triton kernels that read the result add it (oneDNN adds it in the
# accumulator: on CPUs it stays the call's operand).
KERNEL_FORMATION = {
    "cpu": "dyno-kernel-formation-pipeline",
    "triton": "dyno-kernel-formation-pipeline{convolution-bias-in-library=false}",
}
LOWERING = {"cpu": "dyno-cpu-lowering-pipeline", "triton": "dyno-triton-lowering-pipeline"}


def _with_file(pass_name: str, path: pathlib.Path) -> str:
    """`pass_name{file=<path>}`, the path quoted for MLIR's pass-option parser only where
    it needs to be (so that the printed reproducer stays readable)."""
    text = str(path)
    if re.fullmatch(r"[\w./+-]+", text):
        return f"{pass_name}{{file={text}}}"
    for quote in ('"', "'"):
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
    passes = [KERNEL_FORMATION[target], _with_file("dyno-write-ir", kernels_path), lowering]
    if triton_source_path is not None:
        passes.append(_with_file("dyno-write-triton", triton_source_path))
    command = [dyno_opt_path(), f"--pass-pipeline=builtin.module({','.join(passes)})",
               str(linalg_path), "-o", str(lowered_path)]
    reproducer = " ".join(shlex.quote(part) for part in command)
    return run_tool(f"dyno-opt ({target})", command, lowered_path, reproducer)


def lower_graph(gm, dump, target: str, options: str = "", causal_masks: bool = True) -> str:
    """ATen graph `gm` -> `target`'s lowered module (with lowering-pipeline `options`),
    whose text it returns; the stages go to `dump` (a debug.GraphDump), timed, and the
    Triton kernels' source to 05-kernels.py in its directory. `causal_masks`: attention
    under a constant causal mask runs as causal attention (CompileOptions.causal_masks)."""
    from . import causal_masks as masks, frontend

    frontend.check_graph_ops(gm)
    if causal_masks:
        gm = masks.with_causal_attention(gm)
    directory = dump.directory()
    with dump.stage("torch-mlir import"):
        torch_text = frontend.import_to_torch(frontend.without_none_outputs(gm))
        (directory / "01-torch.mlir").write_text(torch_text)
    dump.write("01-torch.mlir", torch_text, on_disk=False)
    with dump.stage("linalg lowering"):
        linalg = frontend.lower_to_linalg(directory / "01-torch.mlir",
                                          directory / "02-linalg.mlir")
    dump.write("02-linalg.mlir", linalg, on_disk=False)
    lowered_name = LOWERED_NAMES[target]
    with dump.stage("Dyno passes"):
        lowered = run_dyno_passes(
            target, directory / "02-linalg.mlir", directory / "03-kernels.mlir",
            directory / lowered_name, options,
            triton_source_path=directory / "05-kernels.py" if target == "triton" else None)
    dump.write("03-kernels.mlir", lambda: (directory / "03-kernels.mlir").read_text(),
               on_disk=False)
    dump.write(lowered_name, lowered, on_disk=False)
    return lowered


def host_function(lowered: str):
    """Parses a lowered graph module (in the current MLIR context): (the module, which
    keeps the rest alive, and its host function); its nested kernels module stays in it."""
    from .. import ir

    module = ir.Module.parse(lowered)
    names = [op.operation.name for op in module.body.operations]
    if "func.func" not in names or "builtin.module" not in names:
        raise DynoCompileError("wrapper", "lowered module lacks the host function or kernels")
    return module, module.body.operations[names.index("func.func")]
