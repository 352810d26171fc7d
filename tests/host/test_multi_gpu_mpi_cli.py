#!/usr/bin/env python3
"""multi_gpu/multi_gpu_mpi's command line, run as a job would run it: under
`mpiexec -np 2` (and alone, as an MPI singleton). --help prints once; every refusal
of bad input is exit 2 with one sentence from rank 0 on stderr, naming the value, and
nothing on stdout and no file written, before a GPU is looked for; with no GPU, exit 3
and one sentence; with GPUs, more ranks on the node than GPUs is exit 3 naming both.
Exits 77 (skipped) when the program was not built (no NCCL or no MPI: PROGRAM is '-').

usage: MULTI_GPU_MPI=PROGRAM MPIEXEC=MPIEXEC python3 -m pytest tests/host/test_multi_gpu_mpi_cli.py
   or: test_multi_gpu_mpi_cli.py PROGRAM MPIEXEC
"""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import run_as_script
from host_tools import gpus_present, refusal_problems

SKIPPED_EXIT_CODE = 77  # not built, or no mpiexec: every test skips and the file exits 77
PREFIX = "multi_gpu_mpi:"

# Open MPI refuses to start as root unless told; --oversubscribe lets 2 ranks run on 1 core.
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


@pytest.fixture(scope="module")
def mpi():
    """(program, mpiexec); skips where the program was not built or there is no mpiexec."""
    program, mpiexec = os.environ.get("MULTI_GPU_MPI", ""), os.environ.get("MPIEXEC", "")
    if program in ("", "-") or not os.path.exists(program):
        pytest.skip("multi_gpu_mpi was not built (it needs NCCL and MPI; the configure step said which is missing)")
    if mpiexec in ("", "-") or shutil.which(mpiexec) is None:
        pytest.skip(f"no mpiexec ('{mpiexec}')")
    return os.path.abspath(program), mpiexec


def run(mpi, args, cwd, ranks):
    program, mpiexec = mpi
    command = ([program] if ranks == 0 else [mpiexec, "--oversubscribe", "-np", str(ranks), program]) + list(args)
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def expect(mpi, args, code, needle, cwd, ranks=2):
    """`args` gives exit `code` with the program's one line on stderr holding `needle`
    (mpiexec's own lines aside), nothing on stdout, and no file written."""
    before = sorted(os.listdir(cwd))
    r = run(mpi, args, cwd, ranks)
    problems = refusal_problems(r, code, needle, [x for x in r.stderr.splitlines() if x.startswith(PREFIX)])
    if sorted(os.listdir(cwd)) != before:
        problems.append(f"files changed: {sorted(os.listdir(cwd))}")
    assert not problems, f"-np {ranks} {args}: " + "; ".join(problems) + f"\n    stderr: {r.stderr.strip()[:600]!r}"


HELP_NEEDLES = ("--gpus", "--n-per-gpu", "--sweep", "--methods", "mpirun", "NCCL_NVLS_ENABLE", "NCCL_P2P_DISABLE",
                "Exit codes")


@pytest.mark.parametrize("ranks", (0, 2))
def test_help(mpi, ranks, tmp_path):
    r = run(mpi, ["--help"], tmp_path, ranks)
    for needle in HELP_NEEDLES:
        assert r.returncode == 0 and needle in r.stdout, (
            f"-np {ranks} --help: exit {r.returncode}, or no {needle!r} in it")
    assert r.stdout.count("usage: multi_gpu_mpi") == 1, \
        f"-np {ranks} --help: the help is printed {r.stdout.count('usage: multi_gpu_mpi')} times"


REFUSED = [
    (["--gpus", "0"], "--gpus item '0'"),
    (["--gpus", "2,x"], "--gpus item 'x'"),
    (["--gpus", ","], "--gpus ',' names no rank count"),
    (["--gpus", "2000"], "--gpus item '2000'"),
    (["--gpus", "1,4"], "--gpus asks for 4 ranks but mpirun started 2"),
    (["--gpus", "2", "--n", "1001"], "--n 1001 does not split evenly over 2 ranks"),
    (["--n", "1001"], "does not split evenly over 2 ranks"),
    (["--n", "0"], "--n '0'"),
    (["--n-per-gpu", "0"], "--n-per-gpu '0'"),
    (["--n-per-gpu", "1e6"], "--n-per-gpu '1e6'"),
    (["--n", "2^20", "--n-per-gpu", "2^10"], "cannot be combined"),
    (["--sweep", "2^30:2^20"], "'2^30:2^20'"),
    (["--methods", "nope"], "--methods item 'nope'"),
    (["--methods", "shard_then_peer_store"], "run it with multi_gpu_sum"),
    (["--methods", "allreduce_one_float,peer_store_one_float"], "'peer_store_one_float'"),
    (["--reps", "0"], "--reps"),
    (["--pattern", "zeros"], "'zeros'"),
    (["--flush", "sideways"], "'sideways'"),
    (["--device", "1"], "'--device'"),
    (["--csv", "{work}/missing/x.csv"], "does not exist"),
    (["--csv", "a.csv", "--json", "a.csv"], "the same file"),
]


@pytest.mark.parametrize("args, needle", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_refused(mpi, args, needle, tmp_path):
    expect(mpi, [a.format(work=tmp_path) for a in args], 2, needle, tmp_path)


def test_refused_alone(mpi, tmp_path):
    """Alone (an MPI singleton), a job of one rank."""
    expect(mpi, ["--gpus", "1,2"], 2, "--gpus asks for 2 ranks but mpirun started 1", tmp_path, ranks=0)
    expect(mpi, ["--methods", "x"], 2, "--methods item 'x'", tmp_path, ranks=0)


def test_missing_gpus(mpi, tmp_path):
    present = gpus_present()
    if present == 0:
        expect(mpi, ["--n-per-gpu", "2^10", "--csv", "a.csv"], 3, "No CUDA device", tmp_path)
        expect(mpi, ["--n-per-gpu", "2^10"], 3, "No CUDA device", tmp_path, ranks=0)
    else:
        expect(mpi, ["--n-per-gpu", "2^10", "--csv", "a.csv"], 3, "ranks on", tmp_path, ranks=present + 1)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: test_multi_gpu_mpi_cli.py PROGRAM MPIEXEC", file=sys.stderr)
        sys.exit(2)
    sys.exit(run_as_script(__file__, {"MULTI_GPU_MPI": sys.argv[1], "MPIEXEC": sys.argv[2]}))
