#!/usr/bin/env python3
"""The reduce program's command-line paths that need no GPU (--help, --list, every
refusal before a device is looked for), compared byte for byte with committed expected
outputs: exit code, stdout and stderr. A change to the runner that alters any of them
fails here until the expected files are rewritten on purpose (--update) and the diff
is reviewed.

usage: test_reduce_golden.py BUILD_DIR GOLDEN_DIR [--update]
  BUILD_DIR   the build directory (reduction/reduce and reduction/05_sequential_addressing)
  GOLDEN_DIR  tests/host/data/reduce_golden
   or: BUILD_DIR=... GOLDEN_DIR=... python3 -m pytest tests/host/test_reduce_golden.py
"""
import os
import subprocess
import sys

import pytest

from conftest import env_arg, run_as_script

# (file name, program, arguments). Only paths that end before a GPU is needed: the
# expected outputs are the same on a machine with a GPU and one without.
CASES = [
    ("help", "reduce", ["--help"]),
    ("list_all", "reduce", ["--list"]),
    ("list_selected", "reduce", ["--list", "--stages", "05,1-3,cub"]),
    ("list_baselines", "reduce", ["--list", "--stages", "baselines"]),
    ("list_csv_selected", "reduce", ["--list", "--format", "csv", "--stages", "05,cub"]),
    ("bad_format", "reduce", ["--list", "--format", "json"]),
    ("format_without_list", "reduce", ["--format", "csv"]),
    ("stage05_help", "05_sequential_addressing", ["--help"]),
    ("stage05_list", "05_sequential_addressing", ["--list"]),
    ("stage05_refuses_stages", "05_sequential_addressing", ["--stages", "06"]),
    ("bad_n", "reduce", ["--n", "abc"]),
    ("bad_n_zero", "reduce", ["--n", "0"]),
    ("bad_stage", "reduce", ["--stages", "99"]),
    ("bad_stage_range", "reduce", ["--stages", "11-3"]),
    ("bad_stage_empty", "reduce", ["--stages", ","]),
    ("bad_block_pow2", "reduce", ["--stages", "05", "--block", "100"]),
    ("bad_block_large", "reduce", ["--stages", "2", "--block", "2048"]),
    ("bad_block_parse", "reduce", ["--block", "x"]),
    ("bad_option", "reduce", ["--frobnicate"]),
    ("missing_value", "reduce", ["--n"]),
    ("bad_csv_path", "reduce", ["--csv", "/nonexistent/dir/x.csv"]),
    ("same_csv_json", "reduce", ["--csv", "/tmp/reduce_golden_same", "--json", "/tmp/reduce_golden_same"]),
    ("bad_pattern", "reduce", ["--pattern", "zeros"]),
    ("bad_sweep", "reduce", ["--sweep", "2^20:2^10"]),
    ("sweep_and_n", "reduce", ["--sweep", "2^10:2^12", "--n", "2^10"]),
    ("sweep_run_once", "reduce", ["--sweep", "2^10:2^12", "--run-once"]),
    ("run_once_csv", "reduce", ["--run-once", "--csv", "/tmp/reduce_golden_run_once.csv"]),
    ("bad_flush", "reduce", ["--flush", "memset"]),
    ("bad_reps", "reduce", ["--reps", "0"]),
    ("min_reps_above_reps", "reduce", ["--reps", "5", "--min-reps", "9"]),
    ("n_too_large_for_stage", "reduce", ["--stages", "01", "--n", "2^40"]),
]


def render(code, out, err):
    return f"exit: {code}\n--- stdout\n{out}--- stderr\n{err}"


def produce(build, program, args):
    binary = os.path.join(build, "reduction", program)
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=120)
    return render(p.returncode, p.stdout, p.stderr)


@pytest.mark.parametrize("name, program, args", CASES, ids=[c[0] for c in CASES])
def test_case_matches_expected(name, program, args):
    build, golden = env_arg("BUILD_DIR", "the build directory"), env_arg("GOLDEN_DIR", "tests/host/data/reduce_golden")
    got = produce(build, program, args)
    path = os.path.join(golden, name + ".txt")
    assert os.path.exists(path), f"{name}: no expected file {path} (run with --update and review it)"
    with open(path) as f:
        want = f.read()
    assert got == want, f"{name}: {program} {' '.join(args)} differs from {path}\n--- expected\n{want}--- got\n{got}"


def test_no_stray_expected_files():
    golden = env_arg("GOLDEN_DIR", "tests/host/data/reduce_golden")
    names = {name + ".txt" for name, _, _ in CASES}
    stray = sorted(set(os.listdir(golden)) - names) if os.path.isdir(golden) else []
    assert not stray, "expected files that no case produces: " + ", ".join(stray)


def update(build, golden):
    for name, program, args in CASES:
        with open(os.path.join(golden, name + ".txt"), "w") as f:
            f.write(produce(build, program, args))
    print(f"wrote {len(CASES)} expected outputs to {golden}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        sys.exit(2)
    if "--update" in sys.argv[3:]:
        sys.exit(update(sys.argv[1], sys.argv[2]))
    sys.exit(run_as_script(__file__, {"BUILD_DIR": sys.argv[1], "GOLDEN_DIR": sys.argv[2]}))
