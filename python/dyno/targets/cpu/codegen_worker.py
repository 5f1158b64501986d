"""LLVM code generation for the CPU target, in a worker process (issue 52).

LLVM's code generator can crash or assert on IR it meets for the first time (a CPU's
features it was never run for); in the user's process that ends the program. So the
JIT's work runs here instead: the user's process sends each part of a graph's kernels
(LLVM-dialect bytecode) and gets back the object code, which it links into a shared
library and loads (jit.py). A worker that dies or fails raises
DynoCompileError("jit", ...), and the graph runs eagerly with a warning.

One worker serves the process: started when the CPU target first lowers a graph
(`start`), reused for every later compile, started again after one died. It compiles a
request's parts at once, one thread each (dyno._mlir_libs._dynoParallelJit), as the JIT
did in the process before; it imports Dyno's MLIR package alone (not torch).

DYNO_CODEGEN_FAULT (read by the worker when it starts) injects a fault, for tests:
`abort` aborts the worker (SIGABRT, as an LLVM assertion does) and `segfault` crashes it
(SIGSEGV) on its next compile; `error` makes that compile fail.

Run as a script, this file is the worker: it reads requests from stdin and writes
replies to stdout, each a pickle after its length (8 bytes, little endian). Given a
folder (`python codegen_worker.py FOLDER`), it compiles the request a failed compile
wrote there: the reproducer that the DynoCompileError names.
"""
import atexit
import json
import os
import pickle
import select
import shlex
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from typing import List, Optional

# The longest one compile may take before the worker is taken for hung.
TIMEOUT_S = 900.0
# How much of the worker's stderr a DynoCompileError quotes.
STDERR_TAIL = 4000

_HEADER = struct.Struct("<Q")


def _write_message(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


# -- the user's process ----------------------------------------------------------------

class _Worker:
    """A worker process and its pipes; its stderr goes to an unnamed file."""

    def __init__(self):
        self.stderr = tempfile.TemporaryFile()
        self.owner = os.getpid()
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, close_fds=True)

    def alive(self) -> bool:
        return self.process.poll() is None

    def compile(self, request, timeout: float):
        """The worker's reply to `request`; raises _WorkerDied when it dies first."""
        self.stderr.seek(0)
        self.stderr.truncate()
        try:
            _write_message(self.process.stdin, request)
        except (BrokenPipeError, OSError):
            raise _WorkerDied("it had exited") from None
        deadline = time.monotonic() + timeout
        size = _HEADER.unpack(self._read(_HEADER.size, deadline))[0]
        return pickle.loads(self._read(size, deadline))

    def _read(self, size: int, deadline: float) -> bytes:
        descriptor = self.process.stdout.fileno()
        chunks, left = [], size
        while left:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([descriptor], [], [], remaining)[0]:
                raise _WorkerDied(f"no reply in {TIMEOUT_S:.0f} s")
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                raise _WorkerDied("it exited")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace").strip()
        return text[-STDERR_TAIL:]

    def close(self) -> None:
        """Ends the worker (it exits when its stdin closes; killed if it does not)."""
        if self.owner != os.getpid():
            return  # a forked child's copy: the parent's worker, not this process's
        try:
            self.process.stdin.close()
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.stderr.close()


class _WorkerDied(Exception):
    pass


_worker: Optional[_Worker] = None
_worker_lock = threading.Lock()


def _current() -> _Worker:
    """This process's worker, started if there is none (or it died, or it is a forked
    parent's). Under _worker_lock."""
    global _worker
    if _worker is None or _worker.owner != os.getpid() or not _worker.alive():
        if _worker is not None and _worker.owner == os.getpid():
            _worker.close()
        _worker = _Worker()
    return _worker


def start() -> None:
    """Starts the worker ahead of the first compile, so that its start (a third of a
    second: Python, Dyno's MLIR package, a first compile) overlaps the pass pipelines."""
    with _worker_lock:
        _current()


def stop() -> None:
    """Ends the worker; the next compile starts a fresh one (which reads the environment
    anew, DYNO_CODEGEN_FAULT included)."""
    global _worker
    with _worker_lock:
        if _worker is not None:
            _worker.close()
            _worker = None


if __name__ != "__main__":
    atexit.register(stop)  # (a worker would exit when its stdin closes; this waits for it)


def compile_objects(parts: List[bytes], entries: List[str], opt_level: int,
                    shared_libs: List[str], enable_pic: bool) -> List[bytes]:
    """The object code of each of `parts` (LLVM-dialect modules as bytecode, none
    defining a symbol another defines), compiled at once as MLIR's ExecutionEngine does
    (looking up `entries[i]` in part i) with `shared_libs` to resolve symbols from.
    Raises DynoCompileError("jit", ...) when the worker fails or dies."""
    from ...errors import DynoCompileError

    global _worker
    request = (parts, entries, opt_level, shared_libs, enable_pic)
    with _worker_lock:
        worker = _current()
        try:
            reply = worker.compile(request, TIMEOUT_S)
        except _WorkerDied as died:
            worker.process.kill()
            code = worker.process.wait()
            cause = (f"killed by {signal.Signals(-code).name}" if code < 0
                     else f"exit status {code}")
            tail = worker.stderr_tail()
            worker.close()
            _worker = None
            raise DynoCompileError(
                "jit", f"LLVM's code generation died ({died}; {cause})"
                + (f":\n{tail}" if tail else ""), _reproducer(request)) from None
        except BaseException:
            # Interrupted mid-request (KeyboardInterrupt): its reply would be read by
            # the next request, so this worker goes.
            worker.close()
            _worker = None
            raise
        tail = worker.stderr_tail()
    status, payload = reply
    if status != "ok":
        raise DynoCompileError("jit", f"{payload}" + (f"\n{tail}" if tail else ""),
                               _reproducer(request))
    if tail:  # what LLVM printed, as it did when it ran in this process
        sys.stderr.write(tail + "\n")
    return payload


def _reproducer(request) -> str:
    """A command that compiles `request` again, alone: its parts and settings written
    to a new folder (the parts as MLIR bytecode, which dyno-opt reads too)."""
    parts, *settings = request
    try:
        folder = tempfile.mkdtemp(prefix="dyno-codegen-")
        for index, part in enumerate(parts):
            with open(os.path.join(folder, f"part{index}.mlirbc"), "wb") as handle:
                handle.write(part)
        with open(os.path.join(folder, "settings.json"), "w") as handle:
            json.dump(settings, handle)
    except OSError:
        return ""
    return shlex.join([sys.executable, os.path.abspath(__file__), folder])


# -- the worker ------------------------------------------------------------------------

def _compile(parts, entries, opt_level, shared_libs, enable_pic) -> List[bytes]:
    from dyno import ir
    from dyno._mlir_libs._dynoParallelJit import compile_at_once

    with ir.Context():
        modules = [ir.Module.parse(part) for part in parts]
        engines = compile_at_once(modules, entries, opt_level=opt_level,
                                  shared_libs=shared_libs, enable_pic=enable_pic)
        with tempfile.TemporaryDirectory() as scratch:
            codes = []
            for index, engine in enumerate(engines):
                path = os.path.join(scratch, f"part{index}.o")
                engine.dump_to_object_file(path)
                with open(path, "rb") as handle:
                    codes.append(handle.read())
        del engines, modules
    return codes


_WARM_UP = b"""llvm.func @warm_up(%x: f32) -> f32 {
  %y = llvm.fmul %x, %x : f32
  llvm.return %y : f32
}"""


def _inject_fault(fault: str) -> None:
    if fault == "abort":
        os.abort()
    if fault == "segfault":
        import ctypes

        ctypes.string_at(0)
    if fault == "error":
        raise RuntimeError("DYNO_CODEGEN_FAULT=error")


def serve() -> None:
    """Answers requests from stdin until it closes."""
    # The protocol has stdout to itself: what LLVM prints goes to stderr.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    # Ctrl-C in a terminal reaches the whole process group: the user's process decides.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    fault = os.environ.get("DYNO_CODEGEN_FAULT", "")
    # Warmed up now, while the user's process is still lowering its first graph: a
    # process's first compile sets LLVM up (without this, GPT-2's first graph took
    # 0.13 s longer to compile than in the user's process; with it, as long).
    _compile([_WARM_UP], ["warm_up"], 3, [], True)

    requests = sys.stdin.buffer
    while True:
        header = requests.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        arguments = pickle.loads(requests.read(_HEADER.unpack(header)[0]))
        try:
            _inject_fault(fault)
            reply = ("ok", _compile(*arguments))
        except Exception as error:  # noqa: BLE001 (the user's process raises it)
            reply = ("error", f"{type(error).__name__}: {error}")
        _write_message(replies, reply)


def _bootstrap() -> None:
    """Makes `dyno` this file's package without running its __init__ (which imports
    torch, a second and 300 MB that code generation does not need)."""
    import types

    sys.path.pop(0)  # this file's folder: its modules are not top-level ones
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    dyno = types.ModuleType("dyno")
    dyno.__path__ = [package]
    sys.modules["dyno"] = dyno


def reproduce(folder: str) -> None:
    """Compiles what _reproducer wrote to `folder`, in this process."""
    names = sorted((name for name in os.listdir(folder) if name.endswith(".mlirbc")),
                   key=lambda name: int(name[len("part"):-len(".mlirbc")]))
    parts = []
    for name in names:
        with open(os.path.join(folder, name), "rb") as handle:
            parts.append(handle.read())
    with open(os.path.join(folder, "settings.json")) as handle:
        settings = json.load(handle)
    codes = _compile(parts, *settings)
    print(f"compiled {len(codes)} parts: {[len(code) for code in codes]} bytes of code")


if __name__ == "__main__":
    _bootstrap()
    if len(sys.argv) > 1:
        reproduce(sys.argv[1])
    else:
        serve()
