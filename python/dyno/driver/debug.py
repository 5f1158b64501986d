"""What a graph's compile shows: each stage's IR and generated code on disk
(DYNO_DEBUG_DIR), as artifacts for tlparse (TORCH_TRACE), and its stages and their times
in PyTorch's logs (TORCH_LOGS="dyno": a line per graph, and a note when a stage runs
long; "+dyno": every stage with its time)."""
import contextlib
import itertools
import logging
import os
import pathlib
import shutil
import tempfile
import threading
import time
from typing import Optional

from .. import environment

log = logging.getLogger("dyno.compile")  # not "dyno": MLIR's Python package logs under dyno._mlir_libs

_graph_ids = itertools.count()

# A stage that runs longer than this says so (TORCH_LOGS="dyno"), then again as often.
SLOW_STAGE_SECONDS = 5.0


def register_logs() -> None:
    """Makes "dyno" a name of TORCH_LOGS and torch._logging.set_logs. PyTorch read
    TORCH_LOGS when it was imported, before this name existed: it is read again."""
    import torch._logging._internal as torch_logs

    torch_logs.register_log("dyno", "dyno.compile")
    if "dyno" in os.environ.get("TORCH_LOGS", ""):
        torch_logs._init_logs()
        # (At import PyTorch took "dyno" for a module name and turned on the logs of all
        # of its submodules; those of the MLIR bindings Dyno ships are not Dyno's.)
        bindings = logging.getLogger("dyno._mlir_libs")
        bindings.setLevel(logging.WARNING)
        bindings.propagate = False


def _trace_artifact(name: str, make_text) -> None:
    """The text `make_text()` as a TORCH_TRACE artifact (tlparse shows it under the
    compile that made it); nothing happens, and nothing is made, when no trace is being
    written."""
    try:
        from torch._logging import trace_structured
    except ImportError:  # a torch without structured traces
        return
    trace_structured("artifact", metadata_fn=lambda: {"name": name, "encoding": "string"},
                     payload_fn=make_text)


class GraphDump:
    """Where one graph's artifacts go: DYNO_DEBUG_DIR/graph_<n>/ (or nowhere) and
    TORCH_TRACE; and the clock of its stages.

    The tools' files always go to a directory (a temporary one when no debug directory
    is set); a failed compile keeps it so that the reproducer command can name them.
    """

    def __init__(self):
        self.graph_id = next(_graph_ids)
        root = environment.get("DYNO_DEBUG_DIR")
        self.dir: Optional[pathlib.Path] = None
        self._temporary: Optional[pathlib.Path] = None
        self.started = time.perf_counter()
        self.stage_seconds = {}  # stage -> seconds, in the order they ran
        if root:
            self.dir = pathlib.Path(root) / f"graph_{self.graph_id}"
            self.dir.mkdir(parents=True, exist_ok=True)

    def write(self, name: str, text, on_disk: bool = True) -> None:
        """A stage's output `name` (e.g. 03-kernels.mlir): its text, or a function
        that makes it (called only if it goes anywhere). `on_disk=False`: a tool already
        wrote it to `directory()`; it only goes to the trace."""
        make = text if callable(text) else (lambda: text)
        if on_disk and self.dir is not None:
            (self.dir / name).write_text(make())
        _trace_artifact(f"dyno_graph_{self.graph_id}_{name}", make)

    @contextlib.contextmanager
    def stage(self, name: str):
        """Times the stage `name` (logged at DEBUG); one that runs longer than
        SLOW_STAGE_SECONDS is reported while it runs (at INFO)."""
        start = time.perf_counter()
        done = threading.Event()
        if log.isEnabledFor(logging.INFO):
            def watch():
                while not done.wait(SLOW_STAGE_SECONDS):
                    log.info("graph %d: still in %s after %.1f s (%.1f s since its compile "
                             "began)", self.graph_id, name, time.perf_counter() - start,
                             time.perf_counter() - self.started)
            threading.Thread(target=watch, name=f"dyno graph {self.graph_id} {name}",
                             daemon=True).start()
        try:
            yield
        finally:
            done.set()
            seconds = time.perf_counter() - start
            self.stage_seconds[name] = self.stage_seconds.get(name, 0.0) + seconds
            log.debug("graph %d: %s: %.3f s", self.graph_id, name, seconds)

    def summary(self) -> str:
        """The stages and their times, e.g. "import 0.21 s, kernel formation 0.40 s"."""
        return ", ".join(f"{name} {seconds:.2f} s" for name, seconds in
                         self.stage_seconds.items())

    def directory(self) -> pathlib.Path:
        """Where the tools' input and output files go: the debug directory, or a
        temporary one that a failure keeps (a printed reproducer names its files)."""
        if self.dir is not None:
            return self.dir
        if self._temporary is None:
            self._temporary = pathlib.Path(
                tempfile.mkdtemp(prefix=f"dyno-graph{self.graph_id}-"))
        return self._temporary

    def discard_temporary(self) -> None:
        """After a successful compile nothing refers to the temporary files."""
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None
