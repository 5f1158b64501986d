"""torch.distributed under torch.compile(backend="mlir"): 2 or 4 processes, gloo, CPU tensors.

distributed_runs.py starts the processes (each scenario against eager in the same process);
these tests assert on each rank's report. Collectives are library calls inside the
compiled graphs (dyno.library_call), never per-op fallback.
"""
import json
import os
import subprocess
import sys

import pytest
import torch

import dyno

RUNS = os.path.join(os.path.dirname(__file__), "distributed_runs.py")
COLLECTIVES = ["all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "broadcast",
               "all_to_all_single"]


def run_scenarios(target, directory, world, *scenarios):
    """Every rank's report of one run of `scenarios` (all 2-process ones if none)."""
    done = subprocess.run([sys.executable, RUNS, target, str(directory), *scenarios],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        # A rank that crashed in native code printed every thread's Python stack
        # (faulthandler) well before the spawner's own traceback: show both.
        fatal = done.stderr.find("Fatal Python error")
        crash = done.stderr[max(fatal - 1000, 0):fatal + 8000] if fatal >= 0 else ""
        pytest.fail(f"exit status {done.returncode}\n{crash}\n[...]\n{done.stderr[-4000:]}")
    # A process that aborts at exit ("terminate called without an active exception")
    # still writes its report: the exit status and stderr say it.
    assert "terminate called" not in done.stderr
    return [json.loads((directory / f"rank{rank}.json").read_text()) for rank in range(world)]


@pytest.fixture(scope="module", params=["cpu", "triton"])
def reports(request, tmp_path_factory):
    """Both ranks' reports of one run of every 2-process scenario on a target."""
    return run_scenarios(request.param, tmp_path_factory.mktemp(f"distributed-{request.param}"),
                         2)


def assert_compiled_without_fallback(result):
    assert result["compiled_graphs"] >= 1
    for key in ("fallback_graphs", "runtime_fallbacks", "partially_compiled_graphs",
                "split_graphs"):
        assert result[key] == 0, (key, result)
    assert result["fallback_ops"] == {}


def test_functional_collectives_are_library_calls(reports):
    for report in reports:
        result = report["functional_collectives"]
        assert_compiled_without_fallback(result)
        assert result["difference"] < 1e-5
        calls = result["library_calls"]
        for name in COLLECTIVES:
            assert calls.get(f"_c10d_functional.{name}.default") == 1, calls
        assert calls["_c10d_functional.wait_tensor.default"] == len(COLLECTIVES)


def test_coalesced_collectives_are_a_library_call_per_tensor(reports):
    # Per-op fallback ran them eagerly before (torch-mlir cannot lower their tensor lists).
    for report in reports:
        result = report["coalesced_collectives"]
        assert_compiled_without_fallback(result)
        assert result["results"] and result["difference"] < 1e-5
        calls = result["library_calls"]
        assert calls.get("_c10d_functional.all_reduce.default") == 3, calls
        assert calls.get("_c10d_functional.all_gather_into_tensor.default") == 2, calls
        assert calls.get("_c10d_functional.reduce_scatter_tensor.default") == 2, calls
        assert calls["_c10d_functional.wait_tensor.default"] == 7, calls


def test_a_process_that_cannot_compile_a_graph_issues_the_same_collectives(reports):
    """Rank 1's compile of a graph with collectives fails, rank 0's succeeds: rank 1 runs
    the AOT graph eagerly (Dyno's per-tensor collectives, as rank 0's compiled graph
    issues them), not Dynamo's graph (one coalesced message): the results are eager's and
    no process aborts (run_scenarios checks the exit status)."""
    compiled, failed = (report["divergent_compile"] for report in reports)
    for result in (compiled, failed):
        assert result["results"] and result["difference"] < 1e-5
    assert_compiled_without_fallback(compiled)
    assert failed["compiled_graphs"] == 0 and failed["fallback_graphs"] >= 1, failed
    assert "injected" in " ".join(failed["fallback_reasons"])


def test_tensor_parallel_training_matches_eager(reports):
    for report in reports:
        result = report["tensor_parallel_training"]
        assert_compiled_without_fallback(result)
        assert result["library_calls"].get("_c10d_functional.all_reduce.default", 0) >= 1
        for eager, compiled in result["losses"]:
            assert compiled == pytest.approx(eager, rel=1e-5, abs=1e-6)
        assert result["difference"] < 1e-5


def test_data_parallel_training_matches_eager(reports):
    for report in reports:
        result = report["data_parallel_training"]
        assert_compiled_without_fallback(result)
        assert result["compiled_graphs"] >= 2  # the forward and the backward
        for eager, compiled in result["losses"]:
            assert compiled == pytest.approx(eager, rel=1e-5, abs=1e-6)
        assert result["difference"] < 1e-5
    # The ranks trained on different batches and agree after DDP's all-reduces.
    assert reports[0]["data_parallel_training"]["losses"] != \
        reports[1]["data_parallel_training"]["losses"]


@pytest.mark.parametrize("scenario, collectives", [
    ("sharded_data_parallel_training", ("all_gather_into_tensor", "reduce_scatter_tensor")),
    ("replicated_data_parallel_training", ("all_reduce",))])
def test_in_graph_data_parallel_matches_fsdp2_and_ddp(reports, scenario, collectives):
    """dyno.data_parallel.DataParallel, compiled: the all-gathers and reduce-scatters (or
    all-reduces) are library calls in the forward and backward graphs, one per parameter
    and step direction, and training matches eager FSDP2 (or DDP) on each rank's batches."""
    for report in reports:
        result = report[scenario]
        assert_compiled_without_fallback(result)
        assert result["compiled_graphs"] == 2  # the forward and the backward
        calls = result["library_calls"]
        for name in collectives:
            assert calls.get(f"_c10d_functional.{name}.default") == 6, calls  # 6 parameters
        assert calls["_c10d_functional.wait_tensor.default"] == 6 * len(collectives)
        for eager, compiled in result["losses"]:
            assert compiled == pytest.approx(eager, rel=1e-5, abs=1e-6)
        assert result["difference"] < 1e-5
        sharded = scenario.startswith("sharded")
        # Sharded: each rank keeps half of every parameter (padded to an even size).
        assert result["local_numel"] == (
            sum((n + 1) // 2 for n in (16 * 48, 48, 48 * 37, 37, 37 * 8, 8)) if sharded
            else result["model_numel"])
    assert reports[0][scenario]["losses"] != reports[1][scenario]["losses"]


def assert_trains_as_eager(result):
    for eager, compiled in result["losses"]:
        assert compiled == pytest.approx(eager, rel=1e-5, abs=1e-6)
    assert result["difference"] < 1e-5


def test_fully_sharded_training_compiles_the_blocks_between_fsdp2_hooks(reports):
    """FSDP2 with its eager hooks (torch 2.13 never traces them) around compiled blocks:
    the blocks' forward and backward are Dyno's graphs, and training matches eager FSDP2."""
    for report in reports:
        result = report["fully_sharded_training"]
        assert_compiled_without_fallback(result)
        assert result["compiled_graphs"] >= 2  # a block's forward and backward
        assert_trains_as_eager(result)
    assert reports[0]["fully_sharded_training"]["losses"] != \
        reports[1]["fully_sharded_training"]["losses"]


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_two_dimensional_training_matches_eager(target, tmp_path):
    """4 processes, dp 2 x tp 2: tensor-parallel blocks (their all-reduces library calls
    in Dyno's graphs) fully sharded by FSDP2 over dp, against the same in eager."""
    reports = run_scenarios(target, tmp_path, 4, "two_dimensional_training")
    losses = []
    for report in reports:
        result = report["two_dimensional_training"]
        assert_compiled_without_fallback(result)
        assert result["library_calls"].get("_c10d_functional.all_reduce.default", 0) >= 1
        assert_trains_as_eager(result)
        losses.append([loss for step in result["losses"] for loss in step])
    # Ranks 0 and 1 are one tp group (the same batches), 2 and 3 the other.
    assert losses[0] == pytest.approx(losses[1]) and losses[2] == pytest.approx(losses[3])
    assert losses[0] != losses[2]


def test_a_failed_collective_raises_and_is_not_replayed(tmp_path):
    """A graph that communicates is not run a second time eagerly after a failure (this
    process alone would issue its collectives again): the collective's error is raised."""
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0,
                            world_size=1)
    try:
        group_name = dist.group.WORLD.group_name
        compiled = torch.compile(lambda x: funcol.all_reduce(x * 2, "sum", group_name) + 1,
                                 backend="mlir")
        x = torch.randn(4)
        torch.testing.assert_close(compiled(x), x * 2 + 1)
        assert dyno.stats()["library_calls"]["_c10d_functional.all_reduce.default"] == 1
    finally:
        dist.destroy_process_group()
    # The group is gone: the compiled graph's collective fails, and that error is raised.
    with pytest.raises(Exception, match=group_name):
        compiled(x)
    assert dyno.stats()["runtime_fallbacks"] == 0


def test_collectives_overlap_independent_work(tmp_path, monkeypatch):
    """The all-reduce starts, the independent matmul runs, then the graph waits."""
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol

    monkeypatch.setenv("DYNO_DEBUG_DIR", str(tmp_path / "debug"))
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0,
                            world_size=1)
    try:
        def program(x, w, v):
            summed = funcol.all_reduce(torch.relu(x @ w), "sum", dist.group.WORLD)
            independent = torch.tanh(v @ w).sum(0)
            return summed * 2 + independent

        x, w, v = torch.randn(8, 16), torch.randn(16, 16), torch.randn(8, 16)
        torch.testing.assert_close(torch.compile(program, backend="mlir")(x, w, v),
                                   program(x, w, v))
    finally:
        dist.destroy_process_group()
    (wrapper,) = (tmp_path / "debug").glob("graph_*/05-wrapper.py")
    lines = wrapper.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "all_reduce" in line)
    wait = next(i for i, line in enumerate(lines) if "wait_tensor" in line)
    independent = next(i for i, line in enumerate(lines) if "_mm(arg2" in line)
    assert start < independent < wait, "\n".join(lines)


def test_collective_scheduling_keeps_effects_and_start_order():
    """Starts keep their order and waits stop before an op with effects (a mutation)."""
    from dyno.capture.collective_scheduling import with_collectives_overlapped

    c10d, aten = torch.ops._c10d_functional, torch.ops.aten
    graph = torch.fx.Graph()
    x, w = graph.placeholder("x"), graph.placeholder("w")
    first = graph.call_function(c10d.all_reduce.default, (x, "sum", "0"))
    first_wait = graph.call_function(c10d.wait_tensor.default, (first,))
    square = graph.call_function(aten.mm.default, (w, w))
    second = graph.call_function(c10d.all_reduce.default, (square, "sum", "0"))
    second_wait = graph.call_function(c10d.wait_tensor.default, (second,))
    other = graph.call_function(aten.mm.default, (x, x))
    mutation = graph.call_function(aten.copy_.default, (w, other))
    total = graph.call_function(aten.add.Tensor, (first_wait, second_wait))
    graph.output((total, mutation))
    scheduled = with_collectives_overlapped(torch.fx.GraphModule(torch.nn.Module(), graph))
    order = [node.name for node in scheduled.graph.nodes]  # the copy keeps the names
    expected = [n.name for n in (x, w, first, square, second, other, first_wait, second_wait,
                                 mutation, total)] + ["output"]
    # The first wait sinks past the independent matmuls and the second start, to just
    # before the mutation; the second start stays after the value it sends.
    assert order == expected, order
