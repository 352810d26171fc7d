#!/usr/bin/env python3
"""The command lines of build/lab/warp_tools and build/lab/volatile_last_warp:
--help, the refusals each makes before it looks for a GPU (exit code 2, one sentence on
stderr naming the value, no file written), exit code 3 for a device that is not there,
and with no GPU at all, exit 3 for a plain run with nothing written. Starts no
measurement, so it runs with or without a GPU. (The warp_tools step of scripts/device.sh,
its racecheck verdicts included, is tested in test_device_driver.py.)

usage: WARP_TOOLS=PATH/TO/warp_tools VOLATILE_LAST_WARP=PATH/TO/volatile_last_warp python3 -m pytest \
           tests/host/test_warp_tools_cli.py
   or: test_warp_tools_cli.py PATH/TO/warp_tools PATH/TO/volatile_last_warp
Each test collects its failed checks and fails naming all of them.
"""
import os
import subprocess
import sys

import pytest

from conftest import env_arg, run_as_script
from host_tools import expect, one_sentence


def warp_tools():
    return env_arg("WARP_TOOLS", "PATH/TO/build/lab/warp_tools")


def volatile_last_warp():
    return env_arg("VOLATILE_LAST_WARP", "PATH/TO/build/lab/volatile_last_warp")


def run(program, args):
    p = subprocess.run([program] + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check_refusals(problems, program, cases, scratch):
    name = os.path.basename(program)
    for args, needle in cases:
        rc, out, err = run(program, args)
        expect(problems, f"{name} {args}", rc == 2 and needle in err and one_sentence(name, err) and out == "",
               f"exit {rc} (expected 2), stdout {out!r}, stderr {err!r} (expected one sentence with {needle!r})")
    expect(problems, f"{name}: no file written by a refused run", os.listdir(scratch) == [], f"found {os.listdir(scratch)}")


def check_no_device(problems, program, args, scratch):
    name = os.path.basename(program)
    rc, out, err = run(program, ["--device", "1023"] + args)
    expect(problems, f"{name} --device 1023", rc == 3 and one_sentence(name, err) and out == "",
           f"exit {rc} (expected 3), stdout {out!r}, stderr {err!r}")
    if "No CUDA device" in err:  # this machine has no GPU at all
        rc, out, err = run(program, args)
        expect(problems, f"{name} without a GPU", rc == 3 and "No CUDA device" in err and one_sentence(name, err),
               f"exit {rc} (expected 3), stderr {err!r}")
    expect(problems, f"{name}: no file written without a device", os.listdir(scratch) == [], f"found {os.listdir(scratch)}")


# ---- --help of both programs -----------------------------------------------------------


HELP = [
    (warp_tools, ("usage: warp_tools", "--n N", "--csv FILE", "--json FILE", "--device D", "--reps R", "--warm-l2",
                  "__reduce_add_sync", "__ballot_sync", "cooperative_groups::reduce", "u32-reduce-add", "f32-ballot",
                  "chapters/08_warp_shuffles.md", "chapters/09_cooperative_groups.md", "Exit codes")),
    (volatile_last_warp, ("usage: volatile_last_warp", "--variant V", "volatile, syncwarp or shuffle", "--n N",
                          "--device D", "racecheck", "chapters/08_warp_shuffles.md", "Exit codes")),
]


@pytest.mark.parametrize("program, needles", HELP, ids=[p.__name__ for p, _ in HELP])
def test_help(program, needles):
    name = program.__name__
    problems = []
    rc, out, err = run(program(), ["--help"])
    expect(problems, f"{name} --help", rc == 0 and err == "", f"exit {rc}, stderr {err!r}")
    for needle in needles:
        expect(problems, f"{name} --help names {needle!r}", needle in out, f"output {out!r}")
    assert not problems, "\n".join(problems)


# ---- warp_tools ---------------------------------------------------------------------------


def test_warp_tools_refusals_and_missing_device(tmp_path):
    problems = []
    scratch = str(tmp_path)
    missing = os.path.join(scratch, "no", "such", "dir")
    check_refusals(problems, warp_tools(), [
        (["bogus"], "unexpected argument 'bogus'"),
        (["--bogus"], "unknown option '--bogus'"),
        (["--n"], "option --n needs a value"),
        (["--n", "0"], "--n"),
        (["--n", "2^31"], "--n"),
        (["--n", "-5"], "--n"),
        (["--n", "1e6"], "--n"),
        (["--reps", "0"], "--reps"),
        (["--csv", f"{missing}/x.csv"], f"{missing}/x.csv"),
        ([f"--json={missing}/x.json"], f"{missing}/x.json"),
        (["--csv", os.path.join(scratch, "a.csv"), "--json", os.path.join(scratch, "a.csv")], "a.csv"),
        (["--device", "x"], "--device 'x'"),
        # A bad option after a good output file: refused before anything is written.
        (["--csv", os.path.join(scratch, "a.csv"), "--n", "0"], "--n"),
    ], scratch)
    check_no_device(problems, warp_tools(), ["--n", "1000", "--csv", os.path.join(scratch, "r.csv")], scratch)
    assert not problems, "\n".join(problems)


# ---- volatile_last_warp -------------------------------------------------------------------


def test_volatile_last_warp_refusals_and_missing_device(tmp_path):
    problems = []
    scratch = str(tmp_path)
    check_refusals(problems, volatile_last_warp(), [
        (["--variant", "lockstep"], "--variant 'lockstep'"),
        (["--variant"], "option --variant needs a value"),
        (["--n", "0"], "--n"),
        (["--n", "2^21"], "--n"),
        (["--bogus"], "unknown option '--bogus'"),
        (["extra"], "unexpected argument 'extra'"),
    ], scratch)
    check_no_device(problems, volatile_last_warp(), ["--variant", "syncwarp"], scratch)
    assert not problems, "\n".join(problems)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.strip())
        sys.exit(2)
    sys.exit(run_as_script(__file__, {"WARP_TOOLS": sys.argv[1], "VOLATILE_LAST_WARP": sys.argv[2]}))
