#!/usr/bin/env python3
"""The peer programs' command lines (peers/ceiling, and peers/cub_modes when it is
built): --help, every refusal (exit 2, one sentence naming the value, no file written)
and, on a machine without a GPU, exit 3 with one sentence.

usage: PEER_PROGRAMS=PROGRAM[:PROGRAM...] python3 -m pytest tests/host/test_peers_cli.py
   or: test_peers_cli.py PROGRAM...
"""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import run_as_script

PROGRAMS = [p for p in os.environ.get("PEER_PROGRAMS", "").split(os.pathsep) if p]
REFUSED = [
    (["--n", "0"], "'0'"),
    (["--n", "1e6"], "'1e6'"),
    (["--sweep", "2^30:2^10"], "'2^30:2^10'"),
    (["--sweep", "2^10"], "'2^10'"),
    (["--n", "2^20", "--sweep", "2^10:2^12"], "--n and --sweep"),
    (["--reps", "0"], "--reps"),
    (["--pattern", "zeros"], "'zeros'"),
    (["--flush", "sideways"], "'sideways'"),
    (["--bogus"], "'--bogus'"),
    (["--csv", os.path.join("{work}", "missing", "x.csv")], "does not exist"),
    (["--json", "{out}"], "the same file"),
]


def has_gpu():
    return shutil.which("nvidia-smi") is not None and subprocess.run(["nvidia-smi", "-L"],
                                                                     capture_output=True).returncode == 0


def run(program, *args):
    return subprocess.run([program, *args], capture_output=True, text=True)


def test_programs_given():
    assert PROGRAMS, "no program to test: give PEER_PROGRAMS=PROGRAM[:PROGRAM...] in the environment"


@pytest.mark.parametrize("program", PROGRAMS, ids=os.path.basename)
def test_help(program):
    r = run(program, "--help")
    assert r.returncode == 0 and "--sweep" in r.stdout and "Exit codes" in r.stdout, f"--help: rc {r.returncode}"


@pytest.mark.parametrize("args, named", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
@pytest.mark.parametrize("program", PROGRAMS, ids=os.path.basename)
def test_refusal(program, args, named, tmp_path):
    work, out = str(tmp_path), str(tmp_path / "out.csv")
    args = [a.format(work=work, out=out) for a in args]
    r = run(program, "--csv", out, *args)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and named in lines[0], \
        f"{args}: rc {r.returncode}, stderr {r.stderr!r} (wanted 2 naming {named})"
    assert not os.listdir(work), f"{args}: left {os.listdir(work)}"


@pytest.mark.parametrize("program", PROGRAMS, ids=os.path.basename)
def test_no_gpu(program, tmp_path):
    if has_gpu():
        pytest.skip("a GPU is present: the no-GPU exit is not reachable here")
    r = run(program, "--n", "2^10", "--csv", str(tmp_path / "out.csv"))
    assert r.returncode == 3 and "CUDA device" in r.stderr and not os.listdir(tmp_path), \
        f"without a GPU: rc {r.returncode}, stderr {r.stderr!r}"


if __name__ == "__main__":
    sys.exit(run_as_script(__file__, {"PEER_PROGRAMS": os.pathsep.join(sys.argv[1:])}))
