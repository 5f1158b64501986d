# RUN: %PYTHON %s %t | FileCheck %s
# The launch table (KERNELS) that dyno-write-triton prints, read against its one
# declaration, targets/triton/runtime.py's LAUNCH_TABLE_FIELDS: every field the printer
# writes is declared, every required one is written, and a table of another version or
# with a field the runtime does not know is refused with the reason.
import importlib.util
import os
import subprocess
import sys

from dyno.targets.triton import runtime

GRAPHS = {
    "static": ("tensor<4x128xf32>", "math.tanh"),
    "dynamic": ("tensor<?x128xf32>", "math.exp"),  # xnumel from size arguments
}
TEMPLATE = """
func.func @main(%x: {t}) -> {t} {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : {t}
  %e = tensor.empty(%n) : tensor<?x128xf32>
  %y = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                         affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%x : {t}) outs(%e : tensor<?x128xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %r = {op} %a : f32
    linalg.yield %r : f32
  }} -> tensor<?x128xf32>
  %s = tensor.cast %y : tensor<?x128xf32> to {t}
  return %s : {t}
}}
"""


def load(path, source):
    with open(path, "w") as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


directory = sys.argv[1]
os.makedirs(directory, exist_ok=True)
for name, (tensor_type, op) in GRAPHS.items():
    kernels = os.path.join(directory, f"{name}_kernels.py")
    subprocess.run(["dyno-opt", "--pass-pipeline=builtin.module(dyno-triton-pipeline,"
                    f"dyno-write-triton{{file={kernels}}})", "-o", os.devnull],
                   input=TEMPLATE.format(t=tensor_type, op=op), text=True, check=True)
    with open(kernels) as handle:
        source = handle.read()
    module = load(kernels, source)
    runtime.check_launch_table(module)
    fields = sorted(set().union(*(entry.keys() for entry in module.KERNELS.values())))
    print(name, len(module.KERNELS), fields,
          *(",".join(map(str, entry["args"])) for entry in module.KERNELS.values()))
    # CHECK: static 1 ['args', 'configs', 'key', 'rnumel', 'xnumel'] float32,float32
    # CHECK: dynamic 1 ['args', 'configs', 'key', 'rnumel', 'xnumel', 'xnumel_args']
    # CHECK-SAME: float32,int,float32,int,int

for label, old, new in [("version", "LAUNCH_TABLE_VERSION = 3", "LAUNCH_TABLE_VERSION = 4"),
                        ("field", '"args"', '"arguments"')]:
    module = load(os.path.join(directory, f"changed_{label}.py"), source.replace(old, new))
    try:
        runtime.check_launch_table(module)
        print(label, "accepted")
    except runtime.LaunchTableError as error:
        print(label, "refused:", error)
# CHECK: version refused: {{.*}} has launch table version 4; this runtime reads version 3
# CHECK: field refused: launch table entry 'kernel_0': missing ['args'], unknown ['arguments']
