#!/usr/bin/env python3
"""The reduce program's command-line paths that need no GPU (--help, --list, every
refusal before a device is looked for), compared byte for byte with committed expected
outputs: exit code, stdout and stderr. A change to the runner that alters any of them
fails here until the expected files are rewritten on purpose (--update) and the diff
is reviewed.

usage: test_reduce_golden.py BUILD_DIR GOLDEN_DIR [--update]
  BUILD_DIR   the build directory (reduction/reduce and reduction/05_sequential_addressing)
  GOLDEN_DIR  tests/host/data/reduce_golden
"""
import os
import subprocess
import sys

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


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    build, golden = sys.argv[1], sys.argv[2]
    update = "--update" in sys.argv[3:]
    failures = []
    for name, program, args in CASES:
        binary = os.path.join(build, "reduction", program)
        p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=120)
        got = render(p.returncode, p.stdout, p.stderr)
        path = os.path.join(golden, name + ".txt")
        if update:
            with open(path, "w") as f:
                f.write(got)
            continue
        if not os.path.exists(path):
            failures.append(f"{name}: no expected file {path} (run with --update and review it)")
            continue
        with open(path) as f:
            want = f.read()
        if got != want:
            failures.append(f"{name}: {program} {' '.join(args)} differs from {path}\n--- expected\n{want}--- got\n{got}")
    names = {name + ".txt" for name, _, _ in CASES}
    stray = sorted(set(os.listdir(golden)) - names) if os.path.isdir(golden) else []
    if stray and not update:
        failures.append("expected files that no case produces: " + ", ".join(stray))
    if update:
        print(f"wrote {len(CASES)} expected outputs to {golden}")
        return 0
    for f in failures:
        print("FAIL", f)
    print(f"{len(CASES) - len(failures)} of {len(CASES)} cases match")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
