"""Where a wrapper's buffers live (python/dyno/targets/memory_planning.py, over the
statements the wrapper builder makes from the host IR): released at their last read,
intermediates kept in a per-graph workspace from call to call, and nothing a caller
receives ever in it."""
import threading

import torch

import dyno
from dyno.targets import host_runtime
from dyno.targets.host_runtime import Workspace
from dyno.targets.memory_planning import Statement, plan_workspace, release_dead_names


def _statement(text, **facts):
    """A Statement from its printed form `a, b = expression` (or `expression`)."""
    defines, expression = (), text
    head, _, rest = text.partition(" = ")
    if rest and all(name.strip().isidentifier() for name in head.split(",")):
        defines, expression = tuple(name.strip() for name in head.split(",")), rest
    return Statement(expression, defines, **facts)


def _allocation(name, shape, dtype=torch.float32):
    return Statement(f"_empty({shape!r}, dtype={dtype})", (name,), fresh=True,
                     layout=(shape, dtype),
                     into_slot=lambda slot: f"{name} = {slot}")


def _product(name, function, arguments, shape):
    """A library matmul whose result can be written into a slot (`out=`)."""
    return Statement(f"{function}({arguments})", (name,), fresh=True,
                     layout=(shape, torch.float32),
                     into_slot=lambda slot: f"{name} = {function}({arguments}, out={slot})")


def _texts(statements):
    return [statement.text for statement in statements]


def test_names_are_released_after_their_last_read():
    statements = [
        _statement("arg0_c = arg0.contiguous()"),
        _allocation("buf1", (2,)),
        _statement("_kernels['k'](arg0_c.data_ptr(), buf1.data_ptr())"),
        _statement("buf2 = buf1.reshape((2,))"),
        _statement("buf3, buf4 = _library_call(op, buf2)"),
        _statement("arg0_c = arg0.contiguous()"),  # rebound: its first value died above
        _statement("_check_condition(buf3, 'buf2 in a message is not a read')"),
        _statement("s1 = buf3.shape[0]", holds_memory=False),
        _statement("buf5 = _mm(arg0_c, buf3)", fresh=True),
        _statement("return [_as_eager(buf5, (s1,), torch.float32)]", returns=True),
    ]
    assert _texts(release_dead_names(statements)) == [
        "arg0_c = arg0.contiguous()",
        "buf1 = _empty((2,), dtype=torch.float32)",
        "_kernels['k'](arg0_c.data_ptr(), buf1.data_ptr())",
        "del arg0_c",
        "buf2 = buf1.reshape((2,))",
        "del buf1",
        "buf3, buf4 = _library_call(op, buf2)",
        "del buf2, buf4",  # buf4 is never read
        "arg0_c = arg0.contiguous()",
        "_check_condition(buf3, 'buf2 in a message is not a read')",
        "s1 = buf3.shape[0]",  # a host scalar: its `del` would free nothing
        "buf5 = _mm(arg0_c, buf3)",
        "del arg0_c, buf3",
        "return [_as_eager(buf5, (s1,), torch.float32)]",
    ]


def test_views_of_the_workspace_or_the_arguments_are_not_released():
    """A view of the workspace or of an argument holds no memory of its own: its `del`
    would free nothing and cost a statement per call. What a view of a fresh buffer
    keeps alive is released as before, and so is a reshape (which may copy)."""
    in_slot = _allocation("buf1", (8,))
    in_slot.slot = "_ws[0]"
    product = _product("buf8", "_mm", "arg0, arg0", (8, 8))
    product.slot = "_ws[1]"  # `out=` returns the slot: nothing of its own to release
    statements = [
        in_slot,
        product,
        _statement("buf2 = _view(buf1, (4, 2), (2, 1), 0)", view_of="buf1"),
        _statement("buf3 = arg0.mT", view_of="arg0"),
        _statement("buf4 = buf3.permute([1, 0])", view_of="buf3"),
        _statement("_kernels['k'](buf2.data_ptr(), buf4.data_ptr())"),
        _allocation("buf5", (8,)),
        _statement("buf6 = _view(buf5, (2, 4), (4, 1), 0)", view_of="buf5"),
        _statement("buf7 = buf1.reshape((8,))"),
        _statement("_kernels['k'](buf6.data_ptr(), buf7.data_ptr(), buf8.data_ptr())"),
        _statement("return [_as_eager(arg1, (1,), torch.float32)]", returns=True),
    ]
    assert _texts(release_dead_names(statements)) == [
        "buf1 = _ws[0]",
        "buf8 = _mm(arg0, arg0, out=_ws[1])",
        "buf2 = _view(buf1, (4, 2), (2, 1), 0)",
        "buf3 = arg0.mT",
        "buf4 = buf3.permute([1, 0])",
        "_kernels['k'](buf2.data_ptr(), buf4.data_ptr())",
        "buf5 = _empty((8,), dtype=torch.float32)",
        "buf6 = _view(buf5, (2, 4), (4, 1), 0)",
        "del buf5",
        "buf7 = buf1.reshape((8,))",
        "_kernels['k'](buf6.data_ptr(), buf7.data_ptr(), buf8.data_ptr())",
        "del buf6, buf7",
        "return [_as_eager(arg1, (1,), torch.float32)]",
    ]


def test_buffers_whose_lives_do_not_overlap_share_a_slot():
    statements = [
        _allocation("buf1", (64, 64)),
        _statement("_kernels['a'](arg0.data_ptr(), buf1.data_ptr())"),
        _allocation("buf2", (64, 64)),  # buf1 is still read below
        _statement("_kernels['b'](buf1.data_ptr(), buf2.data_ptr())"),
        _allocation("buf3", (4096,), torch.int32),  # buf1 is dead: same bytes
        _statement("_kernels['c'](buf2.data_ptr(), buf3.data_ptr())"),
        _product("buf4", "_mm", "arg1, arg1", (64, 64)),
        _statement("buf5 = buf3.reshape((64, 64))"),
        _product("buf6", "_addmm", "buf4, buf5, buf5", (64, 64)),
        _statement("return [_as_eager(buf6, (64, 1), torch.float32)]", returns=True),
    ]
    unplanned = _texts(statements)
    workspace = plan_workspace(statements)
    planned = _texts(statements)
    assert planned[0] == "buf1 = _ws[0]" and planned[2] == "buf2 = _ws[1]"
    assert planned[4] == "buf3 = _ws[2]"
    assert planned[6] == "buf4 = _mm(arg1, arg1, out=_ws[3])"
    assert planned[8] == unplanned[8], "the returned result must be a fresh tensor"
    slots = [slot for slot, _, _ in workspace.views]
    assert slots[0] != slots[1] and slots[2] == slots[0], workspace.views
    # buf2 died at kernel c; buf3 (through buf5) is still read by the addmm.
    assert slots[3] == slots[1] and slots[3] != slots[2], workspace.views
    assert workspace.slot_bytes == [64 * 64 * 4] * 2


def test_static_views_of_a_slot_are_made_with_the_workspace():
    """A `_view` of a buffer in a slot (of an allocation, or of a product written into
    one) is made once with the workspace's set, not per call; it sees the slot's memory
    as `_view` would; a view of an argument stays a call."""
    statements = [
        _allocation("buf1", (4, 6)),
        _statement("_kernels['a'](arg0.data_ptr(), buf1.data_ptr())"),
        _statement("buf2 = _view(buf1, (2, 3, 4), (3, 1, 6), 0)", view_of="buf1",
                   strided=((2, 3, 4), (3, 1, 6), 0)),
        _product("buf3", "_mm", "arg1, arg1", (6, 6)),
        _statement("buf4 = _view(buf3, (3, 2), (1, 6), 7)", view_of="buf3",
                   strided=((3, 2), (1, 6), 7)),
        _statement("buf5 = _view(arg0, (2, 2), (1, 2), 0)", view_of="arg0",
                   strided=((2, 2), (1, 2), 0)),
        _statement("_kernels['b'](buf2.data_ptr(), buf4.data_ptr(), buf5.data_ptr())"),
        _statement("return []", returns=True),
    ]
    workspace = plan_workspace(statements)
    planned = _texts(statements)
    assert planned[2] == "buf2 = _ws[2]" and planned[4] == "buf4 = _ws[3]", planned
    assert planned[5] == "buf5 = _view(arg0, (2, 2), (1, 2), 0)", planned
    assert "del buf2" not in _texts(release_dead_names(statements))
    buffers = workspace.acquire()
    buffers[0].copy_(torch.arange(24.0).view(4, 6))
    buffers[1].copy_(torch.arange(36.0).view(6, 6))
    assert torch.equal(buffers[2], buffers[0].as_strided((2, 3, 4), (3, 1, 6)))
    assert torch.equal(buffers[3], buffers[1].flatten()[7:].as_strided((3, 2), (1, 6)))


def test_buffers_a_returned_view_aliases_stay_fresh():
    statements = [
        _allocation("buf1", (8, 8)),
        _statement("_kernels['a'](arg0.data_ptr(), buf1.data_ptr())"),
        _statement("buf2 = buf1.permute([1, 0])", view_of="buf1"),
        _statement("buf3, buf4 = _library_call(op, buf2)"),  # may return a view of buf2
        _statement("return [_as_eager(buf3, (8, 1), torch.float32)]", returns=True),
    ]
    assert plan_workspace(statements) is None
    assert all(statement.slot is None for statement in statements)


def test_graphs_with_collectives_plan_nothing():
    statements = [
        _allocation("buf1", (8,)),
        _statement("_kernels['a'](arg0.data_ptr(), buf1.data_ptr())"),
        _statement("buf2 = _collective(op, buf1)", collective=True),
        _allocation("buf3", (8,)),
        _statement("_kernels['b'](buf2.data_ptr(), buf3.data_ptr())"),
        _statement("return [buf3]", returns=True),
    ]
    assert plan_workspace(statements) is None
    assert all(statement.slot is None for statement in statements)


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(64, 256)
        self.down = torch.nn.Linear(256, 64)

    def forward(self, x):
        h = torch.nn.functional.silu(self.up(x)) * torch.sigmoid(x).sum(-1, keepdim=True)
        return torch.softmax(self.down(h) + x, -1)


class _CountedAllocations:
    """The wrappers' `_empty_strided` (host_runtime.empty_strided), counted: on the CPU
    it allocates without the dispatcher, where torch.profiler does not see it."""

    def __init__(self, monkeypatch):
        self.made = 0
        chosen = host_runtime.empty_strided

        def counting(device):
            allocate = chosen(device)

            def counted(*args):
                self.made += 1
                return allocate(*args)
            return counted
        monkeypatch.setattr(host_runtime, "empty_strided", counting)

    def count(self, fn, *args) -> int:
        """Tensors allocated by one call of `fn`, through ATen or `_empty_strided`."""
        made = self.made
        with torch.profiler.profile() as profile:
            fn(*args)
        return self.made - made + sum(
            event.count for event in profile.key_averages()
            if event.key in ("aten::empty", "aten::empty_strided"))


def test_intermediates_live_in_the_workspace_and_results_do_not(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    allocations = _CountedAllocations(monkeypatch)  # (before the wrapper is loaded)
    model = _Block().eval()
    compiled = torch.compile(model, backend="mlir")
    x, y = torch.randn(128, 64), torch.randn(128, 64)
    with torch.no_grad():
        first = compiled(x)
        kept = first.clone()
        second = compiled(y)
        torch.testing.assert_close(first, kept, rtol=0, atol=0)  # untouched by call 2
        torch.testing.assert_close(first, model(x))
        torch.testing.assert_close(second, model(y))
        assert first.untyped_storage().data_ptr() != second.untyped_storage().data_ptr()
    assert dyno.stats()["fallback_graphs"] == 0
    (wrapper,) = tmp_path.glob("graph_*/05-wrapper.py")
    source = wrapper.read_text()
    assert "_ws[" in source and "out=_ws[" in source, source
    # Per call only what the caller receives is allocated (the result), not the
    # intermediates: the kernels' outputs and the matmuls' (`out=`).
    # (Without the workspace: 2, the kernels' two outputs.)
    with torch.no_grad():
        assert allocations.count(compiled, x) == 1


def test_calls_from_several_threads_each_get_their_own_workspace():
    model = _Block().eval()
    compiled = torch.compile(model, backend="mlir")
    inputs = [torch.randn(512, 64) for _ in range(4)]
    with torch.no_grad():
        expected = [model(x) for x in inputs]
        compiled(inputs[0])
        failures = []

        def work(index):
            for _ in range(20):
                result = compiled(inputs[index])
                if not torch.allclose(result, expected[index], rtol=1e-4, atol=1e-5):
                    failures.append(index)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not failures, failures
    assert dyno.stats()["fallback_graphs"] == 0 and dyno.stats()["runtime_fallbacks"] == 0


def test_without_the_workspace_nothing_is_held_between_calls(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    model = _Block().eval()
    compiled = torch.compile(model, backend="mlir", options={"workspace": False})
    x = torch.randn(128, 64)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    (wrapper,) = tmp_path.glob("graph_*/05-wrapper.py")
    source = wrapper.read_text()
    assert "_ws" not in source and "_empty_strided(" in source and "del " in source, source


def test_a_workspace_made_under_inference_mode_serves_later_calls():
    model = _Block().eval()
    compiled = torch.compile(model, backend="mlir")
    x = torch.randn(128, 64)
    with torch.no_grad():
        expected = model(x)
    with torch.inference_mode():
        torch.testing.assert_close(compiled(x), expected)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), expected)
    torch.testing.assert_close(compiled(x).detach(), expected)
    assert dyno.stats()["fallback_graphs"] == 0 and dyno.stats()["runtime_fallbacks"] == 0


def test_triton_intermediates_live_in_the_workspace(tmp_path, monkeypatch):
    """The Triton target's wrapper plans its intermediates too (on a GPU each saves a
    torch.empty, 7 us of host time, per call); its results stay fresh."""
    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path))
    model = _Block().eval()
    compiled = torch.compile(model, backend="mlir", options={"target": "triton"})
    x, y = torch.randn(16, 64), torch.randn(16, 64)
    with torch.no_grad():
        first = compiled(x)
        kept = first.clone()
        second = compiled(y)
        torch.testing.assert_close(first, kept, rtol=0, atol=0)  # untouched by call 2
        torch.testing.assert_close(first, model(x), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(second, model(y), rtol=1e-4, atol=1e-5)
    assert dyno.stats()["fallback_graphs"] == 0
    (wrapper,) = tmp_path.glob("graph_*/06-wrapper.py")
    source = wrapper.read_text()
    assert "_ws[" in source and "out=_ws[" in source, source


class _CpuBackedWorkspace(Workspace):
    """A GPU workspace whose slots are CPU tensors: its stream bookkeeping, testable
    without a GPU."""

    def _new_set(self):
        self.made += 1
        return [torch.empty(shape, dtype=dtype) for _, shape, dtype in self.views]


def test_a_gpu_workspace_keeps_its_sets_per_stream_and_none_for_a_graph(monkeypatch):
    stream = {"now": 100, "capturing": False}
    monkeypatch.setattr(torch._C, "_cuda_isCurrentStreamCapturing",
                        lambda: stream["capturing"], raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream",
                        lambda device: stream["now"], raising=False)
    workspace = _CpuBackedWorkspace([64], [(0, (4, 4), torch.float32)], device="cuda")
    workspace.made = 0
    first = workspace.acquire()
    workspace.release(first)
    assert workspace.acquire() is first  # the same stream: the kept set
    workspace.release(first)
    stream["now"] = 200  # another stream: a set of its own, never the first stream's
    second = workspace.acquire()
    assert second is not first and workspace.made == 2
    workspace.release(second)
    stream["capturing"] = True  # a CUDA graph records: a fresh set, not kept afterwards
    recorded = workspace.acquire()
    assert recorded is not first and recorded is not second
    workspace.release(recorded)
    stream["capturing"] = False
    assert workspace.acquire() is second
    stream["now"] = 100
    assert workspace.acquire() is first
    workspace.clear()
    assert workspace.acquire() is not first
