# RUN: %PYTHON %s | FileCheck %s
# dyno-key-kernels' keys (KernelIdentity.h), which the CPU JIT and the Triton runtime
# share kernels by across graphs and processes: equal for kernels equal up to their
# names, different for a different constant, 32 hex digits, and the same in two
# processes (so a key may name a kernel in a library the compile cache stores).
import os
import re
import subprocess

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Dialect", "Dyno",
                      "dyno-key-kernels.mlir")


def keys():
    printed = subprocess.run(["dyno-opt", "--dyno-key-kernels", SOURCE], check=True,
                             capture_output=True, text=True).stdout
    return dict(re.findall(r'func\.func @(\w+)\(.*dyno\.kernel_key = "(\w+)"', printed))


first, second = keys(), keys()
print("stable across processes:", first == second)
print("twins share:", first["scale"] == first["scale_again"])
print("another constant, another key:", first["scale"] != first["scale_by_3"])
print("32 hex digits:", all(re.fullmatch(r"[0-9a-f]{32}", key) for key in first.values()))
print("keyed:", sorted(first))
# CHECK: stable across processes: True
# CHECK: twins share: True
# CHECK: another constant, another key: True
# CHECK: 32 hex digits: True
# CHECK: keyed: ['exp_kernel', 'scale', 'scale_again', 'scale_by_3']
