"""A graph's kernels file: its launch table, its import (compiled or interpreted), and
its kernels' launchers, shared with other graphs' kernels equal up to their names (Triton
compiles each distinct kernel once: its own caches key a kernel by its source, name
included)."""
import hashlib
import importlib.util
import json
import sys
import threading
import weakref

import torch

from .compile_check import compile_check_targets
from .float32_products import Float32Products
from .compile_pool import compile_pool
from .interpreter import correct_the_interpreter, interpreted
from .launch import Launcher

_lock = threading.Lock()


# The launch table a kernels file ends with, `KERNELS = {name: entry}`, printed by
# lib/Target/Triton/TranslateToTriton.cpp after `LAUNCH_TABLE_VERSION = <n>`. This is its
# one declaration; test/python/launch_table.py checks the printer against it. Per kernel:
#   args         per argument the kernel takes, in dyno.launch's ABI order (a pointer per
#                argument and per result of the kernel it lowers, sizes of dynamic
#                dimensions among them), the torch dtype name of the tensor a pointer
#                points to ("float32"), "int" for an integer, or None where no dtype is
#                known (a signless i8, unsigned types)
#   xnumel       the parallel index space's size (static sizes)
#   rnumel       the reduced index space's size per program (1: no reduction)
#   xnumel_args  optional: the positions of the size arguments whose product is xnumel at
#                run time (dynamic shapes)
#   configs      block-size configurations ({"XBLOCK": .., "RBLOCK": .., "num_warps": ..}),
#                the compiler's heuristic choice first
#   key          optional: the kernel's key (dyno-key-kernels, KernelIdentity.h: kernels
#                equal up to their names share it), absent where it cannot be shared
LAUNCH_TABLE_VERSION = 3
LAUNCH_TABLE_FIELDS = {"args": True, "xnumel": True, "rnumel": True,  # name -> required
                       "xnumel_args": False, "configs": True, "key": False}


class LaunchTableError(RuntimeError):
    """A kernels file whose launch table this runtime does not read."""


def check_launch_table(module) -> None:
    """Raises LaunchTableError unless `module` (an imported kernels file) has a launch
    table of LAUNCH_TABLE_VERSION with exactly the fields it declares."""
    version = getattr(module, "LAUNCH_TABLE_VERSION", None)
    if version != LAUNCH_TABLE_VERSION:
        raise LaunchTableError(
            f"kernels file {getattr(module, '__file__', module)!r} has launch table version "
            f"{version}; this runtime reads version {LAUNCH_TABLE_VERSION} (kernels and "
            "runtime from different Dyno builds?)")
    for name, entry in getattr(module, "KERNELS", {}).items():
        missing = [f for f, required in LAUNCH_TABLE_FIELDS.items()
                   if required and f not in entry]
        unknown = [f for f in entry if f not in LAUNCH_TABLE_FIELDS]
        if missing or unknown or not hasattr(module, name):
            raise LaunchTableError(
                f"launch table entry {name!r}: missing {missing}, unknown {unknown}"
                + ("" if hasattr(module, name) else ", and no such kernel"))


def import_kernels(path: str, source: bytes, interpret: bool):
    """Imports a kernels file whose content is `source` (Triton reads kernels' source
    through `inspect`, so they must live in a real file)."""
    digest = hashlib.sha256(source).hexdigest()[:16]
    name = f"dyno_triton_kernels_{digest}_{'interpreted' if interpret else 'compiled'}"
    with _lock:
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        if interpret:
            correct_the_interpreter()
        with interpreted(interpret):
            spec.loader.exec_module(module)
        sys.modules[name] = module
        return module


# Launchers by kernel: its key (computed from its IR by dyno-key-kernels), its
# launch-table entry and how it runs. Weak: a launcher lives while a graph that
# launches it does.
_shared_launchers = weakref.WeakValueDictionary()


def _sharing_key(entry: dict, how: str):
    """What kernels equal up to their names share: the key dyno-key-kernels computed from
    the kernel's IR (its launch-table entry's "key"), with the rest of its entry and
    `how` it runs; None for a kernel without a key (it cannot be shared). Two kernels
    files print one IR alike (the translation is a function of the IR), so a launcher
    made from either runs both."""
    key = entry.get("key")
    if key is None:
        return None
    rest = json.dumps({field: value for field, value in entry.items() if field != "key"},
                      sort_keys=True)
    return hashlib.sha256("\0".join([key, rest, how]).encode()).hexdigest()


class TritonKernels:
    """The kernels of one graph, by name, ready to launch on `device`. `shared`: how many
    of them launch through a launcher an earlier graph of this process made. With
    `compile_threads` > 1, the kernels whose signatures the launch table gives compile
    ahead of their first launch on that many threads (`compiled_ahead` of them).
    `check_failed`: the exception an interpreted kernel's failed index check raises (the
    host runtime's CheckFailed: the call then runs eagerly, which raises eager's error)."""

    def __init__(self, kernels_path: str, device: torch.device, autotune: bool = False,
                 compile_threads: int = 1, check_failed=None):
        interpret = torch.device(device).type == "cpu"
        with open(kernels_path, "rb") as file:
            source = file.read()
        self.module = import_kernels(kernels_path, source, interpret)
        check_launch_table(self.module)
        device_name = "interpreter" if interpret else torch.cuda.get_device_name(device)
        check_targets = compile_check_targets() if interpret else []
        twins = import_kernels(kernels_path, source, False) if check_targets else None
        digest = hashlib.sha256(source).hexdigest()[:24]
        how = json.dumps([device_name, str(device), interpret, autotune, check_targets])
        self.launchers = {}
        own_launchers = []
        self.shared = 0
        for name, entry in self.module.KERNELS.items():
            sharing = _sharing_key(entry, how)
            with _lock:
                launcher = _shared_launchers.get(sharing) if sharing else None
                if launcher is not None:
                    self.launchers[name] = launcher
                    # (Kernels of this graph that print alike share one too; only
                    # other graphs' are counted. Copies of two element types differ in
                    # their entries' args.)
                    self.shared += all(launcher is not own for own in own_launchers)
                    continue
                key = hashlib.sha256(source + name.encode() + json.dumps(entry).encode()
                                     + device_name.encode()).hexdigest()[:24]
                check = (getattr(twins, name), digest, check_targets) if twins else None
                launcher = Launcher(getattr(self.module, name), entry, interpret, autotune,
                                    key, compile_check=check, check_failed=check_failed)
                self.launchers[name] = launcher
                own_launchers.append(launcher)
                if sharing:
                    _shared_launchers[sharing] = launcher
        # The graph's float32 products on the tensor cores (float32_products.py).
        self.float32_products = Float32Products(device, interpret, autotune, check_targets)
        self.compiled_ahead = 0
        if compile_threads > 1:
            pool = compile_pool(compile_threads)
            self.compiled_ahead = sum(launcher.compile_ahead(pool, device)
                                      for launcher in own_launchers)

    def __getitem__(self, name: str) -> Launcher:
        return self.launchers[name]
