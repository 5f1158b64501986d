"""Where the CPU bf16 MLP's time goes (issue 18: Dyno 0.90x eager on benchmarks/run.py's mlp).

    python benchmarks/experiments/mlp_breakdown.py [--dtype bfloat16] [--rounds 8]

Times, in one run and in rotating blocks (medians): the eager model, Dynamo alone
(backend="eager": the captured graph run by eager ops), Dyno's compiled model, the three
addmm calls alone (the GEMMs both run), and each non-GEMM op (GELU, ReLU, log_softmax)
alone, eager and compiled; and what Dynamo's frame costs per call, with the GEMMs around
it and without. The difference between a model's time and the GEMMs' is what its other
ops cost in context; the ops alone show what they cost without the GEMMs around them.
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # report
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))  # zoo, models
from models import MLP  # noqa: E402
from report import time_calls  # noqa: E402


def rotate(backends, inputs, rounds, iters=50):
    samples = {label: [] for label in backends}
    for fn in backends.values():
        time_calls(fn, inputs, 5)
    for _ in range(rounds):
        for label, fn in backends.items():
            samples[label] += time_calls(fn, inputs, iters)
    return {label: statistics.median(s) * 1e6 for label, s in samples.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    import dyno  # noqa: F401  (registers the backend's options)

    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    model = MLP().eval().to(dtype)
    x = torch.randn(64, 512).to(dtype)
    linears = [m for m in model.net if isinstance(m, torch.nn.Linear)]

    def gemms_only(t):
        for linear in linears:
            t = torch.addmm(linear.bias, t, linear.weight.t())
        return t

    with torch.no_grad():
        compiled = torch.compile(model, backend="mlir")
        compiled(x)
        # Dynamo alone: its own graph run by eager ops (backend="eager"), what every
        # torch.compile backend pays per call on top of its code (guards, the frame's
        # parameter loads, the graph module call).
        dynamo_only = torch.compile(model, backend="eager")
        dynamo_only(x)
        times = rotate({"eager": model, "dynamo only": dynamo_only, "dyno": compiled,
                        "three addmm": gemms_only}, (x,), args.rounds)
        print(f"threads {torch.get_num_threads()}, {args.dtype}: " +
              ", ".join(f"{k} {v:.0f} us" for k, v in times.items()))
        print(f"non-GEMM time in context: eager {times['eager'] - times['three addmm']:.0f} us, "
              f"dynamo only {times['dynamo only'] - times['three addmm']:.0f} us, "
              f"dyno {times['dyno'] - times['three addmm']:.0f} us")
        frame_cost(model, x)
        hidden = torch.randn(64, 1024).to(dtype)
        for name, fn, t in [("gelu", F.gelu, hidden), ("relu", F.relu, hidden),
                            ("log_softmax", lambda v: F.log_softmax(v, -1),
                             torch.randn(64, 10).to(dtype))]:
            torch._dynamo.reset()
            op = torch.compile(fn, backend="mlir")
            op(t)
            alone = rotate({"eager": fn, "dyno": op}, (t,), args.rounds)
            print(f"{name} alone: eager {alone['eager']:.1f} us, dyno {alone['dyno']:.1f} us")


def frame_cost(model, x, calls=3000):
    """What Dynamo's frame costs per call around a compiled graph: the time from calling
    the compiled model to its backend's function (guards, the frame's bytecode) and
    from that function's return to the caller's, with the model's GEMMs running in
    between ("in context") and with nothing running (the graph's result cached).
    Medians; each backend compiled alone (torch._dynamo.reset())."""
    clock = time.perf_counter
    for label, runs_graph in (("in context", True), ("nothing around it", False)):
        stamps = {}
        cached = model(x)

        def backend(gm, example_inputs):
            def run(*args):
                stamps["in"] = clock()
                result = gm(*args) if runs_graph else (cached,)
                stamps["out"] = clock()
                return result
            return run

        torch._dynamo.reset()
        compiled = torch.compile(model, backend=backend)
        compiled(x)
        before, after = [], []
        for _ in range(calls):
            start = clock()
            compiled(x)
            end = clock()
            before.append(stamps["in"] - start)
            after.append(end - stamps["out"])
        print(f"Dynamo's frame, {label}: {statistics.median(before) * 1e6:.0f} us before "
              f"the graph, {statistics.median(after) * 1e6:.0f} us after it")
    torch._dynamo.reset()


if __name__ == "__main__":
    main()
