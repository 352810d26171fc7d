#!/usr/bin/env python3
"""One experiment program's command line (build/lab/<name>): --help, and the
refusals that every program makes before it looks for a GPU (exit code 2, one sentence
on stderr naming the value, no file written); then exit code 3 for a device that is not
there, and with no GPU at all, exit 3 for a plain run with nothing written. Runs with
or without a GPU: no case here starts a measurement.

usage: LAB_PROGRAM=PATH/TO/build/lab/NAME python3 -m pytest tests/host/test_lab_cli.py
   or: test_lab_cli.py PATH/TO/build/lab/NAME
Each test collects its failed checks and fails naming all of them.
"""
import os
import subprocess
import sys

from conftest import env_arg, run_as_script
from host_tools import expect, one_sentence


def program():
    return env_arg("LAB_PROGRAM", "PATH/TO/build/lab/NAME")


def run(args):
    p = subprocess.run([program()] + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def one_program_sentence(err):
    """One line on stderr, naming this program, ending with a full stop."""
    return one_sentence(os.path.basename(program()), err)


def test_help():
    name = os.path.basename(program())
    problems = []
    rc, out, err = run(["--help"])
    expect(problems, "--help", rc == 0 and err == "", f"exit {rc}, stderr {err!r}")
    for needle in (f"usage: {name}", "--csv FILE", "--json FILE", "--device D", "lab/notes/90_lab_notes.md",
                   "Exit codes"):
        expect(problems, f"--help names {needle!r}", needle in out, f"output {out!r}")
    # A design whose sum the memory model does not promise is named a diagnostic in --help.
    if name == "finish":
        expect(problems, "finish --help calls fence a racy diagnostic", "fence (diagnostic, racy" in out,
               f"output {out!r}")
    assert not problems, f"{name}:\n" + "\n".join(problems)


def test_refusals_and_missing_device(tmp_path):
    scratch = str(tmp_path)
    problems = []
    missing = os.path.join(scratch, "no", "such", "dir")
    for args, needle in [
        (["bogus"], "unexpected argument 'bogus'"),
        (["--bogus"], "unknown option '--bogus'"),
        (["--csv"], "option --csv needs a value"),
        (["--csv", f"{missing}/x.csv"], f"{missing}/x.csv"),
        ([f"--csv={missing}/x.csv"], f"{missing}/x.csv"),
        (["--json", f"{missing}/x.json"], f"{missing}/x.json"),
        ([f"--json={missing}/x.json"], f"{missing}/x.json"),
        (["--device", "x"], "--device 'x'"),
        (["--device=-1"], "--device '-1'"),
        (["--help=yes"], "unknown option '--help'"),
        # A bad option after a good output file: refused before anything is written.
        (["--csv", os.path.join(scratch, "a.csv"), "--bogus"], "unknown option '--bogus'"),
    ]:
        rc, out, err = run(args)
        expect(problems, f"{args}", rc == 2 and needle in err and one_program_sentence(err),
               f"exit {rc} (expected 2), stderr {err!r} (expected one sentence with {needle!r})")
    expect(problems, "no file written by a refused run", os.listdir(scratch) == [], f"found {os.listdir(scratch)}")

    # No such device, with or without a GPU in this machine: exit 3 before any work.
    csv = os.path.join(scratch, "r.csv")
    rc, out, err = run(["--device", "1023", "--csv", csv])
    expect(problems, "--device 1023", rc == 3 and one_program_sentence(err) and out == "",
           f"exit {rc} (expected 3), stdout {out!r}, stderr {err!r}")
    expect(problems, "no file written for a missing device", os.listdir(scratch) == [], f"found {os.listdir(scratch)}")

    # With no GPU at all, a plain run stops with exit 3 too.
    if "No CUDA device" in err:
        rc, out, err = run(["--csv", csv, f"--json={scratch}/r.json"])
        expect(problems, "no GPU", rc == 3 and "No CUDA device" in err and one_program_sentence(err),
               f"exit {rc} (expected 3), stderr {err!r}")
        expect(problems, "no file written without a GPU", os.listdir(scratch) == [], f"found {os.listdir(scratch)}")
    assert not problems, f"{os.path.basename(program())}:\n" + "\n".join(problems)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip())
        sys.exit(2)
    sys.exit(run_as_script(__file__, {"LAB_PROGRAM": sys.argv[1]}))
