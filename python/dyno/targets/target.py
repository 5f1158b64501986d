"""The interface every target implements (cpu/, triton/), as Inductor keeps codegen/cpp.py
beside codegen/triton.py. The driver and the compile cache use only this: they never ask
which target they have.

A graph's compile, whatever its target:

    artifact = target.lower(gm, dump, options, frozen_inputs,  # what the target runs
                            parameter_inputs)
    entry = <the compile cache stores it: artifact.store(staging directory)>
    artifact = artifact.stored(entry)   # (the CPU's kernels then run from the stored library)
    call = target.load(artifact, graph_id, device, options)

and a compile cache hit:

    call = target.load(target.restore(entry), graph_id, device, options)

A failure in `restore` means the entry is damaged (the cache removes it); a failure in
`load` means it cannot run here (the cache keeps it and the graph is compiled again).
"""
import abc
import pathlib
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Tuple


@dataclass(frozen=True)
class CacheEntry:
    """A compile-cache entry as the target sees it: its directory and the metadata its
    artifact's `store` returned (entry.json, less what the cache adds)."""
    directory: pathlib.Path
    meta: Mapping


class Artifact(abc.ABC):
    """What `Target.lower` makes of one graph: the kernels and the wrapper that calls them,
    not yet loaded. Exports ship a Triton artifact's sources."""
    num_kernels: int
    extern_calls: int  # library calls the wrapper makes (matmuls, convolutions, ATen ops)
    library_calls: List[str]  # the ATen ops among them

    @abc.abstractmethod
    def store(self, directory: pathlib.Path) -> Optional[Dict]:
        """Writes the target's entry files (Target.entry_files) into `directory` and
        returns what the entry must remember to restore them (JSON-serialisable); None
        where this artifact cannot be stored (nothing is then written)."""

    def stored(self, entry: CacheEntry) -> "Artifact":
        """The artifact to load once it is stored as `entry` (possibly by another process
        first): itself, unless the target runs a stored entry more cheaply."""
        return self


class Target(abc.ABC):
    """One target: its name, where its graphs run, its lowering and its loading."""
    name: str  # options={"target": name}, the counters' "<name>_graphs", cache entries
    devices: Tuple[str, ...]  # the device types its compiled graphs run on
    entry_files: Tuple[str, ...]  # the files of its compile-cache entries
    # CompileOptions fields that do nothing on this target, each with the reason: the
    # driver logs them when set (see check_options).
    ignored_options: Mapping[str, str] = {}

    def check_options(self, options) -> List[str]:
        """A note for each CompileOptions field set that does nothing here
        (ignored_options), which the driver logs. A target that refuses an option raises
        DynoCompileError here (the graph then runs eagerly, with a warning)."""
        return [f"{name} does nothing on the {self.name} target: {reason}"
                for name, reason in self.ignored_options.items()
                if getattr(options, name)]

    @abc.abstractmethod
    def cache_key(self) -> str:
        """What the code it makes depends on beyond the graph, the options and Dyno
        itself (the machine's CPU for machine code, a compiler's version for source)."""

    @abc.abstractmethod
    def lower(self, gm, dump, options, frozen_inputs: frozenset = frozenset(),
              parameter_inputs: frozenset = frozenset()) -> Artifact:
        """ATen graph `gm` -> the artifact, the stages dumped to `dump` (debug.GraphDump).
        `options`: the CompileOptions; `frozen_inputs`: positions of the inputs that stay
        the same from call to call (parameters under `freezing`); `parameter_inputs`:
        positions of an inference graph's parameters and buffers (frozen or not), which
        may change between calls: a packed copy kept of one is checked on every call."""

    @abc.abstractmethod
    def restore(self, entry: CacheEntry) -> Artifact:
        """The artifact a compile-cache entry holds (its files checked against their
        digests by the cache)."""

    @abc.abstractmethod
    def load(self, artifact: Artifact, graph_id: int, device, options) -> Callable:
        """The graph's `call(args) -> outputs` on `device`'s tensors."""

    def tuning_files(self) -> List[pathlib.Path]:
        """Files this process's graphs of the target read or wrote beside the compile
        cache (the Triton target's autotuning results), which save_cache_artifacts
        bundles with the entries, under `autotune/`."""
        return []

    @abc.abstractmethod
    def check_op(self, directory: pathlib.Path) -> None:
        """Per-op fallback's check of one op that torch-mlir imported and lowered
        (directory/02-linalg.mlir): raises DynoCompileError where this target cannot
        lower it (or dyno-opt cannot take it: graph_lowering.check_linalg)."""
