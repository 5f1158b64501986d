"""DYNO_DEBUG_DIR: every stage's IR and the generated code of each graph, on disk."""
import itertools
import os
import pathlib
import shutil
import tempfile
from typing import Optional

_graph_ids = itertools.count()


class GraphDump:
    """Where one graph's artifacts go: DYNO_DEBUG_DIR/graph_<n>/, or nowhere.

    The tools' files always go to a directory (a temporary one when no debug directory
    is set); a failed compile keeps it so that the reproducer command can name them.
    """

    def __init__(self):
        self.graph_id = next(_graph_ids)
        root = os.environ.get("DYNO_DEBUG_DIR")
        self.dir: Optional[pathlib.Path] = None
        self._temporary: Optional[pathlib.Path] = None
        if root:
            self.dir = pathlib.Path(root) / f"graph_{self.graph_id}"
            self.dir.mkdir(parents=True, exist_ok=True)

    def write(self, name: str, text: str) -> None:
        if self.dir is not None:
            (self.dir / name).write_text(text)

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
