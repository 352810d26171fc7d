#!/usr/bin/env python3
"""multi_gpu/multi_gpu_mpi on a GPU machine, one process per GPU under mpiexec: with 1, 2
and 4 ranks (each count at most the GPUs present), every NCCL row at sizes that leave
blocks and vectors partly full and for inputs with mixed signs and with NaNs must pass
its check on rank 0 (exit 0, every row "ok"), the fixed-order row with the same bits on
every rank; and the rows that promise their bits (shard_then_fixed_order, copy_to_one)
must give exactly the bits multi_gpu_sum gives with one process driving as many GPUs,
since both programs sum the same shards with the same stage in the same order.
Exits 77 (skipped) with no GPU, or when the programs were not built ('-').

usage: test_multi_gpu_mpi.py MPIEXEC MULTI_GPU_MPI MULTI_GPU_SUM [RANKS]   (RANKS default 1,2,4)
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))
from host_tools import gpus_present  # noqa: E402

if len(sys.argv) not in (4, 5):
    print(__doc__.strip().splitlines()[-1], file=sys.stderr)
    sys.exit(2)
mpiexec, mpi_program, sum_program = sys.argv[1:4]
wanted = [int(x) for x in (sys.argv[4] if len(sys.argv) == 5 else "1,2,4").split(",")]
for path in (mpi_program, sum_program):
    if path in ("", "-") or not os.path.exists(path):
        print(f"{path!r} was not built (multi_gpu_mpi needs NCCL and MPI): skipped.")
        sys.exit(77)
if shutil.which(mpiexec) is None:
    print(f"no mpiexec ('{mpiexec}'): skipped.")
    sys.exit(77)




present = gpus_present()
if present == 0:
    print("No CUDA device: skipped.")
    sys.exit(77)
counts = [k for k in wanted if k <= present]
skipped = [k for k in wanted if k > present]

env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", NCCL_NVLS_ENABLE="0")
# mpiexec passes these to every rank (Open MPI's -x).
forwarded = [v for v in ("NCCL_NVLS_ENABLE", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_SOCKET_IFNAME",
                         "NCCL_DEBUG", "LD_LIBRARY_PATH", "PATH", "OPAL_PREFIX") if v in env]
failures = []
passed = 0


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def check(label, ok, detail=""):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(f"{label}: {detail}")


CASES = [
    ("mixed_signs", ["--sweep", "1:2^20:32"]),
    ("with_nan", ["--n-per-gpu", "1048583"]),  # 2^20 + 7
]
with tempfile.TemporaryDirectory(prefix="multi_gpu_mpi_test.") as work:
    for k in counts:
        for pattern, sizes in CASES:
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
            check(f"{label}: exit", r.returncode == 0, f"exit {r.returncode}\n{r.stderr[-2000:]}")
            if r.returncode != 0 or not os.path.exists(mpi_csv):
                continue
            rows = read_rows(mpi_csv)
            check(f"{label}: rank counts", {int(x["gpus"]) for x in rows} == {1, k}, str({x["gpus"] for x in rows}))
            for row in rows:
                where = f"{label}: {row['gpus']} ranks, n {row['n']}, {row['key']}"
                check(f"{where}: check", row["check"] == "ok", row["check"])
                if row["key"] == "shard_then_fixed_order" and int(row["gpus"]) > 1:
                    check(f"{where}: same bits on every rank", row["same_bits_on_gpus"] == "yes", row["same_bits_on_gpus"])
            # One process driving k GPUs, the same shards.
            s = subprocess.run([sum_program, "--gpus", f"1,{k}" if k > 1 else "1", "--csv", sum_csv,
                                "--methods", "shard_then_fixed_order,copy_to_one"] + common,
                               capture_output=True, text=True, timeout=300, env=env)
            check(f"{label}: multi_gpu_sum exit", s.returncode == 0, f"exit {s.returncode}\n{s.stderr[-2000:]}")
            if s.returncode != 0:
                continue
            single = {(x["gpus"], x["n"], x["key"]): x["result"] for x in read_rows(sum_csv)}
            for row in rows:
                key = (row["gpus"], row["n"], row["key"])
                if key in single:
                    check(f"{label}: {key} the same bits as multi_gpu_sum", row["result"] == single[key],
                          f"{row['result']} against {single[key]}")

for f in failures:
    print("FAIL:", f)
note = f" (not run: {','.join(map(str, skipped))} ranks, {present} GPU(s) present)" if skipped else ""
print(f"{passed} passed, {len(failures)} failed; ranks {','.join(map(str, counts))}{note}")
sys.exit(1 if failures else 0)
