"""The fuzzer's fixed-seed run: 300 random programs, compiled vs eager, in CI, on the CPU
target and on the Triton target (kernels interpreted on CPU tensors).

A long run: python e2e/fuzz.py --cases 5000 --seed 10000 [--target triton]
"""
import pytest

import fuzz

CHUNK = 50
# Chunks that take Triton's interpreter minutes (seed 250 is a scan, whose combine
# function the interpreter runs element by element: 226 s of CI's 28 min): long tests.
LONG_ON_TRITON = {250}


def chunks():
    for first in range(0, 300, CHUNK):
        for target in ("cpu", "triton"):
            long = target == "triton" and first in LONG_ON_TRITON
            yield pytest.param(first, target, id=f"{first}-{target}",
                               marks=[pytest.mark.long] if long else [])


@pytest.mark.parametrize("first,target", list(chunks()))
def test_random_programs(first, target):
    failures = []
    for seed in range(first, first + CHUNK):
        failure = fuzz.run_case(seed, target)
        if failure:
            failures.append(f"seed {seed}: {failure}\n{fuzz.Program(seed).source()}")
    assert not failures, "\n".join(failures)
