"""DYNO_DEBUG_DIR: every stage's IR and the generated code of each graph, on disk."""
import itertools
import os
import pathlib
import tempfile
from typing import Optional

_graph_ids = itertools.count()


class GraphDump:
    """Where one graph's artifacts go: DYNO_DEBUG_DIR/graph_<n>/, or nowhere.

    Failing IR is always written (to a temporary directory when no debug directory is
    set) so that a reproducer command can name it.
    """

    def __init__(self):
        self.graph_id = next(_graph_ids)
        root = os.environ.get("DYNO_DEBUG_DIR")
        self.dir: Optional[pathlib.Path] = None
        if root:
            self.dir = pathlib.Path(root) / f"graph_{self.graph_id}"
            self.dir.mkdir(parents=True, exist_ok=True)

    def write(self, name: str, text: str) -> None:
        if self.dir is not None:
            (self.dir / name).write_text(text)

    def directory(self) -> pathlib.Path:
        """Where the tools' input and output files go: the debug directory, or a
        temporary one (kept, so that a printed reproducer can name its files)."""
        if self.dir is None:
            self.dir_for_tools = getattr(self, "dir_for_tools", None) or pathlib.Path(
                tempfile.mkdtemp(prefix=f"dyno-graph{self.graph_id}-"))
            return self.dir_for_tools
        return self.dir
