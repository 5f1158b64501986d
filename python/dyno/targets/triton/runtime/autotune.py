"""Autotuning (`autotune=True`, or DYNO_AUTOTUNE=1): a launcher times every block-size
configuration of its kernel on the first call and keeps the fastest. The winner is kept
on disk (disk_cache.cache_dir()/autotune) under a hash of the kernel's source,
configuration list and device, so a later process starts with it."""
import json
import os

from .disk_cache import cache_dir

# The autotuning results this process read or wrote (what dyno.save_cache_artifacts
# bundles with the compile cache's entries).
autotune_results_used = set()


def autotune_requested(option) -> bool:
    """`option` where given (a compile's `autotune`, which already defaults to
    DYNO_AUTOTUNE); None (an exported program loaded without it): DYNO_AUTOTUNE."""
    if option is not None:
        return bool(option)
    return os.environ.get("DYNO_AUTOTUNE", "") not in ("", "0")


def _result_path(key: str) -> str:
    path = os.path.join(cache_dir(), "autotune", f"{key}.json")
    autotune_results_used.add(path)
    return path


def tuned_config(key: str, configs: list):
    """The configuration an earlier tuning of kernel `key` chose among `configs` (from
    the disk cache), or None."""
    try:
        with open(_result_path(key)) as file:
            config = json.load(file)["config"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    # (a result for another launch table is retuned)
    return config if config in configs else None


def tune(launch, configs: list, key: str, name: str):
    """The fastest of `configs` (`launch(config)` launches the kernel with one), timed
    here or read from an earlier tuning; None if none could run."""
    config = tuned_config(key, configs)
    if config is not None:
        return config
    from triton.testing import do_bench

    timings = []
    for config in configs:
        try:
            timings.append((do_bench(lambda: launch(config)), config))
        except Exception:  # a configuration the device cannot run (e.g. registers)
            continue
    if not timings:
        return None
    best_time, best = min(timings, key=lambda pair: pair[0])
    path = _result_path(key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"  # whole, or not at all
    with open(temporary, "w") as file:
        json.dump({"kernel": name, "config": best, "ms": best_time,
                   "timings": [[t, c] for t, c in timings]}, file)
    os.replace(temporary, path)
    return best
