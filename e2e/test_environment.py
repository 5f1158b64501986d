"""Dyno's environment variables live in one table (python/dyno/environment.py): every
DYNO_* name the package reads is in it, compile-side code reads them through it, and the
two that default options (DYNO_AUTOTUNE, DYNO_CACHE) lose to an option the user passes."""
import pathlib
import re

import pytest

from dyno import environment
from dyno.driver.compiler import CompileOptions

PACKAGE = pathlib.Path(environment.__file__).parent
# Files that read os.environ themselves: shipped with exported programs (they import
# nothing of dyno), or run in a worker that imports no torch.
SELF_CONTAINED = ("targets/host_runtime.py", "targets/triton/runtime/",
                  "targets/cpu/codegen_worker.py")


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path.read_text()


def test_every_variable_the_package_names_is_in_the_table():
    named = {}
    for relative, source in _sources():
        if relative != "environment.py":
            for name in re.findall(r"\bDYNO_[A-Z0-9_]+\b", source):
                named.setdefault(name, relative)
    missing = {name: where for name, where in named.items()
               if name not in environment.VARIABLES}
    assert not missing, f"DYNO_* names outside environment.VARIABLES: {missing}"
    # Every entry documents a variable some module reads.
    assert set(environment.VARIABLES) <= set(named), set(environment.VARIABLES) - set(named)


def test_compile_side_code_reads_variables_through_the_table():
    direct = re.compile(r"os\.environ(?:\.get)?[\[(]\s*[\"']DYNO_|os\.getenv\(\s*[\"']DYNO_")
    offenders = [relative for relative, source in _sources()
                 if direct.search(source) and relative != "environment.py"
                 and not relative.startswith(SELF_CONTAINED)]
    assert not offenders, f"read DYNO_* from os.environ directly: {offenders}"


def test_unknown_variables_are_errors_and_empty_means_default(monkeypatch):
    with pytest.raises(KeyError):
        environment.get("DYNO_NOT_A_VARIABLE")
    monkeypatch.setenv("DYNO_CACHE_SIZE_MB", "")
    assert environment.get("DYNO_CACHE_SIZE_MB") == "1024"
    monkeypatch.setenv("DYNO_CACHE_SIZE_MB", "7")
    assert environment.get("DYNO_CACHE_SIZE_MB") == "7"
    assert "| `DYNO_AUTOTUNE` |" in environment.table()


@pytest.mark.parametrize("variable, option, off, on", [
    ("DYNO_AUTOTUNE", "autotune", "0", "1"),
    ("DYNO_CACHE", "cache", "0", "1"),
])
def test_variables_are_defaults_of_options_the_user_overrides(monkeypatch, variable, option,
                                                              off, on):
    monkeypatch.setenv(variable, on)
    assert getattr(CompileOptions.from_user({}), option) is True
    assert getattr(CompileOptions.from_user({option: False}), option) is False
    monkeypatch.setenv(variable, off)
    assert getattr(CompileOptions.from_user({}), option) is False
    assert getattr(CompileOptions.from_user({option: True}), option) is True


def test_an_exported_programs_autotuning_follows_its_argument_then_the_variable(monkeypatch):
    from dyno.targets.triton.runtime import autotune_requested
    monkeypatch.setenv("DYNO_AUTOTUNE", "1")
    assert autotune_requested(None) and not autotune_requested(False)
    monkeypatch.setenv("DYNO_AUTOTUNE", "0")
    assert not autotune_requested(None) and autotune_requested(True)


def test_the_readmes_table_is_the_tables():
    readme = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert environment.table() in readme
