"""Op coverage: every ATen op Dyno compiles that torch-mlir does not lower as it is, in
one package. The rule, in order:

1. Expressible in ATen ops torch-mlir lowers correctly -> a **decomposition**: a Python
   function over ATen ops in the family module it belongs to, registered where it is
   defined with `@decomposes(aten.<op>.<overload>)` (decompositions.py: the table per
   target, how to register, the list of families). AOTAutograd and torch.export apply
   them before import.
2. Needs loops, bit casts or a library -> a **lowering**: registered with
   `aten_lowerings.lowering("torch.aten.<op>")`, it replaces the op in the imported torch
   dialect by builtin-tensor ops (`aten_lowerings.py`; families: `bit_lowerings.py`,
   `polynomial_lowerings.py` (recurrences), `scan_lowerings.py`,
   `low_precision_lowerings.py` (an op's rounding, `dyno::op_round`)), or by a
   `dyno.library_call` of PyTorch's own routine (`library_calls.py`: LAPACK, FFTs,
   attention's flash kernels, collectives, the Triton target's long sorts,
   scatter-adds and inference attention).
3. Cannot be compiled correctly -> **eager, with a reason**: `eager.ROUTED_TO_EAGER`
   (per-op fallback runs it; the rest of its graph is compiled).

Every entry has a test that compares with eager (e2e/test_decomposed_ops.py,
test_aten_lowerings.py, test_library_calls.py and the OpInfo sweep).
"""

# The families register their decompositions (in decompositions.py's table) and
# lowerings (in aten_lowerings.LOWERINGS) when imported; the package imports them all, so
# that whatever reaches either registry finds them all (and the registries, which the
# families build on, import none of them).
from . import (arithmetic_decompositions, attention_decompositions,  # noqa: E402,F401
               bessel_functions, collective_decompositions, complex_decompositions,
               convolution_decompositions, grouped_matmul_decompositions,
               indexing_decompositions, linear_algebra_decompositions,
               low_precision_decompositions, moment_decompositions, nan_decompositions, pooling_decompositions,
               selection_decompositions, special_functions)
from . import (bit_lowerings, library_calls, low_precision_lowerings,  # noqa: E402,F401
               polynomial_lowerings, scan_lowerings)
