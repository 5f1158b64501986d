# Issue 19 on the GPU (python3 benchmarks/gpu_long_reductions.py --artifacts DIR, after
# benchmarks/gpu_export.py --out DIR --cases long_rows_large_mean,long_sum_large_mean,long_scans_large_mean):
# each output of the long-reduction cases, Dyno (heuristic and
# autotuned configs) and eager CUDA, against float64 (max |error| / max |reference|).
import argparse
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
from gpu_run import load_programs, load_runtime
from gpu_suite import build, cases, make_inputs

parser = argparse.ArgumentParser()
parser.add_argument("--artifacts", default="build/gpu-long")
artifacts = parser.parse_args().artifacts
device = torch.device("cuda")
for name, kind, builder, specs in cases():
    if name not in ("long_rows_large_mean", "long_sum_large_mean", "long_scans_large_mean"):
        continue
    directory = os.path.join(artifacts, name)
    runtime = load_runtime(directory)
    model = build(builder, device)
    inputs = make_inputs(specs, device, seed=1)
    program, tuned = load_programs(runtime, directory, device, model.state_dict())
    with torch.no_grad():
        reference = model(*(x.double() for x in inputs))
        eager, dyno, dyno_tuned = model(*inputs), program(*inputs), tuned(*inputs)
    for i, want in enumerate(reference):
        def err(got):
            return ((got.double() - want).abs().max() / want.abs().max()).item()
        print(f"{name} output {i}: dyno {err(dyno[i]):.2e}  dyno autotuned {err(dyno_tuned[i]):.2e}"
              f"  eager {err(eager[i]):.2e}", flush=True)
