"""The on-disk compile cache: a graph compiled once is loaded by later processes without
importing, lowering or JIT-compiling it again (CPU and Triton targets).

Where: DYNO_CACHE_DIR (default ~/.cache/dyno). Off with DYNO_CACHE=0 or
`options={"cache": False}`.

An entry is keyed by everything its code depends on: the ATen graph (node by node) and
the values of its constants, each input's dtype, sizes, strides and device (symbolic
sizes by name), the compile options, the graph's kind, its frozen inputs, the versions
of Dyno (a digest of its Python sources and of its binaries' contents), torch and
torch-mlir, and what the target's code depends on (Target.cache_key: the CPU for machine
code, triton's version for Triton source). An entry holds the files the target's
artifact stores (Artifact.store: a CPU entry the wrapper's source and the kernels as a
shared library, a Triton entry the wrapper's and the kernels' sources) and entry.json:
what the artifact asked to remember, the target's name, the graph's counts and a sha256
of each file. A hit is the target's `restore` and `load` of the entry; the cache never
asks which target it has.

An entry is written to a temporary directory and renamed into place in one step, so a
reader sees a whole entry or none; when several processes compile the same graph at once,
the first rename wins and the others' copies are dropped. A file whose digest differs
from entry.json's makes the entry corrupt: it is removed and the graph compiled again.
The cache is kept under DYNO_CACHE_SIZE_MB (default 1024) by removing the entries used
longest ago (the entry just written stays).

save_artifacts() bundles the entries a process used into one archive, which
load_artifacts() installs into another cache (checked as a hit checks an entry): a build
machine's compiles start the others warm (dyno.save_cache_artifacts /
dyno.load_cache_artifacts).
"""
import functools
import hashlib
import importlib.metadata
import json
import operator
import os
import pathlib
import shutil
import tempfile
from typing import Optional

import torch

from .. import counters, environment, targets
from ..targets.target import Artifact, CacheEntry
from .debug import log

_FORMAT = "v1"


def root() -> Optional[pathlib.Path]:
    """The cache directory, or None when the cache is off (DYNO_CACHE=0)."""
    if environment.get("DYNO_CACHE") == "0":
        return None
    directory = os.path.expanduser(environment.get("DYNO_CACHE_DIR"))
    return pathlib.Path(directory) / _FORMAT


def _size_limit_bytes() -> int:
    return int(float(environment.get("DYNO_CACHE_SIZE_MB")) * (1 << 20))


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "none"


@functools.lru_cache(maxsize=None)
def _dyno_fingerprint() -> str:
    """Dyno's own code: its Python sources' contents and its binaries' contents (a rebuilt
    dyno-opt is another compiler; the same build installed on two machines is the same
    one, so their caches can be shared: save_artifacts/load_artifacts)."""
    package = pathlib.Path(__file__).resolve().parent.parent  # dyno/
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        if "_mlir_libs" in path.parts or "dialects" in path.parts:
            continue
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    installed = pathlib.Path(__file__).parent.parent  # the build tree's binaries: in dyno/
    binaries = [path for pattern in ("_bin/*", "_mlir_libs/*.so")
                for path in sorted(installed.glob(pattern))]
    digest.update(_binaries_digest(binaries).encode())
    digest.update(f"torch={torch.__version__}|torch-mlir={_version('torch-mlir')}".encode())
    return digest.hexdigest()


def _binaries_digest(paths) -> str:
    """sha256 of the binaries' contents (about 0.9 s for Dyno's 500 MB), remembered in
    the cache directory under each file's size, time and inode: computed once per build."""
    identity = "|".join(f"{path.resolve()}:{info.st_size}:{info.st_mtime_ns}:"
                        f"{info.st_ino}:{info.st_dev}"
                        for path in paths for info in [path.stat()])
    memo_key = hashlib.sha256(identity.encode()).hexdigest()
    directory = root()
    memo = directory / "binaries" / memo_key if directory is not None else None
    try:
        if memo is not None:
            return memo.read_text().strip()
    except OSError:
        pass
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        with open(path, "rb") as binary:
            for block in iter(lambda: binary.read(1 << 22), b""):
                digest.update(block)
    value = digest.hexdigest()
    if memo is None:
        return value
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(memo, value.encode())
    except OSError:
        pass
    return value


def _constant_bytes(value) -> Optional[bytes]:
    if isinstance(value, torch.Tensor):
        from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily

        if isinstance(value, FakeTensor) or value.device.type == "meta":
            return None
        with unset_fake_temporarily():  # (AOTAutograd compiles under a fake mode)
            data = value.detach().cpu().contiguous()
            header = f"{data.dtype}|{tuple(data.shape)}".encode()
            return header + data.reshape(-1).view(torch.uint8).numpy().tobytes()
    if isinstance(value, torch.fx.GraphModule):
        return value.code.encode()
    return repr(value).encode()


def _input_description(value) -> str:
    if isinstance(value, torch.Tensor):
        return (f"tensor|{value.dtype}|{tuple(str(s) for s in value.shape)}|"
                f"{tuple(str(s) for s in value.stride())}|{value.device.type}|"
                f"{value.requires_grad}")
    return f"{type(value).__name__}|{value}"


def graph_key(gm: torch.fx.GraphModule, example_inputs, options, kind: str,
              frozen_inputs, target, parameter_inputs=frozenset()) -> Optional[str]:
    """The entry's key for `target` (a targets.target.Target), or None when the graph
    cannot be keyed (a constant only known as a fake tensor)."""
    digest = hashlib.sha256()

    def feed(part) -> None:
        digest.update(part if isinstance(part, bytes) else str(part).encode())
        digest.update(b"\0")

    for part in (_FORMAT, _dyno_fingerprint(), target.name, kind, repr(options),
                 sorted(frozen_inputs), sorted(parameter_inputs), target.cache_key()):
        feed(part)
    # The graph, node by node (what its Python code says, without generating it: 3 ms
    # against 55 ms for a 12-layer GPT-2; a target printed with an address makes a key
    # no other process computes, which only costs a compile).
    for node in gm.graph.nodes:
        feed(f"{node.op}|{node.name}|{node.target}|{node.args}|{node.kwargs}")
    for node in gm.graph.nodes:
        if node.op != "get_attr":
            continue
        data = _constant_bytes(operator.attrgetter(node.target)(gm))
        if data is None:
            return None
        feed(node.target)
        feed(data)
    for value in example_inputs:
        feed(_input_description(value))
    return digest.hexdigest()


def _entry(key: str) -> Optional[pathlib.Path]:
    directory = root()
    return None if directory is None else directory / key[:2] / key


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _remove(path: pathlib.Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# Entries this process stored or loaded: what save_artifacts bundles.
_used_entries = set()
# Entries this process wrote (of those, discard removes one that does not load).
_written_entries = set()


def _entry_files(meta: dict):
    """The files of an entry (besides entry.json): its target's."""
    return targets.get(meta["target"]).entry_files


def load(key: str, graph_id: int, device, options):
    """(call, artifact) of the entry `key`, or None on a miss: its target's `restore`
    (a failure: the entry is corrupt, removed and counted as a miss) and `load` on
    `device` with `options` (a failure: it does not run here; a miss, the entry stays)."""
    entry = _entry(key)
    if entry is None or not entry.is_dir():
        counters.bump("cache_misses")
        return None
    try:
        files = _read_entry(entry)
        if files is None:
            raise ValueError("not whole, or a file does not match its digest")
        meta = json.loads(files["entry.json"])
        target = targets.get(meta["target"])
        artifact = target.restore(CacheEntry(entry, meta))
    except (OSError, ValueError, KeyError, AttributeError, SyntaxError) as error:
        log.info("graph %d: cache entry %s is corrupt (%s): compiling again", graph_id,
                 key[:12], error)
        counters.bump("cache_corrupt_entries")
        counters.bump("cache_misses")
        _remove(entry)
        return None
    try:
        call = target.load(artifact, graph_id, device, options)
    except Exception as error:  # noqa: BLE001 (this machine, not the entry: a miss)
        log.info("graph %d: cache entry %s did not load here (%s: %s): compiling "
                 "again", graph_id, key[:12], type(error).__name__, error)
        counters.bump("cache_misses")
        return None
    try:
        os.utime(entry)  # used now: evicted last
    except OSError:
        pass
    counters.bump("cache_hits")
    _used_entries.add(key)
    return call, artifact


def store(key: str, target, artifact: Artifact) -> Optional[CacheEntry]:
    """Writes the entry `key` of `artifact`, lowered by `target` (a no-op when another
    process wrote it first), and returns it; None when it was not stored."""
    def write(staging: pathlib.Path) -> Optional[dict]:
        meta = artifact.store(staging)
        if meta is None:
            return None
        return {**meta, "kernels": artifact.num_kernels,
                "extern_calls": artifact.extern_calls,
                "library_calls": list(artifact.library_calls)}

    entry = _store(key, target, write)
    return None if entry is None else CacheEntry(entry, stored_meta(entry))


def discard(key: str) -> None:
    """Removes the entry `key`, which did not load, if this process wrote it (one another
    process wrote may load there)."""
    entry = _entry(key)
    if key in _written_entries and entry is not None:
        _written_entries.discard(key)
        _used_entries.discard(key)
        _remove(entry)


def stored_meta(entry: pathlib.Path) -> dict:
    """A stored entry's entry.json."""
    return json.loads((entry / "entry.json").read_text())


def _store(key: str, target, write) -> Optional[pathlib.Path]:
    """Stages an entry (`write(staging)` writes `target`'s files and returns entry.json's
    contents; None: nothing to store), adds the target's name and each file's digest to
    entry.json and renames it into place; returns the entry's directory (None: not
    stored)."""
    directory = root()
    if directory is None:
        return None
    entry = _entry(key)
    if entry.is_dir():
        _used_entries.add(key)
        return entry
    try:
        (directory / "tmp").mkdir(parents=True, exist_ok=True)
        staging = pathlib.Path(tempfile.mkdtemp(dir=directory / "tmp"))
    except OSError as error:
        log.info("compile cache %s not writable: %s", directory, error)
        return None
    try:
        meta = write(staging)
        if meta is None:
            return None
        meta = {**meta, "target": target.name,
                "files": {name: _sha256(staging / name) for name in target.entry_files}}
        (staging / "entry.json").write_text(json.dumps(meta))
        entry.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(staging, entry)  # whole, or not at all
        except OSError:
            if not entry.is_dir():
                return None
        else:
            _written_entries.add(key)
            _evict(directory, keep=entry)
        _used_entries.add(key)
        return entry
    finally:
        _remove(staging)


_KEY_CHARACTERS = frozenset("0123456789abcdef")


def save_artifacts() -> Optional[bytes]:
    """The entries this process compiled or loaded, and the Triton autotuning results it
    read or wrote (per kernel and GPU model), as one archive (bytes) that
    load_artifacts installs in another machine's cache; None when there are none. (Like
    torch.compiler.save_cache_artifacts: compile on a build machine, start warm on the
    others. An entry is only ever used where its key matches: the same Dyno build, torch
    and torch-mlir, and for CPU code the same CPU model; Triton entries need the same
    triton.)"""
    import io
    import tarfile

    directory = root()
    if directory is None:
        return None
    buffer = io.BytesIO()
    count = 0
    def add(archive, name: str, data: bytes) -> None:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))

    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for key in sorted(_used_entries):
            files = _read_entry(_entry(key))
            if files is None:
                continue  # evicted or damaged since: not bundled
            for name, data in sorted(files.items()):
                add(archive, f"{key}/{name}", data)
            count += 1
        for path in sorted(_autotune_results_used()):
            try:
                with open(path, "rb") as result:
                    data = result.read()
            except OSError:
                continue
            if not _is_autotune_result(data):
                continue
            add(archive, f"autotune/{os.path.basename(path)}", data)
            count += 1
    return buffer.getvalue() if count else None


def _read_entry(entry: Optional[pathlib.Path]) -> Optional[dict]:
    """An entry's files (name -> bytes) if it is whole (_check_whole); None otherwise."""
    if entry is None:
        return None
    try:
        files = {"entry.json": (entry / "entry.json").read_bytes()}
        for name in _entry_files(json.loads(files["entry.json"])):
            files[name] = (entry / name).read_bytes()
        _check_whole(files)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return files


def _check_whole(files: dict) -> None:
    """Raises ValueError unless `files` (name -> bytes) is a whole entry: entry.json and
    exactly the files of its target, each matching entry.json's digest."""
    try:
        meta = json.loads(files["entry.json"])
        expected = _entry_files(meta)
        whole = set(files) == {"entry.json", *expected} and \
            set(meta["files"]) == set(expected) and all(
                hashlib.sha256(files[name]).hexdigest() == meta["files"][name]
                for name in expected)
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise ValueError(f"entry.json: {error!r}") from None
    if not whole:
        raise ValueError("not whole or does not match its digests")


def _is_autotune_result(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data).get("config"), dict)
    except (ValueError, AttributeError):
        return False


def _write_atomically(path: pathlib.Path, data: bytes) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _autotune_results_used():
    """The targets' tuning files this process used (Target.tuning_files)."""
    return {path for target in targets.loaded() for path in target.tuning_files()}


_ARTIFACT_MEMBER_LIMIT = 1 << 30  # bytes: no compiled graph's file comes near it


def load_artifacts(data: bytes) -> int:
    """Installs the entries (and Triton autotuning results) of an archive from
    save_artifacts into this machine's cache and returns how many it added.

    The archive must come from a source you trust, as a wheel would: its entries are code
    that later compiles run (the wrapper, the kernels). What is checked is its integrity,
    not its origin: every entry must be whole (entry.json and exactly the files it
    lists, each matching its digest), every autotuning result a result, and no member
    may be anything else (other names, links, paths outside); otherwise ValueError, and
    nothing is installed. Each entry is renamed into place whole."""
    import io
    import tarfile

    directory = root()
    if directory is None:
        raise ValueError("the compile cache is off (DYNO_CACHE=0)")
    members, tuned = {}, {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        for member in archive.getmembers():
            key, _, name = member.name.partition("/")
            allowed = {"entry.json", *(name for target in targets.names()
                                       for name in targets.get(target).entry_files)}
            if not member.isfile() or member.size > _ARTIFACT_MEMBER_LIMIT:
                raise ValueError(f"not a Dyno cache artifact member: {member.name!r}")
            if key == "autotune" and _is_autotune_name(name):
                tuned[name] = archive.extractfile(member).read()
                continue
            if len(key) != 64 or not set(key) <= _KEY_CHARACTERS or name not in allowed:
                raise ValueError(f"not a Dyno cache artifact member: {member.name!r}")
            members.setdefault(key, {})[name] = archive.extractfile(member).read()
    # Everything is checked before anything is written.
    for key, files in members.items():
        try:
            _check_whole(files)
        except ValueError as error:
            raise ValueError(f"cache artifact entry {key[:12]}: {error}") from None
    for name, content in tuned.items():
        if not _is_autotune_result(content):
            raise ValueError(f"autotune/{name} is not an autotuning result")
    added = 0
    (directory / "tmp").mkdir(parents=True, exist_ok=True)
    for key, files in members.items():
        entry = _entry(key)
        if entry.is_dir():
            continue
        staging = pathlib.Path(tempfile.mkdtemp(dir=directory / "tmp"))
        try:
            for name, content in files.items():
                (staging / name).write_bytes(content)
            entry.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(staging, entry)
                added += 1
            except OSError:
                pass  # another process installed it meanwhile
        finally:
            _remove(staging)
    # (The size limit is kept by the next entry stored, which evicts the entries used
    # longest ago; these were just installed.)
    return added + _install_autotune_results(tuned)


def _is_autotune_name(name: str) -> bool:
    stem, dot, suffix = name.partition(".")
    return dot == "." and suffix == "json" and len(stem) == 24 and set(stem) <= _KEY_CHARACTERS


def _install_autotune_results(tuned: dict) -> int:
    """Autotuning results (the Triton runtime's `autotune/<key>.json`, keyed by kernel
    source and GPU model) that this cache lacks; each must be a result."""
    if not tuned:
        return 0
    directory = pathlib.Path(root()).parent / "autotune"  # targets/triton/runtime.cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    added = 0
    for name, content in tuned.items():  # (checked by load_artifacts)
        path = directory / name
        if path.exists():
            continue
        _write_atomically(path, content)
        added += 1
    return added


def _evict(directory: pathlib.Path, keep: pathlib.Path) -> None:
    """Removes the entries used longest ago until the cache fits its size limit; `keep`
    (the entry just written) stays. Staging directories an hour old (of a process that
    died while storing) go too."""
    import time

    for staging in (directory / "tmp").glob("*"):
        try:
            if staging.stat().st_mtime < time.time() - 3600:
                _remove(staging)
        except OSError:
            continue
    entries = []
    for entry in directory.glob("??/*"):
        if entry == keep:
            continue
        try:
            size = sum(path.stat().st_size for path in entry.iterdir())
            entries.append((entry.stat().st_mtime, size, entry))
        except OSError:
            continue  # removed meanwhile
    kept = sum(path.stat().st_size for path in keep.iterdir())
    total, limit = kept + sum(size for _, size, _ in entries), _size_limit_bytes()
    for _, size, entry in sorted(entries, key=lambda item: item[0]):
        if total <= limit:
            break
        _remove(entry)
        total -= size
