#!/usr/bin/env python3
"""multi_gpu/multi_gpu_sum's command line: --help, every refusal of bad input (exit 2,
one sentence on stderr naming the value, nothing on stdout, no file written) before a
GPU is looked for, --methods among them, and the missing GPUs: with no GPU, exit 3 and
one sentence; with GPUs, a --gpus count above the number present is exit 3 naming both
numbers, and an --n that the default counts (1 and every GPU) cannot split is exit 2.
(The multi_gpu step of scripts/device.sh, its refusals and its exit 3 without a GPU, is
tested in test_device_driver.py.)

usage: MULTI_GPU_SUM=PROGRAM python3 -m pytest tests/host/test_multi_gpu_cli.py
   or: test_multi_gpu_cli.py PROGRAM
"""
import os
import subprocess
import sys

import pytest

from conftest import env_arg, run_as_script
from host_tools import gpus_present, refusal_problems


def run(*args, cwd):
    program = os.path.abspath(env_arg("MULTI_GPU_SUM", "PATH/TO/multi_gpu_sum"))
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def expect(args, code, needle, cwd):
    """`args` gives exit `code` with one line on stderr holding `needle`, and writes nothing."""
    before = sorted(os.listdir(cwd))
    r = run(*args, cwd=cwd)
    problems = refusal_problems(r, code, needle)
    if sorted(os.listdir(cwd)) != before:
        problems.append(f"files changed: {sorted(os.listdir(cwd))}")
    assert not problems, f"{args}: " + "; ".join(problems) + f"\n    stderr: {r.stderr.strip()!r}"


HELP_NEEDLES = ("--gpus", "--n-per-gpu", "--sweep", "--methods", "shard_then_peer_store", "peer access",
                "NCCL_NVLS_ENABLE", "Exit codes")


@pytest.mark.parametrize("needle", HELP_NEEDLES)
def test_help(needle, tmp_path):
    r = run("--help", cwd=tmp_path)
    assert r.returncode == 0 and needle in r.stdout, f"--help: exit {r.returncode}, or no {needle!r} in it"


REFUSED = [
    (["--gpus", "0"], "--gpus item '0'"),
    (["--gpus", "2,x"], "--gpus item 'x'"),
    (["--gpus", ","], "--gpus ',' names no GPU count"),
    (["--gpus", "2000"], "--gpus item '2000'"),
    (["--gpus", "2,3", "--n", "1000"], "--n 1000 does not split evenly over 3 GPUs"),
    (["--n", "2^20", "--gpus", "1,2,4,8,6"], "does not split evenly over 6 GPUs"),
    (["--n", "0"], "--n '0'"),
    (["--n-per-gpu", "0"], "--n-per-gpu '0'"),
    (["--n-per-gpu", "1e6"], "--n-per-gpu '1e6'"),
    (["--n-per-gpu", "2^37"], "--n-per-gpu '2^37'"),
    (["--n", "2^20", "--n-per-gpu", "2^10"], "cannot be combined"),
    (["--n-per-gpu", "2^20", "--sweep", "2^10:2^12"], "cannot be combined"),
    (["--sweep", "2^30:2^20"], "'2^30:2^20'"),
    (["--reps", "0"], "--reps"),
    (["--pattern", "zeros"], "'zeros'"),
    (["--flush", "sideways"], "'sideways'"),
    (["--device", "1"], "'--device'"),
    (["--csv", "{work}/missing/x.csv"], "does not exist"),
    (["--csv", "a.csv", "--json", "a.csv"], "the same file"),
    (["--methods", "nope"], "--methods item 'nope' is not a method"),
    (["--methods", "copy_to_one,peer_store"], "--methods item 'peer_store'"),
    (["--methods", ","], "--methods ',' names no method"),
]


@pytest.mark.parametrize("args, needle", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_refused(args, needle, tmp_path):
    expect([a.format(work=tmp_path) for a in args], 2, needle, tmp_path)


def test_missing_gpus(tmp_path):
    """With no GPU, exit 3 and one sentence; with GPUs, a --gpus count above the number
    present is exit 3 naming both numbers, and an --n that the default counts cannot
    split is exit 2."""
    present = gpus_present()
    if present == 0:
        expect(["--n-per-gpu", "2^10", "--csv", "a.csv"], 3, "No CUDA device", tmp_path)
        expect(["--gpus", "2", "--n-per-gpu", "2^10"], 3, "No CUDA device", tmp_path)
    else:
        expect(["--gpus", f"1,{present + 1}", "--n-per-gpu", "2^10", "--csv", "a.csv"], 3,
               f"--gpus asks for {present + 1} GPUs but {present} CUDA device", tmp_path)
        if present > 1:
            expect(["--n", str(present * 1024 + 1)], 2, "does not split evenly", tmp_path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: test_multi_gpu_cli.py PROGRAM", file=sys.stderr)
        sys.exit(2)
    sys.exit(run_as_script(__file__, {"MULTI_GPU_SUM": sys.argv[1]}))
