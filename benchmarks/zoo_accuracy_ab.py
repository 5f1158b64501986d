"""Accuracy of two dyno-opt builds on zoo models against the float32 reference, beside
eager's (the check e2e/test_zoo.py makes for one build).

    python benchmarks/zoo_accuracy_ab.py --old /tmp/dyno-opt-old [--new build/bin/dyno-opt]
        --models swin,opt [--dtype bfloat16]

For each model (zoo.build at its "cpu" size): the relative L2 error against the same
model computed in float32 of eager and of each build (compile cache off), and each
build's distance from eager. A change that drops roundings of intermediates moves a
result away from eager's and, where it is right, closer to the reference."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))  # zoo, test_zoo
import zoo  # noqa: E402
from test_zoo import float32_reference, relative_error  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", required=True, help="the dyno-opt to compare against")
    parser.add_argument("--new", default="build/bin/dyno-opt")
    parser.add_argument("--models", required=True, help="comma-separated zoo names")
    parser.add_argument("--dtype", default="bfloat16")
    args = parser.parse_args()
    os.environ["DYNO_CACHE"] = "0"
    from dyno.backend import mlir

    dtype = getattr(torch, args.dtype)
    print("| model | eager | old | new | old from eager | new from eager |")
    print("|---|---|---|---|---|---|")
    for name in args.models.split(","):
        model, inputs = zoo.build(name, dtype)
        with torch.no_grad():
            eager = model(*inputs)
            reference = float32_reference(model, inputs)
            cells = [f"{relative_error(eager, reference):.3e}"]
            distances = []
            for dyno_opt in (args.old, args.new):
                os.environ["DYNO_OPT"] = dyno_opt
                torch._dynamo.reset()

                def backend(gm, example_inputs):  # a function per build: no reuse
                    return mlir(gm, example_inputs)

                compiled = torch.compile(model, backend=backend)(*inputs)
                cells.append(f"{relative_error(compiled, reference):.3e}")
                distances.append(f"{relative_error(compiled, eager):.1e}")
        print(f"| {name} | {' | '.join(cells + distances)} |", flush=True)


if __name__ == "__main__":
    main()
