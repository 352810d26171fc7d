#!/usr/bin/env python3
"""multi_gpu/multi_gpu_mpi on a GPU machine, one process per GPU under mpiexec: with 1, 2
and 4 ranks (each count at most the GPUs present), every NCCL row at sizes that leave
blocks and vectors partly full and for inputs with mixed signs and with NaNs must pass
its check on rank 0 (exit 0, every row "ok"), the fixed-order row with the same bits on
every rank; and the rows that promise their bits (shard_then_fixed_order, copy_to_one)
must give exactly the bits multi_gpu_sum gives with one process driving as many GPUs,
since both programs sum the same shards with the same stage in the same order.
Exits 77 (skipped) with no GPU, or when the programs were not built ('-').

usage: MPIEXEC=... MULTI_GPU_MPI=... MULTI_GPU_SUM=... [RANKS=1,2,4] python3 -m pytest tests/gpu/test_multi_gpu_mpi.py
   or: test_multi_gpu_mpi.py MPIEXEC MULTI_GPU_MPI MULTI_GPU_SUM [RANKS]   (RANKS default 1,2,4)
A rank count above the GPUs present is a skipped case; each case collects its failed
checks and fails naming all of them.
"""
import csv
import os
import shutil
import subprocess
import sys

import pytest

from conftest import run_as_script
from host_tools import gpus_present

SKIPPED_EXIT_CODE = 77  # not built, no mpiexec or no GPU: every case skips and the file exits 77
WANTED = [int(x) for x in (os.environ.get("RANKS") or "1,2,4").split(",")]

env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", NCCL_NVLS_ENABLE="0")
# mpiexec passes these to every rank (Open MPI's -x).
forwarded = [v for v in ("NCCL_NVLS_ENABLE", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_SOCKET_IFNAME",
                         "NCCL_DEBUG", "LD_LIBRARY_PATH", "PATH", "OPAL_PREFIX") if v in env]


@pytest.fixture(scope="module")
def programs():
    """(mpiexec, multi_gpu_mpi, multi_gpu_sum, GPUs present); skips where a program was
    not built, there is no mpiexec, or no GPU."""
    mpiexec = os.environ.get("MPIEXEC", "")
    mpi_program, sum_program = os.environ.get("MULTI_GPU_MPI", ""), os.environ.get("MULTI_GPU_SUM", "")
    for path in (mpi_program, sum_program):
        if path in ("", "-") or not os.path.exists(path):
            pytest.skip(f"{path!r} was not built (multi_gpu_mpi needs NCCL and MPI)")
    if shutil.which(mpiexec) is None:
        pytest.skip(f"no mpiexec ('{mpiexec}')")
    present = gpus_present()
    if present == 0:
        pytest.skip("No CUDA device")
    return mpiexec, mpi_program, sum_program, present


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


CASES = [
    ("mixed_signs", ["--sweep", "1:2^20:32"]),
    ("with_nan", ["--n-per-gpu", "1048583"]),  # 2^20 + 7
]


def expect(problems, label, ok, detail=""):
    if not ok:
        problems.append(f"{label}: {detail}")


@pytest.mark.parametrize("pattern, sizes", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("k", WANTED, ids=lambda k: f"np{k}")
def test_ranks_against_one_process(programs, k, pattern, sizes, tmp_path):
    mpiexec, mpi_program, sum_program, present = programs
    if k > present:
        pytest.skip(f"{k} ranks: not run, {present} GPU(s) present")
    work = str(tmp_path)
    problems = []
    run_case(problems, mpiexec, mpi_program, sum_program, k, pattern, sizes, work)
    assert not problems, "\n".join(problems)


def run_case(problems, mpiexec, mpi_program, sum_program, k, pattern, sizes, work):
    common = sizes + ["--pattern", pattern, "--reps", "3", "--min-reps", "3", "--seed", "5"]
    label = f"-np {k} {' '.join(sizes)} {pattern}"
    mpi_csv = os.path.join(work, f"mpi_{k}.csv")
    sum_csv = os.path.join(work, f"sum_{k}.csv")
    command = [mpiexec, "-np", str(k), "--oversubscribe", "--bind-to", "none"]
    for v in forwarded:
        command += ["-x", v]
    command += [mpi_program, "--gpus", f"1,{k}" if k > 1 else "1", "--csv", mpi_csv] + common
    r = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    print(r.stdout, end="")
    expect(problems, f"{label}: exit", r.returncode == 0, f"exit {r.returncode}\n{r.stderr[-2000:]}")
    if r.returncode != 0 or not os.path.exists(mpi_csv):
        return
    rows = read_rows(mpi_csv)
    expect(problems, f"{label}: rank counts", {int(x["gpus"]) for x in rows} == {1, k}, str({x["gpus"] for x in rows}))
    for row in rows:
        where = f"{label}: {row['gpus']} ranks, n {row['n']}, {row['key']}"
        expect(problems, f"{where}: check", row["check"] == "ok", row["check"])
        if row["key"] == "shard_then_fixed_order" and int(row["gpus"]) > 1:
            expect(problems, f"{where}: same bits on every rank", row["same_bits_on_gpus"] == "yes",
                   row["same_bits_on_gpus"])
    # One process driving k GPUs, the same shards.
    s = subprocess.run([sum_program, "--gpus", f"1,{k}" if k > 1 else "1", "--csv", sum_csv,
                        "--methods", "shard_then_fixed_order,copy_to_one"] + common,
                       capture_output=True, text=True, timeout=300, env=env)
    expect(problems, f"{label}: multi_gpu_sum exit", s.returncode == 0, f"exit {s.returncode}\n{s.stderr[-2000:]}")
    if s.returncode != 0:
        return
    single = {(x["gpus"], x["n"], x["key"]): x["result"] for x in read_rows(sum_csv)}
    for row in rows:
        key = (row["gpus"], row["n"], row["key"])
        if key in single:
            expect(problems, f"{label}: {key} the same bits as multi_gpu_sum", row["result"] == single[key],
                   f"{row['result']} against {single[key]}")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        sys.exit(2)
    args = {"MPIEXEC": sys.argv[1], "MULTI_GPU_MPI": sys.argv[2], "MULTI_GPU_SUM": sys.argv[3]}
    if len(sys.argv) == 5:
        args["RANKS"] = sys.argv[4]
    sys.exit(run_as_script(__file__, args))
