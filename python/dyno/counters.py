"""Counters users read with ``dyno.stats()``: what was compiled, what fell back and why."""
import collections
import threading

_lock = threading.Lock()
_counters = collections.Counter()
_fallback_reasons = []
_split_reasons = []
_eager_ops = collections.Counter()
_library_calls = collections.Counter()


def bump(name: str, amount: int = 1) -> None:
    with _lock:
        _counters[name] += amount


def record_fallback(reason: str) -> None:
    with _lock:
        _counters["fallback_graphs"] += 1
        _fallback_reasons.append(reason)


def record_runtime_fallback(reason: str) -> None:
    with _lock:
        _counters["runtime_fallbacks"] += 1
        _fallback_reasons.append(reason)


def record_split(reason: str) -> None:
    """A graph compiled in pieces: why its whole-graph compile failed."""
    with _lock:
        _counters["split_graphs"] += 1
        _split_reasons.append(reason)


def record_library_call(name: str) -> None:
    with _lock:
        _library_calls[name] += 1


def record_eager_op(name: str) -> None:
    with _lock:
        _eager_ops[name] += 1


def stats() -> dict:
    """Returns a snapshot of Dyno's counters.

    Keys: ``compiled_graphs`` (graphs that run Dyno code), ``fallback_graphs`` (graphs run
    eagerly after a compile failure), ``kernels`` (kernels generated), ``extern_calls``
    (calls into libraries placed in compiled graphs: contractions, `dyno.contraction`,
    and ATen routines, `dyno.library_call`), ``runtime_fallbacks``
    (compiled graphs that failed when run and switched to eager),
    ``compiled_forward_graphs`` / ``compiled_backward_graphs`` (once any was compiled),
    ``dynamic_graphs`` (compiled graphs with symbolic sizes, once any was compiled),
    ``partially_compiled_graphs`` (graphs compiled except for some ops run eagerly),
    ``split_graphs`` (graphs whose whole-graph compile failed and whose every op then
    compiled in several smaller graphs: nothing runs eagerly, but kernels are not fused
    across the parts; once any was split; ``split_reasons`` says why, one string each),
    ``fallback_ops`` (ATen op name -> how many partly compiled graphs run it eagerly),
    ``library_calls`` (ATen op name -> how many compiled graphs call it as a library
    routine, dyno.library_call: LAPACK, pocketfft), ``shared_kernels`` (kernels a graph
    launches from an earlier graph's compile in this process instead of compiling them
    again, once any was), ``jit_parts`` (the parts that CPU graphs whose own kernels were
    split for LLVM to compile at once were split into, once any was),
    ``kernels_compiled_ahead`` (Triton kernels compiled on the compile threads before
    their first launch, once any was), and
    ``fallback_reasons`` (one string per fallback, in order).
    """
    with _lock:
        result = {
            "compiled_graphs": 0,
            "fallback_graphs": 0,
            "kernels": 0,
            "extern_calls": 0,
            "runtime_fallbacks": 0,
            "partially_compiled_graphs": 0,
        }
        result.update(_counters)
        result["fallback_reasons"] = list(_fallback_reasons)
        if _split_reasons:
            result["split_reasons"] = list(_split_reasons)
        result["fallback_ops"] = dict(_eager_ops)
        result["library_calls"] = dict(_library_calls)
        return result


def reset_stats() -> None:
    """Clears every counter and the list of fallback reasons."""
    with _lock:
        _counters.clear()
        _fallback_reasons.clear()
        _split_reasons.clear()
        _eager_ops.clear()
        _library_calls.clear()
