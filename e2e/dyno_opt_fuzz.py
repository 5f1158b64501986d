"""Mutation fuzzing of dyno-opt: valid modules (the lit tests' inputs) changed at random,
each run through the pass pipeline its test runs. Bad input must get an MLIR diagnostic
and a nonzero exit, never a crash (issue 52, item 6).

    .venv/bin/python e2e/dyno_opt_fuzz.py --cases 3000 --seed 0 [--out build/fuzz-crashes]

Each case takes one `dyno-opt` RUN line of a lit test under test/ (its flags, with the
input's `// -----` pieces split apart) and one piece of its input, applies one to three
mutations (a line deleted, duplicated or swapped with the next, an integer literal
changed, one type or op name replaced by another of its kind, the text cut short) and
runs dyno-opt on it. An outcome is a crash when dyno-opt dies by a signal or prints
LLVM's crash banner, or exits nonzero without an `error:` diagnostic; each crash's input
and command are written under --out, and the command exits 1 when there was any.
dyno-opt turns an assertion that parsing or verifying its input trips into an error;
such an input is run again without that recovery, and counts as a crash when the
assertion was reached through Dyno's code (an op verifier of ours), and as "upstream
assertion recovered" when only upstream MLIR was on the stack (its parser and verifiers
keep assertions in the prebuilt kit: bugs of MLIR's, reported by the count).
"""
import argparse
import os
import pathlib
import random
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
DYNO_OPT = os.environ.get("DYNO_OPT", str(ROOT / "build" / "bin" / "dyno-opt"))

# Replacements of one token by another of its kind.
# What dyno-opt says when it recovered from an assertion in parsing or verifying its input.
RECOVERED = "failed an internal assertion on this input"

TYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "index"]
OPS = {"arith.addf": "arith.mulf", "arith.mulf": "arith.subf", "arith.addi": "arith.muli",
       "arith.cmpf": "arith.cmpi", "arith.select": "arith.addi", "linalg.yield": "scf.yield",
       "\"parallel\"": "\"reduction\"", "\"reduction\"": "\"parallel\"", "tensor.empty": "tensor.splat",
       "ins(": "outs(", "outs(": "ins(", "-> (d0)": "-> (d1)", "(d0, d1) ->": "(d0) ->"}


def cases_from_tests():
    """(flags, input piece) of every dyno-opt RUN line of the lit tests."""
    found = []
    for path in sorted((ROOT / "test").rglob("*.mlir")):
        text = path.read_text()
        # RUN lines with their continuations (a trailing backslash) joined.
        joined = re.sub(r"\\\n// RUN:", " ", text)
        for run in re.findall(r"^// RUN: (dyno-opt[^|\n]*)", joined, re.MULTILINE):
            words = shlex.split(run.rstrip("\\ "))[1:]
            if "-verify-diagnostics" in words or "--verify-diagnostics" in words:
                continue
            flags, skip = [], False
            for word in words:
                if skip or word == "-o":  # the output: /dev/null here
                    skip = not skip
                    continue
                if word not in ("--split-input-file", "-split-input-file") \
                        and not word.startswith("%"):
                    flags.append(word)
            pieces = [p for p in re.split(r"^// -----$", text, flags=re.MULTILINE)
                      if p.strip()]
            found += [(path.relative_to(ROOT), flags, piece) for piece in pieces]
    return found


def mutate(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    kind = rng.randrange(7)
    if kind == 0 and len(lines) > 1:  # delete a line
        del lines[rng.randrange(len(lines))]
    elif kind == 1:  # duplicate a line
        index = rng.randrange(len(lines))
        lines.insert(index, lines[index])
    elif kind == 2 and len(lines) > 1:  # swap a line with the next
        index = rng.randrange(len(lines) - 1)
        lines[index], lines[index + 1] = lines[index + 1], lines[index]
    elif kind == 3:  # change an integer literal
        text = "\n".join(lines)
        numbers = list(re.finditer(r"(?<![\w%#@.])\d+(?![\w.])", text))
        if numbers:
            match = rng.choice(numbers)
            value = rng.choice([0, 1, 2, 3, 7, 64, 4096, -1, int(match.group()) + 1])
            text = text[:match.start()] + str(value) + text[match.end():]
        return text
    elif kind == 4:  # one type for another
        text = "\n".join(lines)
        matches = list(re.finditer(r"\b(" + "|".join(TYPES) + r")\b", text))
        if matches:
            match = rng.choice(matches)
            text = text[:match.start()] + rng.choice(TYPES) + text[match.end():]
        return text
    elif kind == 5:  # one op or attribute for another
        text = "\n".join(lines)
        present = [key for key in OPS if key in text]
        if present:
            key = rng.choice(present)
            starts = [m.start() for m in re.finditer(re.escape(key), text)]
            start = rng.choice(starts)
            text = text[:start] + OPS[key] + text[start + len(key):]
        return text
    else:  # cut short
        text = "\n".join(lines)
        return text[:rng.randrange(len(text) + 1)]
    return "\n".join(lines)


def crashed_in_dyno_code(stderr: str) -> bool:
    """Whether LLVM's stack trace in `stderr` shows the crash in Dyno's code or in an
    upstream function Dyno's code called directly (say, a verifier of ours asking a block
    without one for its terminator): the first two frames past the signal handling."""
    frames = [line for line in stderr.splitlines() if re.match(r"\s*#\d+ ", line)]
    handling = re.compile(r"PrintStackTrace|SignalHandler|libc\.so|pthread_kill|raise|abort"
                          r"|_nl_load_domain|__assert")
    inner = [frame for frame in frames if not handling.search(frame)][:2]
    return any("dyno::" in frame for frame in inner)


def run_case(flags, text, directory):
    path = os.path.join(directory, "input.mlir")
    with open(path, "w") as file:
        file.write(text)
    command = [DYNO_OPT, *flags, path, "-o", os.devnull]
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "timeout", command, ""
    stderr = completed.stderr
    if completed.returncode < 0 or "PLEASE submit a bug report" in stderr \
            or "Stack dump" in stderr:
        return "crash", command, stderr
    if completed.returncode != 0 and "error:" not in stderr:
        return "no diagnostic", command, stderr
    if completed.returncode != 0 and RECOVERED in stderr:
        # dyno-opt turned an assertion in parsing or verifying the input into an error.
        # Upstream MLIR's own (the kit keeps its assertions) are counted apart; one in
        # Dyno's code, or in an upstream call Dyno made against its contract, is ours.
        unrecovered = subprocess.run([DYNO_OPT, "--recover-parser-crashes=false", *flags, path,
                                      "-o", os.devnull], capture_output=True, text=True,
                                     timeout=60).stderr
        if crashed_in_dyno_code(unrecovered):
            return "crash", command, unrecovered
        return "upstream assertion recovered", command, stderr
    return ("rejected" if completed.returncode else "accepted"), command, stderr


def fuzz(cases: int, seed: int, out: str):
    """Runs `cases` mutated inputs from `seed`; returns (outcome counts, failures as
    (outcome, test, first line of its message)), each failure's input written under
    `out`."""
    sources = cases_from_tests()
    rng = random.Random(seed)
    counts, failures = {}, []
    with tempfile.TemporaryDirectory() as directory:
        for case in range(cases):
            test, flags, piece = rng.choice(sources)
            text = piece
            for _ in range(rng.randint(1, 3)):
                text = mutate(text, rng)
            outcome, command, stderr = run_case(flags, text, directory)
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome in ("crash", "no diagnostic", "timeout"):
                os.makedirs(out, exist_ok=True)
                stem = os.path.join(out, f"case{seed}-{case}")
                with open(stem + ".mlir", "w") as file:
                    file.write(text)
                first = next((line for line in stderr.splitlines()
                              if "Assertion" in line or "error" in line.lower()), "")
                with open(stem + ".txt", "w") as file:
                    file.write(f"{outcome} ({test})\n{shlex.join(command[:-3])} "
                               f"{stem}.mlir\n\n{stderr[:6000]}")
                failures.append((outcome, str(test), first[:160]))
    return counts, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "build" / "fuzz-crashes"))
    args = parser.parse_args()
    counts, failures = fuzz(args.cases, args.seed, args.out)
    print(f"{args.cases} mutated inputs from {len(cases_from_tests())} (test, pipeline) "
          f"pieces, seed {args.seed}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for outcome, test, first in failures:
        print(f"  {outcome}: {test}: {first}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
