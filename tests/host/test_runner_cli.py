#!/usr/bin/env python3
"""The runner's command line end to end: every bad input gets one sentence naming
the value, exit code 2 and no output file. Runs with or without a GPU; the checks
that need a device (memory) run only when one is present.

usage: REDUCE=PATH/TO/reduce python3 -m pytest tests/host/test_runner_cli.py
   or: test_runner_cli.py PATH/TO/reduce
"""
import os
import subprocess
import sys

import pytest

from conftest import env_arg, run_as_script


def run(args):
    p = subprocess.run([env_arg("REDUCE", "PATH/TO/reduce")] + args, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def expect(args, code, *needles, csv=None):
    rc, out, err = run(args)
    problems = []
    if rc != code:
        problems.append(f"exit code {rc}, expected {code}")
    for needle in needles:
        if needle not in err:
            problems.append(f"stderr lacks {needle!r}")
    if code == 2:
        lines = [line for line in err.strip().splitlines() if line]
        if len(lines) != 1:
            problems.append(f"expected one line on stderr, got {len(lines)}")
    if csv is not None and (os.path.exists(csv) or os.path.exists(csv + ".tmp")):
        problems.append(f"output file {csv} was left behind")
    assert not problems, f"reduce {' '.join(args)}: " + "; ".join(problems) + f"\n    stderr: {err.strip()}"


BAD = [
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


@pytest.mark.parametrize("args, needle", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input(args, needle, tmp_path):
    csv = str(tmp_path / "x.csv")
    expect(["--csv", csv] + args if "--csv" not in args else args, 2, needle, csv=csv)


def test_help_and_list():
    """--help and --list work everywhere and list the registry."""
    rc, out, _ = run(["--help"])
    assert rc == 0 and "--warm-l2" in out and "--run-once" in out and "--flush" in out, \
        "reduce --help: missing options or non-zero exit"
    rc, out, _ = run(["--list"])
    assert rc == 0 and "\tcub\tbaseline\t" in out and out.startswith("01\t"), "reduce --list: unexpected output"


def test_a_run(tmp_path):
    """No GPU: one sentence, exit 3, and no file. A GPU: the run passes and writes the
    file, and an impossible n is refused."""
    csv = str(tmp_path / "x.csv")
    rc, out, err = run(["--n", "1024", "--csv", csv])
    if rc == 3:
        assert "No CUDA device" in err and not os.path.exists(csv), (
            "no device: expected 'No CUDA device' and no output file")
    else:
        assert rc == 0 and os.path.exists(csv), f"reduce --n 1024 failed on the GPU (exit {rc}): {err.strip()}"
        csv2 = str(tmp_path / "y.csv")
        expect(["--n", "2^40", "--stages", "cub", "--csv", csv2], 2, "bytes of GPU memory", "bytes are free", csv=csv2)
        expect(["--n", "2^40", "--stages", "cub", "--run-once"], 2, "bytes of GPU memory")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip())
        sys.exit(2)
    sys.exit(run_as_script(__file__, {"REDUCE": sys.argv[1]}))
