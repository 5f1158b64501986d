"""The fuzzer's fixed-seed run: 300 random programs, compiled vs eager, in CI.

A long run: python e2e/fuzz.py --cases 5000 --seed 10000
"""
import pytest

import fuzz

CHUNK = 50


@pytest.mark.parametrize("first", range(0, 300, CHUNK))
def test_random_programs(first):
    failures = []
    for seed in range(first, first + CHUNK):
        failure = fuzz.run_case(seed)
        if failure:
            failures.append(f"seed {seed}: {failure}\n{fuzz.Program(seed).source()}")
    assert not failures, "\n".join(failures)
