"""Where a host wrapper's buffers live: released at their last read, and kept from call
to call in a per-graph workspace.

Both work on the wrapper's statements (`Statement`, in order) as the builder
(wrapper.WrapperBuilder) makes them from the host function's operations, before the
wrapper is printed. A statement carries what its operation says about the memory of what
it defines (new memory, a view of one name, a static layout that a workspace slot can
hold), as Inductor's wrapper keeps its memory-planning lines as objects:

- `release_dead_names`: `del` after each variable's last read, as Inductor's wrappers do,
  so that a buffer goes back to the allocator as soon as nothing reads it (peak memory is
  what is live at once, not every intermediate of the graph).
- `plan_workspace`: each statically shaped intermediate that does not escape the
  call (no returned value can alias it) gets a slot of the graph's `Workspace`: buffers
  whose lives do not overlap share a slot, and the slots are allocated once and kept from
  call to call. A fresh large tensor page-faults on first touch every call (glibc hands
  large frees back to the kernel): on Llama's SwiGLU kernel (512x1024 f32 output, 2
  threads) 632 us with a fresh output against 186 us with a reused one. Inductor reuses
  buffers within a call; the workspace also reuses them across calls, as CUDA graphs'
  static memory does. Matmul results are planned too (`out=`). On a GPU an allocation
  costs the host 7 us (torch.empty on an H200 server, against 2.4 us for Inductor's
  `empty_strided_cuda`), which the workspace saves on every call; its sets are kept per
  CUDA stream (host_runtime.Workspace).

Aliasing is judged conservatively: what a statement defines may alias everything it
reads, unless the statement says it is new memory (`fresh`: allocations, library
products, copies). Which names a statement reads is read from its Python code with
Python's tokenizer (names inside string literals are not read).
"""
import dataclasses
import functools
import io
import math
import tokenize
from typing import Callable, Dict, List, Optional, Tuple

import torch

from .host_runtime import Workspace


@dataclasses.dataclass
class Statement:
    """One statement of a wrapper's body: `defines = expression`, or `expression` alone
    where it defines nothing.

    `fresh`: what it defines is new memory, never a view of what it reads. `view_of`: it
    defines one name, a view (never a copy) of that name. `holds_memory`: False where it
    defines host scalars (sizes, shapes, constants), which no tensor memory backs. `layout`: the static (shape,
    dtype) of the one tensor it defines, which a workspace slot can hold, and
    `into_slot(slot)` the statement that puts it there (`slot` is `_ws[k]`); an
    allocation becomes the slot itself (`name = _ws[k]`). `returns`: the function's return.
    `collective`: an asynchronous collective, which may read its buffers after the
    statement. `strided`: the (shape, strides, offset) in elements of a static view of
    `view_of` (`_view`), which a workspace makes once where `view_of` is in a slot."""
    expression: str
    defines: Tuple[str, ...] = ()
    fresh: bool = False
    view_of: Optional[str] = None
    strided: Optional[Tuple[Tuple[int, ...], Tuple[int, ...], int]] = None
    holds_memory: bool = True
    layout: Optional[Tuple[Tuple[int, ...], torch.dtype]] = None
    into_slot: Optional[Callable[[str], str]] = None
    returns: bool = False
    collective: bool = False
    slot: Optional[str] = None  # `_ws[k]` once plan_workspace placed it

    @property
    def text(self) -> str:
        """The statement as the wrapper prints it."""
        if self.slot is not None:
            return self.into_slot(self.slot)
        if self.defines:
            return f"{', '.join(self.defines)} = {self.expression}"
        return self.expression

    @functools.cached_property
    def names(self) -> frozenset:
        """Every name the expression uses, tokenized once (the expression is not changed
        after the statement is made)."""
        return frozenset(token.string for token in tokenize.generate_tokens(
            io.StringIO(self.expression).readline) if token.type == tokenize.NAME)

    def reads(self, defined) -> set:
        """The names in `defined` that the statement reads (in a slot it reads the same
        ones: the slot, `_ws[k]`, is not a variable of the body)."""
        return self.names & defined


def _holds_no_memory(statement: Statement, holding_none: set, defined) -> bool:
    """Whether the one name `statement` defines holds no memory of its own: a host
    scalar, a workspace slot or a product written into one (`out=` returns the slot;
    the workspace keeps it from call to call), a view of `call`'s arguments (which the
    caller holds) or of such a view. Releasing one frees nothing, so its `del` would only
    cost time (about 0.25 us a statement)."""
    if len(statement.defines) != 1:
        return False
    if not statement.holds_memory:
        return True
    if statement.slot is not None:  # the slot itself, or a product written into it
        return True
    source = statement.view_of
    return source is not None and (source not in defined or source in holding_none)


def release_dead_names(statements: List[Statement]) -> List[Statement]:
    """`statements` with `del` after each variable's last read. `call`'s own arguments
    are left alone (the caller holds them), as are variables that hold no memory of their
    own (`_holds_no_memory`); a variable never read (a library call's unused result) is
    released at once."""
    defined = {name for statement in statements for name in statement.defines}
    reads = [statement.reads(defined) for statement in statements]
    # Walking backwards: a name is dead after statement i if no later statement reads it
    # before (re)defining it.
    live = set()
    releases = [[] for _ in statements]
    for i in range(len(statements) - 1, -1, -1):
        if statements[i].returns:
            live |= reads[i]
            continue
        for name in statements[i].defines:
            if name not in live:
                releases[i].append(name)
            live.discard(name)
        for name in sorted(reads[i]):
            if name not in live and name not in statements[i].defines:
                releases[i].append(name)
            live.add(name)
    result, holding_none = [], set()
    for statement, names in zip(statements, releases):
        result.append(statement)
        if _holds_no_memory(statement, holding_none, defined):
            holding_none.add(statement.defines[0])
        else:
            holding_none.difference_update(statement.defines)
        names = [name for name in names if name not in holding_none]
        if names:
            result.append(Statement(f"del {', '.join(sorted(names))}"))
    return result


class _Groups:
    """Union-find over variable versions (each assignment makes a new version)."""

    def __init__(self):
        self.parent: List[int] = []

    def new(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def plan_workspace(statements: List[Statement]) -> Optional[Workspace]:
    """Places each plannable result of `statements` (a static `layout` with `into_slot`)
    that no returned value can alias in a slot of a `Workspace` (sets `Statement.slot`)
    and returns it (None if nothing is planned). A graph with collectives plans nothing:
    an asynchronous collective may still read a buffer after its last statement."""
    if any(statement.collective for statement in statements):
        return None
    defined = {name for statement in statements for name in statement.defines}
    groups = _Groups()
    current: Dict[str, int] = {}  # name -> its version now
    first_use: List[int] = []  # per version
    last_use: List[int] = []
    roots = []  # (statement index, version) of each plannable result
    escaping = set()
    for i, statement in enumerate(statements):
        read_versions = [current[name] for name in statement.reads(defined)
                         if name in current]
        for version in read_versions:
            last_use[version] = i
        if statement.returns:
            escaping.update(read_versions)
            continue
        for name in statement.defines:
            version = groups.new()
            first_use.append(i)
            last_use.append(i)
            current[name] = version
            if not statement.fresh:
                for read in read_versions:
                    groups.union(version, read)
            if statement.layout is not None and statement.into_slot is not None \
                    and len(statement.defines) == 1:
                roots.append((i, version))
    # A group's life: from its first definition to its last read.
    start: Dict[int, int] = {}
    end: Dict[int, int] = {}
    for version in range(len(first_use)):
        group = groups.find(version)
        start[group] = min(start.get(group, first_use[version]), first_use[version])
        end[group] = max(end.get(group, last_use[version]), last_use[version])
    escaped_groups = {groups.find(v) for v in escaping}

    slot_bytes: List[int] = []
    slot_free_after: List[int] = []  # the statement after which each slot is free again
    views = []
    for i, version in roots:
        group = groups.find(version)
        shape, dtype = statements[i].layout
        nbytes = math.prod(shape) * dtype.itemsize
        if group in escaped_groups or nbytes == 0:
            continue
        # Best fit among the slots free before this statement (within 2x of the size).
        best = None
        for slot, size in enumerate(slot_bytes):
            if slot_free_after[slot] < start[group] and nbytes <= size <= 2 * nbytes \
                    and (best is None or size < slot_bytes[best]):
                best = slot
        if best is None:
            best = len(slot_bytes)
            slot_bytes.append(nbytes)
            slot_free_after.append(-1)
        slot_free_after[best] = end[group]
        statements[i].slot = f"_ws[{len(views)}]"
        views.append((best, tuple(shape), dtype))
    _plan_static_views(statements, views)
    return Workspace(slot_bytes, views) if views else None


def _plan_static_views(statements: List[Statement], views: list) -> None:
    """A static view (`_view`) of a buffer in a slot is made once with the slot, as a
    further view of the workspace's set, not on every call (1.1 us each on 2 CPU
    threads; Swin f32 made 35 per call)."""
    # A buffer in a slot -> (slot, dtype); `_view`'s offset counts from its start, which
    # is the slot's.
    placed: Dict[str, Tuple[int, torch.dtype]] = {}
    for statement in statements:
        if statement.slot is not None and len(statement.defines) == 1:
            entry = views[int(statement.slot[len("_ws["):-1])]
            placed[statement.defines[0]] = (entry[0], entry[2])
            continue
        for name in statement.defines:
            placed.pop(name, None)  # (redefined: no longer the slot's view)
        if statement.strided is None or statement.view_of not in placed \
                or len(statement.defines) != 1:
            continue
        slot, dtype = placed[statement.view_of]
        shape, strides, offset = statement.strided
        name = statement.defines[0]
        statement.slot = f"_ws[{len(views)}]"
        statement.into_slot = lambda slot_view, name=name: f"{name} = {slot_view}"
        views.append((slot, tuple(shape), dtype, tuple(strides), offset))
