"""Per-op fallback: an op Dyno cannot compile runs eagerly, the rest of the graph compiles."""
import warnings

import torch

import dyno


def _run(fn, *inputs):
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = torch.compile(fn, backend="mlir")(*inputs)
    expected = fn(*inputs)
    return got, expected, [str(w.message) for w in caught if "dyno" in str(w.message)]


def test_unsupported_op_runs_eagerly_rest_compiles():
    # Neither torch-mlir 20261001 nor Dyno lowers special.airy_ai.
    def fn(x, w):
        y = torch.softmax(x @ w, -1)
        return torch.tanh(torch.special.airy_ai(y)) * 2 + y.sum(-1, keepdim=True)
    got, expected, messages = _run(fn, torch.randn(16, 32), torch.randn(32, 24))
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    stats = dyno.stats()
    assert stats["partially_compiled_graphs"] == 1 and stats["fallback_graphs"] == 0, stats
    assert stats["fallback_ops"] == {"aten.special_airy_ai.default": 1}, stats
    assert stats["kernels"] >= 2 and stats["extern_calls"] == 1, stats
    assert len(messages) == 1 and "partly compiled" in messages[0]
    assert "aten.special_airy_ai.default" in messages[0]


def test_unsupported_op_with_several_outputs():
    def fn(x):
        values, indices = torch.mode(x * 2, dim=-1)
        return values.exp(), indices + 1
    got, expected, _ = _run(fn, torch.randn(8, 10))
    torch.testing.assert_close(got[0], expected[0])
    assert torch.equal(got[1], expected[1])
    stats = dyno.stats()
    assert stats["partially_compiled_graphs"] == 1, stats
    assert list(stats["fallback_ops"]) == ["aten.mode.default"], stats


def test_graph_of_only_unsupported_ops_falls_back_whole():
    got, expected, messages = _run(lambda x: torch.special.airy_ai(x), torch.randn(5, 3))
    torch.testing.assert_close(got, expected)
    stats = dyno.stats()
    assert stats["fallback_graphs"] == 1 and stats["partially_compiled_graphs"] == 0, stats
    assert len(messages) == 1 and "runs eagerly" in messages[0]


def test_embedding_bag_with_weights_is_routed_to_eager():
    # Regression (OpInfo sweep): torch-mlir's lowering ignored per_sample_weights.
    weight = torch.randn(10, 5)
    def fn(indices, offsets, per_sample):
        bags = torch.nn.functional.embedding_bag(indices, weight, offsets, mode="sum",
                                                 per_sample_weights=per_sample)
        return torch.tanh(bags) * 2
    got, expected, _ = _run(fn, torch.tensor([1, 2, 4, 5, 9]), torch.tensor([0, 3]),
                            torch.randn(5))
    torch.testing.assert_close(got, expected)
    stats = dyno.stats()
    assert "aten._embedding_bag_forward_only.default" in stats["fallback_ops"], stats
    assert stats["partially_compiled_graphs"] == 1, stats


def test_runtime_failure_of_a_compiled_part_runs_the_whole_graph_eagerly(monkeypatch):
    # Regression (OpInfo sweep, max_pool3d on the Triton target): a compiled part failed
    # at run time, and the eager fallback ran the partitioned graph module, which the
    # partitioner had rewritten in place, so it called the failing part again and the
    # error reached the user. The partitioner now works on a copy.
    from dyno.driver import partition

    def fn(x):
        return torch.tanh(torch.special.airy_ai(x)) * 2 + x.sum(-1, keepdim=True)

    def failing(self, *args):
        raise RuntimeError("a compiled part failed")

    monkeypatch.setattr(partition._CompiledPartition, "forward", failing)
    got, expected, messages = _run(fn, torch.randn(6, 7))
    torch.testing.assert_close(got, expected)
    stats = dyno.stats()
    assert stats["partially_compiled_graphs"] == 1 and stats["runtime_fallbacks"] == 1, stats
    assert any("a compiled part failed" in message for message in messages), messages


def test_graph_with_a_tensor_constant_is_partly_compiled():
    # Regression (OpInfo sweep, masked.cumsum): copying the graph module for the
    # partitioner deep-copied its fake-tensor metadata, which failed for a graph holding
    # a tensor constant, and the whole graph ran eagerly. (cumsum compiles now; airy_ai
    # stands in for an op that does not.)
    def fn(x, mask):
        zero = torch.tensor(0.0)  # becomes a tensor constant of the graph
        return torch.tanh(torch.special.airy_ai(torch.where(mask, x, zero))) * 2
    got, expected, _ = _run(fn, torch.randn(5, 6), torch.rand(5, 6) > 0.5)
    torch.testing.assert_close(got, expected)
    stats = dyno.stats()
    assert stats["partially_compiled_graphs"] == 1 and stats["fallback_graphs"] == 0, stats
    assert stats["fallback_ops"] == {"aten.special_airy_ai.default": 1}, stats


class _AiryBlock(torch.nn.Module):
    """An op neither torch-mlir nor Dyno lowers (airy_ai) between compiled ops."""

    def forward(self, x):
        y = torch.softmax(x * 2, -1)
        values, positions = torch.mode(torch.special.airy_ai(y) > 0.3, dim=-1)
        return torch.tanh(torch.special.airy_ai(y)) * 2 + y.sum(-1, keepdim=True), positions


def test_an_exported_program_calls_pytorchs_kernel_for_an_op_dyno_cannot_compile(tmp_path):
    """Exports have per-op fallback too: the op is a call in the one exported wrapper,
    named in a warning and in program.json; the rest is Dyno's kernels."""
    import json
    import os

    from dyno.targets.triton import runtime as triton_runtime

    model, x = _AiryBlock(), torch.randn(16, 32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dyno.export_triton(model, (x,), str(tmp_path))
    messages = " ".join(str(w.message) for w in caught)
    assert "aten.special_airy_ai.default" in messages and "aten.mode.default" in messages, \
        messages
    spec = json.loads((tmp_path / "program.json").read_text())
    assert spec["eager_ops"] == ["aten.mode.default", "aten.special_airy_ai.default"], spec
    # (the wrapper's library calls, which decide whether a CUDA graph may record it)
    assert spec["library_calls"] == spec["eager_ops"], spec
    wrapper = (tmp_path / "wrapper.py").read_text()
    assert "_library_call(torch.ops.aten.special_airy_ai.default" in wrapper, wrapper
    assert "_library_call(torch.ops.aten.mode.default" in wrapper, wrapper
    assert "_kernels[" in wrapper, wrapper
    program = triton_runtime.load(str(tmp_path), device="cpu")
    got, positions = program(x)
    want, want_positions = model(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert torch.equal(positions, want_positions)
    assert os.path.exists(tmp_path / "kernels.py")
