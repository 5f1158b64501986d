"""Prints the CMake cache arguments that point a Dyno build at the pinned LLVM/MLIR kit.

The xtc-* wheels install `llvm/` and `mlir/` trees into site-packages; this script finds them
for the running interpreter so that `cmake $(python externals/llvm-kit/find_kit.py) ...` works
in any virtual environment. Pass MLIR_DIR/LLVM_DIR yourself to use another MLIR build.
"""
import pathlib
import site
import sys


def kit_root() -> pathlib.Path:
    for p in site.getsitepackages() + [site.getusersitepackages()]:
        root = pathlib.Path(p)
        if (root / "mlir" / "lib" / "cmake" / "mlir" / "MLIRConfig.cmake").exists():
            return root
    sys.exit("find_kit.py: the LLVM/MLIR kit is not installed; "
             "pip install -r externals/llvm-kit/requirements.txt")


def main() -> None:
    root = kit_root()
    import nanobind

    print(" ".join([
        f"-DMLIR_DIR={root / 'mlir/lib/cmake/mlir'}",
        f"-DLLVM_DIR={root / 'llvm/lib/cmake/llvm'}",
        f"-DLLVM_EXTERNAL_LIT={pathlib.Path(sys.executable).parent / 'lit'}",
        f"-DPython3_EXECUTABLE={sys.executable}",
        f"-Dnanobind_DIR={nanobind.cmake_dir()}",
        f"-DDYNO_KIT_BIN_DIRS={root / 'mlir/bin'};{root / 'llvm/bin'}",
    ]))


if __name__ == "__main__":
    main()
