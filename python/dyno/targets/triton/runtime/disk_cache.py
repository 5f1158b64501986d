"""Where the runtime keeps files across processes: kernels sources by content and
autotuning results (DYNO_CACHE_DIR, by default ~/.cache/dyno)."""
import hashlib
import os


def cache_dir() -> str:
    root = os.environ.get("DYNO_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "dyno")
    os.makedirs(root, exist_ok=True)
    return root


def write_kernels(source: str) -> str:
    """Stores a kernels source in the cache directory (by content) and returns its path."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    directory = os.path.join(cache_dir(), "kernels")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"kernels_{digest}.py")
    if not os.path.exists(path):
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as file:
            file.write(source)
        os.replace(temporary, path)
    return path
