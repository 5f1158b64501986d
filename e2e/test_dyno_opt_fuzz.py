"""dyno-opt on mutated lit inputs, a fixed-seed run in the test command (the long runs:
`python e2e/dyno_opt_fuzz.py --cases 6000 --seed N`): no crash, every rejection a
diagnostic, including the inputs on which upstream MLIR's parser asserts (dyno-opt
recovers from those: see tools/dyno-opt/dyno-opt.cpp)."""
import dyno_opt_fuzz


def test_no_crash_on_mutated_inputs(tmp_path):
    # Seed 1's first 1200 inputs hold a recovered upstream assertion (case 1132, an
    # affine map naming an undeclared dimension), so the recovery path runs here too.
    counts, failures = dyno_opt_fuzz.fuzz(cases=1200, seed=1, out=str(tmp_path))
    assert not failures, "\n".join(f"{o}: {t}: {m}" for o, t, m in failures)
    assert counts.get("upstream assertion recovered", 0) >= 1, counts
    assert counts.get("accepted", 0) > 100 and counts.get("rejected", 0) > 100, counts
