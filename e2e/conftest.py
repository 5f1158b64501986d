"""Shared helpers: run a function eagerly and through torch.compile(backend="mlir"), compare,
and prove that Dyno compiled it (no graph fell back to eager)."""
import os
import sys

import pytest
import torch

# The on-disk compile cache stays off in the suite (tests compile the same graphs under
# monkeypatched settings); e2e/test_compile_cache.py turns it on where it tests it.
os.environ["DYNO_CACHE"] = "0"
# The suite runs a worker per core (scripts/test.sh): compile threads beside the workers
# only contend for the cores (on 2 cores the suite took 28.1 min with 2 per worker, 18.7
# with 1). The tests of the threaded compiles set DYNO_JIT_THREADS themselves.
os.environ.setdefault("DYNO_JIT_THREADS", "1")

import dyno  # noqa: E402


# The target assert_compiled_matches compiles for; `each_target` runs a test on both.
TARGET = {"name": "cpu"}


@pytest.fixture(params=["cpu", "triton"])
def each_target(request):
    """Runs the test once per target: native CPU code, and Triton kernels (on CPU tensors
    they run under Triton's interpreter, as the GPU kernels would on a GPU)."""
    TARGET["name"] = request.param
    yield request.param
    TARGET["name"] = "cpu"


NO_TRITON_COMPLEX = "the Triton target has no complex element type: complex ops run eagerly"


def xfail_on_triton(request, reason):
    """Marks a test of `each_target` as an expected (strict) failure on the Triton target."""
    if TARGET["name"] == "triton":
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


def pytest_collection_modifyitems(items):
    """A test marked long_on_triton is long (see pytest.ini) when it runs on Triton."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if (item.get_closest_marker("long_on_triton") and callspec is not None
                and callspec.params.get("each_target") == "triton"):
            item.add_marker(pytest.mark.long)


@pytest.fixture(autouse=True)
def fresh_compiler_state():
    torch._dynamo.reset()
    dyno.reset_stats()
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


def assert_compiled_matches_values(fn, *inputs, rtol=1e-5, atol=1e-5):
    """Like assert_compiled_matches, for outputs eager returns as overlapping views
    (expand): the values, shapes and dtypes must match; the strides cannot."""
    return assert_compiled_matches(fn, *inputs, rtol=rtol, atol=atol, check_strides=False)


def assert_compiled_matches(fn, *inputs, rtol=1e-5, atol=1e-5, options=None, min_kernels=1,
                            extern_calls=None, check_strides=True):
    """Compiles `fn`, checks it against eager on `inputs`, and that nothing fell back.

    `extern_calls`, when given, is the exact number of library calls (matmul, conv) the
    compiled graphs must make: a contraction compiled as loops is a performance bug.
    """
    options = dict(options or {})
    options.setdefault("target", TARGET["name"])
    with torch.no_grad():
        expected = fn(*inputs)
        compiled = torch.compile(fn, backend="mlir", options=options)
        actual = compiled(*inputs)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0, stats["fallback_reasons"]
    # No op ran eagerly inside a compiled graph either (per-op fallback).
    assert stats.get("partially_compiled_graphs", 0) == 0, stats["fallback_ops"]
    assert stats.get(f"{options['target']}_graphs", 0) >= 1, stats
    assert stats["runtime_fallbacks"] == 0, stats
    assert stats["compiled_graphs"] >= 1, stats
    assert stats["kernels"] + stats["extern_calls"] >= min_kernels, stats
    if extern_calls is not None:
        assert stats["extern_calls"] == extern_calls, stats
    expected_list = expected if isinstance(expected, (tuple, list)) else [expected]
    actual_list = actual if isinstance(actual, (tuple, list)) else [actual]
    assert len(expected_list) == len(actual_list)
    for want, got in zip(expected_list, actual_list):
        assert got.dtype == want.dtype
        assert got.shape == want.shape
        if check_strides:
            assert got.stride() == want.stride(), (got.stride(), want.stride())
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)
    return actual


def step_side_by_side(runs, optimizers, x, y):
    """One training step (cross-entropy, backward, optimizer step) of each of `runs`
    (eager and compiled copies) on the same batch; returns their losses."""
    import torch.nn.functional as F

    losses = []
    for run, optimizer in zip(runs, optimizers):
        optimizer.zero_grad()
        loss = F.cross_entropy(run(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


sys.path.insert(0, os.path.dirname(__file__))
