# Lit configuration for Dyno's regression tests (dyno-opt + FileCheck, and Python tests).
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DYNO"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dyno_obj_root, "test")

llvm_config.use_default_substitutions()
for tool_dir in [config.dyno_tools_dir] + config.kit_bin_dirs.split(";"):
    if tool_dir:
        llvm_config.with_environment("PATH", tool_dir, append_path=True)

config.substitutions.append(("%PYTHON", config.python_executable))
llvm_config.with_environment("PYTHONPATH", config.dyno_python_packages_dir, append_path=True)
if not config.enable_bindings_python:
    config.excludes.append("python")

tool_dirs = [config.dyno_tools_dir] + config.kit_bin_dirs.split(";")
llvm_config.add_tool_substitutions(
    [ToolSubst("dyno-opt", unresolved="fatal"), ToolSubst("dyno-translate", unresolved="fatal")],
    tool_dirs)
