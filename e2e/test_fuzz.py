"""The fuzzer's fixed-seed run: 300 random programs, compiled vs eager, in CI, on the CPU
target and on the Triton target (kernels interpreted on CPU tensors).

A long run: python e2e/fuzz.py --cases 5000 --seed 10000 [--target triton]
"""
import pytest

import fuzz

CHUNK = 50


@pytest.mark.parametrize("target", ["cpu", "triton"])
@pytest.mark.parametrize("first", range(0, 300, CHUNK))
def test_random_programs(first, target):
    failures = []
    for seed in range(first, first + CHUNK):
        failure = fuzz.run_case(seed, target)
        if failure:
            failures.append(f"seed {seed}: {failure}\n{fuzz.Program(seed).source()}")
    assert not failures, "\n".join(failures)
