#!/usr/bin/env python3
"""The runner's command line end to end: every bad input gets one sentence naming
the value, exit code 2 and no output file. Runs with or without a GPU; the checks
that need a device (memory) run only when one is present.

usage: test_runner_cli.py PATH/TO/reduce
"""
import os
import subprocess
import sys
import tempfile

reduce_bin = sys.argv[1]
failures = []
passed = 0


def run(args):
    p = subprocess.run([reduce_bin] + args, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def expect(args, code, *needles, csv=None):
    global passed
    rc, out, err = run(args)
    problems = []
    if rc != code:
        problems.append(f"exit code {rc}, expected {code}")
    for needle in needles:
        if needle not in err:
            problems.append(f"stderr lacks {needle!r}")
    if code == 2:
        lines = [l for l in err.strip().splitlines() if l]
        if len(lines) != 1:
            problems.append(f"expected one line on stderr, got {len(lines)}")
    if csv is not None and (os.path.exists(csv) or os.path.exists(csv + ".tmp")):
        problems.append(f"output file {csv} was left behind")
    if problems:
        failures.append(f"reduce {' '.join(args)}: " + "; ".join(problems) + f"\n    stderr: {err.strip()}")
    else:
        passed += 1


with tempfile.TemporaryDirectory() as tmp:
    csv = os.path.join(tmp, "x.csv")
    bad = [
        (["--n", "abc"], "--n 'abc' is not a count"),
        (["--n", "-5"], "--n '-5' is negative"),
        (["--n", "2^70"], "--n '2^70' is too large"),
        (["--n", "1e400"], "--n '1e400' is not a count"),
        (["--n", "0"], "--n '0' is too small"),
        (["--reps", "0"], "--reps '0' is out of range"),
        (["--block", "100", "--stages", "2"], "block size 100 is not accepted by stage 02"),
        (["--block", "2048", "--stages", "2"], "block size 2048 is not accepted by stage 02"),
        (["--stages", "99"], "unknown stage '99'"),
        (["--stages", "foo"], "unknown stage 'foo'"),
        (["--frobnicate"], "unknown option '--frobnicate'"),
        (["--n"], "option --n needs a value"),
        (["--csv", "/nonexistent/dir/x.csv"], "cannot write --csv file '/nonexistent/dir/x.csv'"),
        (["--json", "/nonexistent/dir/x.json"], "cannot write --json file '/nonexistent/dir/x.json'"),
        (["--pattern", "zeros"], "unknown input pattern 'zeros'"),
        (["--sweep", "2^20:2^10"], "the start is larger than the end"),
        (["--sweep", "2^10"], "is not a range"),
        (["--flush", "memset"], "--flush 'memset': write read or write"),
    ]
    for args, needle in bad:
        expect(["--csv", csv] + args if "--csv" not in args else args, 2, needle, csv=csv)

    # --help and --list work everywhere and list the registry.
    rc, out, _ = run(["--help"])
    if rc != 0 or "--warm-l2" not in out or "--run-once" not in out or "--flush" not in out:
        failures.append("reduce --help: missing options or non-zero exit")
    else:
        passed += 1
    rc, out, _ = run(["--list"])
    if rc != 0 or "\tcub\tbaseline\t" not in out or not out.startswith("01\t"):
        failures.append("reduce --list: unexpected output")
    else:
        passed += 1

    rc, out, err = run(["--n", "1024", "--csv", csv])
    if rc == 3:
        # No GPU: one sentence, exit 3, and no file.
        if "No CUDA device" not in err or os.path.exists(csv):
            failures.append("no device: expected 'No CUDA device' and no output file")
        else:
            passed += 1
    else:
        # A GPU: the run must pass and write the file; an impossible n is refused.
        if rc != 0 or not os.path.exists(csv):
            failures.append(f"reduce --n 1024 failed on the GPU (exit {rc}): {err.strip()}")
        else:
            passed += 1
        csv2 = os.path.join(tmp, "y.csv")
        expect(["--n", "2^40", "--stages", "cub", "--csv", csv2], 2, "bytes of GPU memory", "bytes are free", csv=csv2)
        expect(["--n", "2^40", "--stages", "cub", "--run-once"], 2, "bytes of GPU memory")

for f in failures:
    print("FAIL:", f)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
