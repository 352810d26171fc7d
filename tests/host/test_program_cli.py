#!/usr/bin/env python3
"""Every program's command line against the README's contract, end to end: a bad value,
an output file that cannot be written, or options that cannot go together get one
sentence on stderr naming the value, exit code 2, nothing on stdout, and no file written
or removed, before any GPU is looked for. Runs with or without a GPU; the one run that
needs a device checks, on a GPU, that the files are written and a user's FILE.tmp is
left alone, and without one that the program says so (exit 3) and writes nothing.

usage: test_program_cli.py NAME=PROGRAM ...
   or: PROGRAM_NAME=PROGRAM ... python3 -m pytest tests/host/test_program_cli.py   (NAME upper-cased)
NAME is one of reduce, stage (a per-stage program such as 05_sequential_addressing),
mixed_precision, variant (a per-variant program such as 05_int8_dp4a), hierarchy,
resources and sweep (occupancy/01, 02 and 03).
"""
import os
import stat
import subprocess
import sys

import pytest

from conftest import env_arg, run_as_script

EXPECTED_NAMES = {"reduce", "stage", "mixed_precision", "variant", "hierarchy", "resources", "sweep"}
USER_TMP = "the user's own keep.csv.tmp\n"
LOCKED = "a result the user protected\n"


def program(name):
    return env_arg(f"PROGRAM_{name.upper()}", f"the {name} program")


def snapshot(directory):
    """Every file under `directory` with its contents."""
    files = {}
    for base, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(base, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, directory)] = f.read()
    return files


def run(name, args, cwd):
    p = subprocess.run([program(name)] + args, capture_output=True, text=True, timeout=600, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def make_work(work):
    """A folder as a user's: a sub-folder, the user's keep.csv.tmp and a read-only locked.csv."""
    work = str(work)
    os.mkdir(os.path.join(work, "sub"))
    with open(os.path.join(work, "keep.csv.tmp"), "w") as f:
        f.write(USER_TMP)
    locked = os.path.join(work, "locked.csv")
    with open(locked, "w") as f:
        f.write(LOCKED)
    os.chmod(locked, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return work


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return make_work(tmp_path_factory.mktemp("program_cli"))


def refusal_cases():
    """(program name, arguments, what stderr must name); "{work}" stands for the folder."""
    cases = []
    for name in sorted(EXPECTED_NAMES):  # every program takes --csv and --json
        for args, needle in [
            (["--csv", "sub"], "--csv 'sub' is a directory"),
            (["--csv", "."], "--csv '.' is a directory"),
            (["--json", "{work}"], "is a directory"),
            (["--csv", ""], "--csv '' is not a file name"),
            (["--json="], "--json '' is not a file name"),
            (["--csv", "same.out", "--json", "same.out"], "name the same file"),
            (["--csv", "same.out", "--json", "./same.out"], "name the same file"),
            (["--csv", "locked.csv"], "--csv 'locked.csv' is a read-only file"),
            (["--csv", "/dev/stdout"], "--csv '/dev/stdout' is not a regular file"),
            (["--csv", "nodir/x.csv"], "the directory 'nodir' does not exist"),
            # A bad option after a good --csv: the user's keep.csv.tmp stays as it was.
            (["--csv", "keep.csv", "--no-such-option"], "unknown option '--no-such-option'"),
        ]:
            cases.append((name, args, needle))
    for name in ["reduce", "stage", "mixed_precision", "variant", "resources", "sweep"]:
        cases.append((name, ["--budget-ms", "0x10"], "hexadecimal"))
        cases.append((name, ["--reps", "1e2"], "exponent notation"))
    for name in ["reduce", "stage", "mixed_precision", "variant", "sweep"]:
        for value, needle in [("0x10", "hexadecimal"), ("16k", "upper case: 16K"), ("16m", "upper case: 16M"),
                              ("0^0", "the base of a power must be at least 2"),
                              ("1^99", "the base of a power must be at least 2"), ("2^", "is not a count")]:
            cases.append((name, ["--n", value], f"--n '{value}'"))
            cases.append((name, ["--n", value], needle))
    for name in ["reduce", "stage", "mixed_precision", "variant"]:
        cases.append((name, ["--run-once", "--csv", "r.csv"], "--run-once times nothing"))
        cases.append((name, ["--run-once", "--json", "r.json"], "--run-once times nothing"))
        cases.append((name, ["--min-reps", "50", "--reps", "10"], "--min-reps 50 is more than --reps 10"))
    cases += [
        ("reduce", ["--n", "2^20", "--sweep", "2^10:2^12"], "--n and --sweep cannot be combined"),
        ("reduce", ["--sweep", "2^10:2^12", "--n", "2^20"], "--n and --sweep cannot be combined"),
        ("reduce", ["--stages", "02", "--n", "2^40"], "is larger than stage 02"),
        ("stage", ["--stages", "13"], "takes no --stages"),
        ("variant", ["--variants", "2"], "takes no --variants"),
        ("hierarchy", ["--block", "1025"], "--block 1025 is more than any CUDA device takes"),
        ("hierarchy", ["--first", "0"], "--first 0 would list no blocks"),
        ("sweep", ["--blocks", "2048"], "--blocks item 2048 is more than any CUDA device takes"),
        ("sweep", ["--per-sm", "33"], "--per-sm item 33 is more than any CUDA device keeps"),
        ("resources", ["--size", "17"], "--samples 4096 is more than the 289 elements"),
    ]
    return cases


CASES = refusal_cases()


@pytest.mark.parametrize("name, args, needle", CASES,
                         ids=[f"{n} {' '.join(a)} [{i}]" for i, (n, a, _) in enumerate(CASES)])
def test_refused(name, args, needle, work):
    """`args` must be refused: exit 2, one line naming the problem, nothing else changed."""
    args = [a.format(work=work) for a in args]
    before = snapshot(work)
    rc, out, err = run(name, args, work)
    problems = []
    if rc != 2:
        problems.append(f"exit code {rc}, expected 2")
    if needle not in err:
        problems.append(f"stderr lacks {needle!r}")
    if len([line for line in err.splitlines() if line.strip()]) != 1:
        problems.append("expected exactly one line on stderr")
    if out:
        problems.append(f"stdout is not empty: {out[:200]!r}")
    after = snapshot(work)
    if after != before:
        changed = sorted(set(after) ^ set(before) | {k for k in after if k in before and after[k] != before[k]})
        problems.append(f"files changed: {changed}")
    assert not problems, f"{name} {args}: " + "; ".join(problems) + f"\n    stderr: {err.strip()}"


# The grammar's forms are accepted where a program needs no device (--list).
@pytest.mark.parametrize("args", (["--n", "16K"], ["--n", "2^24"], ["--n", "64MiB"], ["--n", "16777216"],
                                  ["--budget-ms", "2.5"]), ids=" ".join)
def test_accepted_forms(args, work):
    rc, out, err = run("reduce", args + ["--list"], work)
    assert rc == 0 and out.startswith("01\t"), f"reduce {args} --list: exit {rc}, stderr {err.strip()!r}"


def test_one_real_run(tmp_path):
    """On a GPU it writes both files and leaves keep.csv.tmp alone; with no device it says
    so, exit 3, and writes nothing."""
    work = make_work(tmp_path)
    before = snapshot(work)
    args = ["--n", "1024", "--reps", "3", "--budget-ms", "50", "--csv", "keep.csv", "--json", "keep.json"]
    rc, out, err = run("stage", args, work)
    after = snapshot(work)
    if rc == 3:
        ok = "No CUDA device" in err and after == before
        detail = f"no device: expected 'No CUDA device' and no file written; stderr {err.strip()!r}"
    else:
        added = sorted(set(after) - set(before))
        ok = (rc == 0 and added == ["keep.csv", "keep.json"] and after["keep.csv.tmp"] == USER_TMP.encode()
              and after["keep.csv"].startswith(b"# device: ") and after["keep.json"].startswith(b"{"))
        detail = f"on the GPU: exit {rc}, new files {added}, stderr {err.strip()[-300:]!r}"
    assert ok, detail


if __name__ == "__main__":
    programs = dict(arg.split("=", 1) for arg in sys.argv[1:] if "=" in arg)
    if set(programs) != EXPECTED_NAMES or len(programs) != len(sys.argv) - 1:
        print(f"usage: test_program_cli.py NAME=PROGRAM for each of {sorted(EXPECTED_NAMES)}", file=sys.stderr)
        sys.exit(2)
    sys.exit(run_as_script(__file__, {f"PROGRAM_{name.upper()}": path for name, path in programs.items()}))
