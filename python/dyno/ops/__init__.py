"""Op coverage: every ATen op Dyno compiles that torch-mlir does not lower as it is, in
one package. The rule, in order:

1. Expressible in ATen ops torch-mlir lowers correctly -> a **decomposition**: a Python
   function over ATen ops, registered in `decompositions.table(target)` (AOTAutograd and
   torch.export apply it before import). Families: `decompositions.py` (NaN semantics,
   arithmetic, selection and sorting, pooling, creation and views),
   `moment_decompositions.py` (var/std, norms, batch norm statistics),
   `indexing_decompositions.py`, `attention_decompositions.py` (per target),
   `complex_decompositions.py`, `low_precision_decompositions.py` (bf16/f16 as eager
   rounds), `special_functions.py` and `bessel_functions.py` (torch.special, in float64
   where ATen computes so).
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

# The lowering families register their lowerings in aten_lowerings.LOWERINGS when imported;
# the package imports them, so that whatever reaches aten_lowerings finds them all (and
# aten_lowerings, which they build on, imports none of them).
from . import (bit_lowerings, library_calls, low_precision_lowerings,  # noqa: E402,F401
               polynomial_lowerings, scan_lowerings)
