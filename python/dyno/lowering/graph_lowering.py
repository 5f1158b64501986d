"""A graph's way down to a target's lowered module, the part both targets share:
torch-mlir's FX import (in process), torch-mlir's lowering to linalg (torch-mlir-opt),
then all of Dyno's passes in one dyno-opt process: kernel formation and the target's
lowering pipeline, as the target declares them (DynoPasses; targets/cpu, targets/triton).

The tools run in subprocesses (mlir_tools.py), so a crash in a pass never takes the
user's program down; the command that failed is the reproducer printed. Each stage's
output goes to the graph's dump directory:

  01-torch.mlir    torch-mlir's FX import (torch dialect)
  02-linalg.mlir   after torch-mlir's lowering (linalg-on-tensors)
  03-kernels.mlir  after the target's kernel formation pipeline (host schedule + kernels;
                   written by dyno-write-ir)
  04-*.mlir        after the target's lowering pipeline (CPU: 04-llvm.mlir, kernels in the
                   LLVM dialect; Triton: 04-triton.mlir, tl block programs)
  05-kernels.py    Triton: the @triton.jit kernels (written by dyno-write-triton)
"""
import os
import pathlib
import re
import shlex
from dataclasses import dataclass
from typing import Optional

from ..errors import DynoCompileError
from .mlir_tools import dyno_opt_path, run_tool


@dataclass(frozen=True)
class DynoPasses:
    """One target's part of a graph's dyno-opt run."""
    target: str  # the target's name, in the stage's name ("dyno-opt (cpu)")
    kernel_formation: str  # its kernel formation pipeline, with its options
    lowering: str  # its lowering pipeline's name (a graph's options are added per run)
    lowered_file: str  # where the lowered module goes, e.g. "04-llvm.mlir"
    # A pass that writes the kernels' source after lowering (dyno-write-triton), and its
    # file; None where the lowered module itself is what the target runs.
    source_writer: Optional[str] = None
    source_file: Optional[str] = None


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


# How dyno-opt reads torch-mlir's output (02-linalg.mlir): its TMTensor ops parse as
# unregistered ops, and the kernel formation pipeline's first pass (IMPORT_PASS) takes
# them into Dyno's and names any other op Dyno does not know, so that no process but
# dyno-opt parses the graph's text.
IMPORT_FLAGS = ["--allow-unregistered-dialect"]
IMPORT_PASS = "dyno-import-torch-mlir-output"


def check_linalg(directory: pathlib.Path) -> None:
    """Raises DynoCompileError (with a dyno-opt reproducer) unless dyno-opt takes
    `directory`'s 02-linalg.mlir: every op one Dyno knows once IMPORT_PASS ran, verified."""
    output = pathlib.Path(os.devnull)  # (only whether it takes it matters)
    command = [dyno_opt_path(), *IMPORT_FLAGS,
               f"--pass-pipeline=builtin.module({IMPORT_PASS})",
               str(directory / "02-linalg.mlir"), "-o", str(output)]
    run_tool("dyno-opt", command, output, " ".join(shlex.quote(part) for part in command))


def run_dyno_passes(passes: DynoPasses, directory: pathlib.Path, options: str = "") -> str:
    """All of Dyno's passes for one graph, in one dyno-opt process, on `directory`'s
    02-linalg.mlir: kernel formation (whose first pass is IMPORT_PASS), whose result
    (host schedule + kernels) it writes to 03-kernels.mlir, then the target's lowering
    pipeline (with `options`), whose result it writes to `passes.lowered_file` and
    returns; and, where the target has one, its source writer's output to
    `passes.source_file`. The command is the reproducer of a failure."""
    lowered_path = directory / passes.lowered_file
    lowering = passes.lowering + (f"{{{options}}}" if options else "")
    steps = [passes.kernel_formation, _with_file("dyno-write-ir", directory / "03-kernels.mlir"),
             lowering]
    if passes.source_writer is not None:
        steps.append(_with_file(passes.source_writer, directory / passes.source_file))
    # (Without dyno-opt's crash-recovering first parse of its input: it runs in a process
    # of its own, whose crash is already a fallback with this reproducer, and its input
    # is torch-mlir's output; the input is parsed once, and a rerun of the reproducer
    # shows a crash's stack.)
    command = [dyno_opt_path(), *IMPORT_FLAGS, "--recover-parser-crashes=false",
               f"--pass-pipeline=builtin.module({','.join(steps)})",
               str(directory / "02-linalg.mlir"), "-o", str(lowered_path)]
    reproducer = " ".join(shlex.quote(part) for part in command)
    return run_tool(f"dyno-opt ({passes.target})", command, lowered_path, reproducer)


def lower_graph(gm, dump, passes: DynoPasses, options: str = "",
                causal_masks: bool = True) -> str:
    """ATen graph `gm` -> the lowered module of the target whose passes are `passes` (with
    lowering-pipeline `options`), whose text it returns; the stages go to `dump` (a
    debug.GraphDump), timed, and a source writer's output to its file in the dump's
    directory. `causal_masks`: attention under a constant causal mask runs as causal
    attention (CompileOptions.causal_masks)."""
    from ..capture import attention_scales, causal_masks as masks, grouped_query_attention
    from . import frontend

    frontend.check_graph_ops(gm)
    if causal_masks:
        gm = masks.with_causal_attention(gm)
    gm = attention_scales.with_query_scales_in_attention(gm)
    gm = grouped_query_attention.with_grouped_query_attention(gm)
    directory = dump.directory()
    with dump.stage("torch-mlir import"):
        torch_text = frontend.import_to_torch(frontend.without_none_outputs(gm))
        (directory / "01-torch.mlir").write_text(torch_text)
    dump.write("01-torch.mlir", torch_text, on_disk=False)
    with dump.stage("linalg lowering"):
        linalg = frontend.lower_to_linalg(directory / "01-torch.mlir",
                                          directory / "02-linalg.mlir")
    dump.write("02-linalg.mlir", linalg, on_disk=False)
    with dump.stage("Dyno passes"):
        lowered = run_dyno_passes(passes, directory, options)
    dump.write("03-kernels.mlir", lambda: (directory / "03-kernels.mlir").read_text(),
               on_disk=False)
    dump.write(passes.lowered_file, lowered, on_disk=False)
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
