"""Scans, scatters and sorts (dyno.scan/scatter/sort, lowered to loops on the CPU target):
compiled code against eager, with repeated indices, ties, NaN and out-of-range indices."""
import warnings

import pytest
import torch

import dyno
from conftest import assert_compiled_matches

nan = float("nan")


def _exact(fn, *inputs):
    """Compiled on the CPU target, nothing eager, and bit-identical to eager."""
    actual = assert_compiled_matches(fn, *inputs, rtol=0, atol=0)
    return actual


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_and_cumprod_accumulate_in_double_like_eager(dim):
    # Eager's CPU cumsum/cumprod carry a double accumulator; a float one drifts by
    # several ulps over a few hundred elements (checked below).
    x = torch.randn(7, 513) + 0.5
    _exact(lambda t: torch.cumsum(t, dim), x)
    torch._dynamo.reset()
    _exact(lambda t: torch.cumprod(t, dim), 1 + x / 100)
    float_sum = x.clone()
    for i in range(1, x.shape[1]):
        float_sum[:, i] = float_sum[:, i - 1] + x[:, i]
    assert not torch.equal(float_sum, torch.cumsum(x, 1)), "test input too benign"


def test_integer_cumsum_and_scan_of_a_fused_producer():
    _exact(lambda t: torch.cumsum(t * 3 - 1, 1), torch.randint(-9, 9, (5, 31)))
    torch._dynamo.reset()
    # exp and tanh are Dyno's polynomials (within an ulp or two of eager's).
    assert_compiled_matches(lambda t: torch.tanh(torch.cumsum(torch.exp(t), 0) / 40) * 2,
                            torch.randn(40, 3))


def test_scatter_add_accumulates_repeated_indices_in_order():
    torch.manual_seed(1)
    index = torch.randint(0, 4, (50, 6))  # many repeats per target element
    source = torch.randn(50, 6)
    _exact(lambda x, i, s: x.scatter_add(0, i, s), torch.randn(4, 6), index, source)


def test_scatter_reductions_and_index_put():
    x, source = torch.randn(5, 8), torch.randn(5, 8)
    index = torch.randint(0, 8, (5, 8))
    for reduce in ("sum", "prod", "amax", "amin", "mean"):
        torch._dynamo.reset()
        assert_compiled_matches(
            lambda t, i, s: t.scatter_reduce(1, i, s, reduce, include_self=True),
            x, index, source)
    torch._dynamo.reset()
    rows = torch.tensor([0, 5, 2, 5, 5, -1])  # repeats and a negative index
    _exact(lambda t, i, v: t.index_put((i,), v, accumulate=True), torch.randn(6, 3), rows,
           torch.randn(6, 3))
    torch._dynamo.reset()
    _exact(lambda t, i, v: t.index_add(0, i, v), torch.randn(6, 3), rows.abs(),
           torch.randn(6, 3))


def test_put_and_index_reduce_as_index_put_and_scatter_reduce(each_target):
    # torch-mlir lowers neither: put is index_put on the flattened tensor (negative
    # positions count from the end), index_reduce a scatter_reduce with each slice's
    # index broadcast over it. On Triton, a product at repeated indices has no atomic
    # (it runs eagerly there, see test_triton_runs_what_it_cannot_lower_eagerly...).
    x, source = torch.randn(4, 5), torch.randn(4, 3)
    index = torch.tensor([4, 0, 4])  # a repeat
    reductions = ["mean", "amax", "amin"] + (["prod"] if each_target == "cpu" else [])
    for reduce in reductions:
        for include_self in (True, False):
            torch._dynamo.reset()
            dyno.reset_stats()
            assert_compiled_matches(
                lambda t, i, s: t.index_reduce(1, i, s, reduce, include_self=include_self),
                x, index, source)
    torch._dynamo.reset()
    dyno.reset_stats()
    assert_compiled_matches(lambda t, i, s: t.index_reduce(0, i, s, reductions[-1]),
                            torch.tensor(5.0), torch.tensor([0]), torch.tensor(3.0))
    positions = torch.tensor([[0, -1], [7, 19]])
    for accumulate in (False, True):
        torch._dynamo.reset()
        dyno.reset_stats()
        assert_compiled_matches(lambda t, i, v: t.put(i, v, accumulate=accumulate),
                                x, positions, torch.randn(2, 2))
    torch._dynamo.reset()
    dyno.reset_stats()
    assert_compiled_matches(lambda t, i, v: t.put(i, v, accumulate=True), x,
                            torch.tensor([3, 3, -17, 3]), torch.randn(4))


@pytest.mark.parametrize("index", [[[0, 1, 2, 4, 1]], [[0, -1, 2, 3, 1]]])
def test_out_of_range_scatter_index_raises_like_eager(index):
    x, index, source = torch.randn(4, 5), torch.tensor(index), torch.randn(1, 5)
    with pytest.raises(RuntimeError) as eager_error:
        x.scatter_add(0, index, source)
    compiled = torch.compile(lambda t, i, s: t.scatter_add(0, i, s), backend="mlir")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as compiled_error:
            compiled(x, index, source)
    assert str(compiled_error.value) == str(eager_error.value)
    # The compiled graph's host check caught it, before any kernel wrote out of range.
    assert dyno.stats()["runtime_fallbacks"] == 1


def _values_with_nan_and_ties():
    x = torch.randn(6, 45)
    x[0, 3] = float("nan")
    x[1, :5] = float("nan")
    x[2] = 1.0
    x[3, ::3] = -0.5
    x[4, 7] = float("inf")
    x[4, 9] = -float("inf")
    return x


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_stable_sort_orders_nan_and_ties_like_eager(descending, dim):
    x = _values_with_nan_and_ties()
    _exact(lambda t: torch.sort(t, dim=dim, descending=descending, stable=True), x)
    torch._dynamo.reset()
    _exact(lambda t: torch.argsort(t, dim=dim, descending=descending, stable=True), x)


def test_sort_of_integers_and_sizes_that_are_not_powers_of_two():
    for length in (1, 2, 3, 17, 64, 100):
        torch._dynamo.reset()
        _exact(lambda t: torch.sort(t, dim=-1, stable=True),
               torch.randint(-4, 4, (3, length)))


def test_unstable_sort_and_topk_values_match_and_indices_point_at_them():
    # Eager's plain sort and topk order ties as their algorithms happen to; Dyno's sort is
    # stable. Without ties the results are identical; with them the values are, and the
    # indices address those values.
    x = torch.randn(5, 40)
    _exact(lambda t: torch.sort(t, 1), x)
    torch._dynamo.reset()
    _exact(lambda t: torch.topk(t, 4, 1), x)
    torch._dynamo.reset()
    ties = torch.randint(0, 3, (5, 40)).float()
    values, indices = torch.compile(lambda t: torch.sort(t, 1, descending=True),
                                    backend="mlir")(ties)
    assert torch.equal(values, torch.sort(ties, 1, descending=True).values)
    assert torch.equal(torch.gather(ties, 1, indices), values)
    assert dyno.stats()["fallback_graphs"] == 0


def test_logcumsumexp_of_half_compiles_where_torch_mlir_overflows():
    # Regression (OpInfo sweep): torch-mlir lowers logcumsumexp to log(cumsum(exp(x))),
    # which gave inf for x = 100 (eager 100.69). Dyno lowers it itself, f16/bf16
    # accumulating in float32 (test_aten_lowerings.py): compiled, finite, as eager.
    x = torch.tensor([[100.0, 100.0, -3.0], [1.0, 2.0, 3.0]], dtype=torch.float16)
    got = torch.compile(lambda t: torch.logcumsumexp(t, 1) * 2, backend="mlir")(x)
    torch.testing.assert_close(got, torch.logcumsumexp(x, 1) * 2)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 0 and not stats["fallback_ops"], stats["fallback_ops"]
    assert stats["compiled_graphs"] == 1


def _triton_exact(fn, *inputs):
    """Compiled for the Triton target (the interpreter on CPU tensors), nothing eager, and
    bit-identical to eager: scans accumulate in f64 like eager's CPU kernels, sorts are
    stable, and the interpreter applies atomic adds in lane order (eager's order)."""
    return assert_compiled_matches(fn, *inputs, rtol=0, atol=0, options={"target": "triton"})


def test_triton_scans_sorts_and_topk_match_eager_bit_for_bit():
    x = torch.randn(7, 513) + 0.5
    for fn in (lambda t: torch.cumsum(t, 1), lambda t: torch.cumsum(t * 2, 0),
               lambda t: torch.cumprod(1 + t / 100, -1),
               lambda t: torch.sort(t, dim=1, stable=True),
               lambda t: torch.sort(t, dim=0, descending=True, stable=True),
               lambda t: torch.topk(t, 5, 1, sorted=True),
               lambda t: torch.argsort(t.T, dim=1, stable=True)):
        torch._dynamo.reset()
        _triton_exact(fn, x)
    torch._dynamo.reset()
    _triton_exact(lambda t: torch.cumsum(t, 1), torch.randint(-9, 9, (5, 31)))
    torch._dynamo.reset()
    # int32 keys: negative values and repeats
    _triton_exact(lambda t: torch.sort(t, dim=1, stable=True),
                  torch.randint(-4, 4, (3, 40), dtype=torch.int32))


def test_triton_sorts_of_long_lines_are_library_calls_and_short_ones_kernels():
    # Performance (H100, rows of 1024 float32): Dyno's bitonic network of 64-bit keys
    # took 0.71 ms where eager's segmented sort takes 0.32 ms; on short lines the network
    # is several times faster than eager. Lines longer than LIBRARY_SORT_LENGTH call
    # PyTorch's stable sort (eager's results, ties in order); shorter ones stay kernels.
    from dyno.targets.triton.library_routing import LIBRARY_SORT_LENGTH
    long_rows = torch.randn(3, LIBRARY_SORT_LENGTH + 1)
    long_rows[:, ::5] = 0.5  # ties keep their order
    short_rows = torch.randn(5, LIBRARY_SORT_LENGTH)
    fn = lambda a, b: (*torch.sort(a, dim=1, descending=True, stable=True),
                       *torch.sort(b, dim=1, stable=True),
                       *torch.sort(a * 2, dim=0, stable=True))
    _triton_exact(fn, long_rows, short_rows)
    stats = dyno.stats()
    assert stats["library_calls"] == {"aten.sort.stable": 1}, stats
    assert stats["kernels"] >= 2, stats  # the short rows' and the columns' sorts
    # A GPU sort never reads results on the host: programs that call it keep CUDA graphs
    # (LAPACK calls, whose error checks synchronize, turn them off).
    from dyno.targets.triton.runtime import program
    assert not program._synchronizing_library_calls({"library_calls": ["aten.sort.stable"]})
    assert not program._synchronizing_library_calls(
        {"library_calls": ["_c10d_functional.all_reduce.default", "aten.sort.stable"]})
    assert program._synchronizing_library_calls(
        {"library_calls": ["aten.linalg_cholesky_ex.default", "aten.sort.stable"]})


def test_triton_scatter_adds_are_library_calls_and_other_scatters_kernels():
    # Performance (H200, 16K to 16M updates): torch-mlir's lowering stacks each update's
    # coordinates into an int64 tensor that the bounds check and the scatter kernel read
    # again (0.13x-0.29x eager); PyTorch's scatter_add reads the index tensor where it
    # is. The updates' producer stays a Dyno kernel, and so do other scatters.
    from dyno.targets.triton.library_routing import LIBRARY_SCATTER_UPDATES
    assert LIBRARY_SCATTER_UPDATES <= 1 << 16
    torch.manual_seed(0)
    rows, columns = 4096, 16
    index = torch.randint(0, 8, (rows, columns))  # many repeats per position
    fn = lambda x, i, s: (x.scatter_add(0, i, s * 2 + 1),
                          x.scatter_reduce(0, i, s * 3, "sum", include_self=True))
    dyno.reset_stats()
    _triton_exact(fn, torch.randn(8, columns), index, torch.randn(rows, columns))
    stats = dyno.stats()
    assert stats["library_calls"] == {"aten.scatter_add.default": 1}, stats
    assert stats["kernels"] >= 2, stats  # the updates' producers and the scatter_reduce
    from dyno.targets.triton.runtime import program
    assert not program._synchronizing_library_calls(
        {"library_calls": ["aten.scatter_add.default"]})
    # An index out of range: PyTorch's own error, as eager raises it.
    torch._dynamo.reset()
    bad_index = index.clone()
    bad_index[rows // 2, 3] = 8
    compiled = torch.compile(lambda x, i, s: x.scatter_add(0, i, s), backend="mlir",
                             options={"target": "triton"})
    with pytest.raises(RuntimeError, match="index"):
        compiled(torch.randn(8, columns), bad_index, torch.randn(rows, columns))


@pytest.mark.long  # (Triton's interpreter scanning element by element: 136 s on 2 cores, 2026-12-02)
def test_triton_scans_lines_longer_than_one_program_chunk_by_chunk():
    """Lines over 16384 elements ran eagerly (per-op fallback) on Triton; a loop over
    chunks carries each line's last value (f64 for float sums), still eager's results
    bit for bit: rows and columns, integers, products, a combiner of its own with
    indices (cummax), and the accumulator a graph reads."""
    torch.manual_seed(0)
    # Lines just past 16384 (the interpreter runs the chunk loop in Python); the
    # accuracy family scans 1e5 (test_reduction_accuracy.py) and the GPU suite 1.6e7.
    cases = [
        (lambda t: torch.cumsum(t, 1), torch.randn(2, 20_001)),
        (lambda t: torch.cumsum(t, 0), torch.rand(17_000) + 1e4),
        (lambda t: torch.cumsum(t, 0), torch.randn(17_000, 2)),
        (lambda t: torch.cumsum(t, 0), torch.randint(-9, 9, (17_000,))),
        (lambda t: torch.cumprod(1 + t / 1e5, -1), torch.randn(2, 17_000)),
        (lambda t: torch.cummax(t, -1), torch.randn(1, 16_500)),
        (lambda t: torch.ones_like(t).cumsum(-1) * t, torch.randn(17_000)),
    ]
    for fn, x in cases:
        torch._dynamo.reset()
        dyno.reset_stats()
        _triton_exact(fn, x)
    # The carry keeps the sign of zero (it was picked by a sum with +0.0 lanes: -0.0 became
    # +0.0 from the second chunk on).
    torch._dynamo.reset()
    x = torch.cat([torch.tensor([-0.0]), torch.ones(17_000)])
    got = _triton_exact(lambda t: torch.cumprod(t, 0), x)
    assert got.signbit().all()


@pytest.mark.long  # (Triton's interpreter scanning element by element: 71 s on 2 cores, 2026-12-02)
def test_triton_scans_of_symbolic_sizes():
    """dynamic=True: one compiled scan serves every line count and length (lines of
    symbolic length loop over chunks), eager's results bit for bit; it ran eagerly before
    ("has a Triton lowering for static shapes only")."""
    for fn, shapes in [(lambda t: torch.cumsum(t, -1), [(3, 100), (2, 17_000), (2, 7)]),
                       (lambda t: torch.cumsum(t, 0), [(30, 4), (17_000, 2)]),
                       (lambda t: torch.cummax(t, 1), [(3, 50), (2, 16_500)])]:
        torch._dynamo.reset()
        dyno.reset_stats()
        compiled = torch.compile(fn, backend="mlir", options={"target": "triton"},
                                 dynamic=True)
        for shape in shapes:
            x = torch.randn(*shape)
            got, want = compiled(x), fn(x)
            for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
                assert torch.equal(g, w), shape
        stats = dyno.stats()
        assert stats["compiled_graphs"] == 1 and stats.get("dynamic_graphs") == 1, stats
        assert not stats["fallback_ops"] and not stats["fallback_graphs"], stats


def test_triton_sort_orders_nan_signed_zeros_and_ties_like_eager():
    # NaN sorts last ascending (first descending); -0.0 and 0.0 tie and keep their order
    # (a key of their raw bits would put -0.0 first); ties keep their order.
    nan = float("nan")
    x = torch.tensor([[3.0, 0.0, -0.0, nan, 1.0, 3.0, -2.0, -nan, 0.0, -0.0, -2.0],
                      [-1.0, float("inf"), -float("inf"), 5.0, -1.0, 0.0, nan, 7.0, 1e-40,
                       -1e-40, 2.0]])
    for descending in (False, True):
        torch._dynamo.reset()
        values, indices = _triton_exact(
            lambda t: torch.sort(t, dim=1, descending=descending, stable=True), x)
        assert torch.equal(values.signbit(), x.gather(1, indices).signbit())


def test_triton_scatters_with_repeated_indices():
    torch.manual_seed(1)
    index = torch.randint(0, 4, (50, 6))
    _triton_exact(lambda x, i, s: x.scatter_add(0, i, s), torch.randn(4, 6), index,
                  torch.randn(50, 6))
    rows = torch.tensor([0, 5, 2, 5, 5, -1])  # repeats and a negative index
    for fn in (lambda t, i, v: t.index_put((i,), v, accumulate=True),
               lambda t, i, v: t.index_add(0, i.abs(), v),
               lambda t, i, v: t.index_put((i.abs().unique(),), v[:4] * 2)):
        torch._dynamo.reset()
        _triton_exact(fn, torch.randn(6, 3), rows, torch.randn(6, 3))
    x, source = torch.randn(5, 8), torch.randn(5, 8)
    index = torch.randint(0, 8, (5, 8))
    for reduce in ("sum", "mean"):
        torch._dynamo.reset()
        assert_compiled_matches(
            lambda t, i, s: t.scatter_reduce(1, i, s, reduce, include_self=True),
            x, index, source, options={"target": "triton"})
    # Float maxima and minima at repeated indices: Triton's float atomics, NaN kept
    # (from an update, and from the original: NaN of either sign), -0.0 < +0.0.
    original = torch.randn(5, 8)
    original[0, 3] = nan
    original[1, 2] = -nan
    updates = torch.randn(5, 8)
    updates[2, 1] = nan
    updates[3, 4] = -nan
    updates[4, :] = -0.0
    original[4, :] = 0.0
    for reduce in ("amax", "amin"):
        for include_self in (True, False):
            torch._dynamo.reset()
            dyno.reset_stats()
            assert_compiled_matches(
                lambda t, i, s: t.scatter_reduce(1, i, s, reduce, include_self=include_self),
                original, index, updates, options={"target": "triton"})
    torch._dynamo.reset()
    dyno.reset_stats()
    # Integer maxima at repeated indices: tl.atomic_max
    assert_compiled_matches(
        lambda t, i, s: t.scatter_reduce(1, i, s, "amax", include_self=False),
        torch.randint(-9, 9, (5, 8)), index, torch.randint(-9, 9, (5, 8)),
        options={"target": "triton"})


def test_triton_scatter_index_out_of_range_raises_like_eager():
    x, index = torch.zeros(4), torch.tensor([0, 4])
    fn = torch.compile(lambda t, i: t.scatter_add(0, i, torch.ones(2)), backend="mlir",
                       options={"target": "triton"})
    with pytest.raises((IndexError, RuntimeError)):
        fn(x, index)


def test_triton_sorts_64_bit_values_with_the_library_sort():
    """Dyno's network packs a value of at most 32 bits with its position into a 64-bit
    key: float64 and int64 lines (a mixture of experts sorts int64 expert ids) are the
    library's sort, which ran eagerly before."""
    for x in (torch.randn(3, 7, dtype=torch.float64), torch.randint(0, 4, (12,))):
        torch._dynamo.reset()
        dyno.reset_stats()

        def fn(t):
            values, positions = torch.sort(t, dim=-1, stable=True)
            return values * 2, positions

        got = torch.compile(fn, backend="mlir", options={"target": "triton"})(x)
        want = fn(x)
        torch.testing.assert_close(got[0], want[0])
        assert torch.equal(got[1], want[1])  # stable: the positions too
        stats = dyno.stats()
        assert not stats["fallback_ops"] and stats["fallback_graphs"] == 0, stats
        assert stats["library_calls"] == {"aten.sort.stable": 1}, stats["library_calls"]


def test_triton_runs_what_it_cannot_lower_eagerly_with_a_reason():
    # A product at repeated indices has no atomic. (Lines longer than one program's sort
    # and 64-bit values, which also ran eagerly, are now library calls: the tests above.)
    index = torch.randint(0, 4, (6, 3))
    cases = [
        (lambda t, s: t.scatter_reduce(0, index, s, "prod"), (torch.randn(4, 3), torch.randn(6, 3)),
         "no atomic for"),
    ]
    for fn, inputs, reason in cases:
        torch._dynamo.reset()
        dyno.reset_stats()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = torch.compile(fn, backend="mlir", options={"target": "triton"})(*inputs)
        torch.testing.assert_close(got, fn(*inputs))
        messages = " ".join(str(w.message) for w in caught)
        assert reason in messages, messages
        stats = dyno.stats()
        assert stats["fallback_ops"] or stats["fallback_graphs"], stats


def test_median_and_nanmedian_from_a_stable_sort_match_eager_with_nan():
    # Decomposed into a sort and a gather: a line with NaN gives its first NaN (median),
    # NaN is skipped (nanmedian), an all-NaN line gives the NaN in its middle.
    x = torch.tensor([[3.0, float("nan"), 1.0, float("nan"), 2.0], [float("nan")] * 5,
                      [1.0, 2.0, 4.0, 3.0, 0.0], [5.0, 4.0, 3.0, -2.0, 1.0]])
    for fn in (lambda t: torch.median(t, 1), lambda t: torch.nanmedian(t, 1),
               lambda t: torch.median(t, 0, keepdim=True), lambda t: torch.median(t),
               lambda t: torch.nanmedian(t), lambda t: torch.nanmedian(t[2:])):
        torch._dynamo.reset()
        _exact(fn, x)


def test_median_and_kthvalue_of_a_zero_dim_tensor():
    # OpInfo's first samples: the value itself, at index 0.
    for fn in (lambda t: torch.median(t, 0), lambda t: torch.nanmedian(t, -1, keepdim=True),
               lambda t: torch.kthvalue(t, 1, 0), lambda t: torch.median(t)):
        torch._dynamo.reset()
        _exact(lambda t: fn(t * 2), torch.tensor(-1.5))


def test_kthvalue_from_a_stable_sort():
    x = torch.randn(6, 33)
    x[1, 4] = float("nan")  # the largest value, as in eager
    for k in (1, 7, 33):
        torch._dynamo.reset()
        _exact(lambda t: torch.kthvalue(t, k, 1), x)
    torch._dynamo.reset()
    _exact(lambda t: torch.kthvalue(t, 2, 0, keepdim=True), x)


def test_histc_with_a_given_range_counts_like_eager():
    # Decomposed into bin positions and a scatter-add; NaN, inf and values outside the
    # range are not counted, the top edge falls in the last bin.
    x = torch.randn(2000) * 2
    x[:5] = torch.tensor([float("nan"), float("inf"), -3.0, 3.0, 1.5])
    for bins, low, high in ((10, -3, 3), (33, -1, 2.5), (6, -0.3, 0.7)):
        torch._dynamo.reset()
        _exact(lambda t: torch.histc(t, bins, low, high), x)
    # A range from the data (min == max) runs eagerly, which raises for non-finite data.
    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = torch.compile(lambda t: torch.histc(t, 5) + 1, backend="mlir")(x[5:])
    assert torch.equal(got, torch.histc(x[5:], 5) + 1)
    assert "aten.histc.default" in dyno.stats()["fallback_ops"]


def test_triton_histograms_sum_their_bins_as_rows(tmp_path, monkeypatch):
    # A scatter-add into a few elements (histc, a mixture-of-experts router's tokens per
    # expert, a bincount) was one atomic add per update on the same few addresses (10 us
    # per layer of Mixtral on an H200), after a kernel for its bins and one filling its
    # destination: it is now a reduction, one row per bin, that the bins' producer fuses
    # into (dyno-scatter-adds-as-reductions). Counts are exact; float sums in tree order.
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    x = torch.randn(3000) * 2
    x[:5] = torch.tensor([float("nan"), float("inf"), -3.0, 3.0, 1.5])
    experts = torch.randint(0, 8, (1024, 2))
    weights = torch.rand(1024 * 2)

    def fn(t, e, w):
        tokens_per_expert = torch.histc(e.float(), bins=8, min=0, max=7).cumsum(0)
        weight_per_expert = torch.zeros(8).index_add(0, e.flatten(), w * 2)
        return torch.histc(t, 10, -3, 3), tokens_per_expert, weight_per_expert
    assert_compiled_matches(fn, x, experts, weights, options={"target": "triton"})
    assert dyno.stats()["partially_compiled_graphs"] == 0
    kernels = (next(tmp_path.iterdir()) / "05-kernels.py").read_text()
    assert "atomic" not in kernels
    # Exact counts (the sums of ones), bit for bit.
    torch._dynamo.reset()
    _triton_exact(lambda t: torch.histc(t, 10, -3, 3), x)
    # The float sums are at least as accurate as eager's against float64.
    torch._dynamo.reset()
    index, values = torch.randint(0, 5, (60000,)), torch.randn(60000)
    got = torch.compile(lambda i, v: torch.zeros(5).index_add(0, i, v), backend="mlir",
                        options={"target": "triton"})(index, values)
    exact = torch.zeros(5, dtype=torch.float64).index_add(0, index, values.double())
    eager = torch.zeros(5).index_add(0, index, values)
    assert (got.double() - exact).abs().max() <= 2 * (eager.double() - exact).abs().max() + 1e-6


@pytest.mark.parametrize("k", [1, 8, 32, 33])
def test_topk_selects_a_sorted_prefix_like_eager(each_target, k):
    # topk(k) sorts only the prefix its slices read (dyno-sort-prefixes; up to k = 32 an
    # insertion per line on the CPU and k selections of the least key on Triton, a whole
    # sort beyond): NaN is the largest value, rows of ties, infinities. Values always
    # equal eager's; indices where there are no ties.
    x = torch.randn(12, 300)
    x[0, 5] = float("nan")
    x[1, :40] = float("nan")
    x[2] = 1.0
    x[3, ::7] = float("inf")
    x[4, ::3] = -float("inf")
    for largest in (True, False):
        torch._dynamo.reset()
        dyno.reset_stats()
        fn = lambda t: torch.topk(t, k, 1, largest=largest)
        values, indices = torch.compile(fn, backend="mlir",
                                        options={"target": each_target})(x)
        want = fn(x)
        stats = dyno.stats()
        assert stats["fallback_graphs"] == 0 and stats["compiled_graphs"] == 1
        assert stats.get("partially_compiled_graphs", 0) == 0, stats["fallback_ops"]
        assert torch.equal(values.nan_to_num(7.0), want.values.nan_to_num(7.0))
        assert torch.equal(indices[5:], want.indices[5:])
        assert torch.equal(torch.gather(x, 1, indices).nan_to_num(7.0),
                           values.nan_to_num(7.0))


def test_scans_and_scatters_compile_once_for_all_sizes():
    # dynamic=True: the ops' result sizes are their outputs' (ReifyRankedShapedTypeOp
    # interface); without it a dynamic scan's size looked data-dependent and fell back.
    cases = [lambda t: torch.cumsum(t, 0) * 2, lambda t: torch.cumsum(t, 1),
             lambda t: t.index_put((torch.tensor([0, -1, 0]),), torch.ones(3, t.shape[1]),
                                   accumulate=True)]
    for fn in cases:
        torch._dynamo.reset()
        dyno.reset_stats()
        compiled = torch.compile(fn, backend="mlir", dynamic=True)
        for shape in [(4, 7), (5, 13), (3, 1), (6, 40)]:
            x = torch.randn(shape)
            assert torch.equal(compiled(x), fn(x))
        stats = dyno.stats()
        assert stats["fallback_graphs"] == 0 and stats["partially_compiled_graphs"] == 0, stats
        assert stats["runtime_fallbacks"] == 0, stats


def test_cumprod_with_a_dtype_and_scatter_with_the_deprecated_reduce_argument(each_target):
    # torch-mlir lowers neither form; Dyno converts first / calls scatter_reduce.
    x, mask = torch.randn(5, 6), torch.rand(5, 6) > 0.3
    assert_compiled_matches(lambda t, m: torch.cumprod(torch.where(m, t, 1.0), 1,
                                                       dtype=torch.float64), x, mask)
    index = torch.randint(0, 5, (4, 6))
    # (Triton has no atomic product: "multiply" at repeated indices runs eagerly there.)
    for reduce in ("add", "multiply") if each_target == "cpu" else ("add",):
        torch._dynamo.reset()
        assert_compiled_matches(lambda t, i, s: t.scatter(0, i, s, reduce=reduce),
                                x, index, torch.randn(4, 6))
        torch._dynamo.reset()
        assert_compiled_matches(lambda t, i: t.scatter(0, i, 1.5, reduce=reduce) * 2,
                                x, index)


def test_cumsum_of_a_fill(each_target):
    # OPT's position ids: the cumulative sum of an all-ones attention mask. The Triton
    # lowering refused a scan of a constant fill ("scans a fill; nothing to read").
    def positions(tokens):
        mask = torch.ones(tokens.shape, dtype=torch.int64)
        return torch.cumsum(mask, 1) * mask - 1 + tokens
    _exact(positions, torch.randint(0, 9, (4, 37)))


def test_bf16_sorts_and_medians_with_signed_nans(each_target):
    """bf16 NaNs whose sign bit is set (eager's vectorized float -> bf16 conversion makes
    0xFFFF on AMD Zen 4) sort last, as eager's do, and nanmedian skips them. Triton's
    interpreter compared bf16 as its uint16 bits, so the sort key's NaN check missed
    them and they sorted first (masked.median returned NaN in the bf16 OpInfo sweep); it
    now compares bf16 as floats, as the GPU does."""
    x = torch.tensor([1.0, -1.0, 2.0, -0.0, 0.0, 0.5, -3.0, 4.0]).bfloat16()
    x[[1, 5]] = torch.tensor([-1, 0x7FC0], dtype=torch.int16).view(torch.bfloat16)
    mask = torch.tensor([True, True, False, True, True, True, True, False])
    _exact(lambda t: torch.sort(t)[0], x)
    _exact(lambda t, m: torch.nanmedian(t.masked_fill(~m, nan), 0).values, x, mask)
    _exact(lambda t: (torch.sort(t)[0] < 0.25) & (t == t), x)
