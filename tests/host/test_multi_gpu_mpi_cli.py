#!/usr/bin/env python3
"""multi_gpu/multi_gpu_mpi's command line, run as a job would run it: under
`mpiexec -np 2` (and alone, as an MPI singleton). --help prints once; every refusal
of bad input is exit 2 with one sentence from rank 0 on stderr, naming the value, and
nothing on stdout and no file written, before a GPU is looked for; with no GPU, exit 3
and one sentence; with GPUs, more ranks on the node than GPUs is exit 3 naming both.
Exits 77 (skipped) when the program was not built (no NCCL or no MPI: PROGRAM is '-').

usage: test_multi_gpu_mpi_cli.py PROGRAM MPIEXEC
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from host_tools import gpus_present  # noqa: E402

if len(sys.argv) != 3:
    print("usage: test_multi_gpu_mpi_cli.py PROGRAM MPIEXEC", file=sys.stderr)
    sys.exit(2)
if sys.argv[1] in ("", "-") or not os.path.exists(sys.argv[1]):
    print("multi_gpu_mpi was not built (it needs NCCL and MPI; the configure step said which is missing): skipped.")
    sys.exit(77)
program = os.path.abspath(sys.argv[1])
mpiexec = sys.argv[2]
if mpiexec in ("", "-") or shutil.which(mpiexec) is None:
    print(f"no mpiexec ('{mpiexec}'): skipped.")
    sys.exit(77)
failures = []
passed = 0
PREFIX = "multi_gpu_mpi:"

# Open MPI refuses to start as root unless told; --oversubscribe lets 2 ranks run on 1 core.
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
LAUNCH = [mpiexec, "--oversubscribe", "-np"]




def run(args, cwd, ranks):
    command = ([program] if ranks == 0 else LAUNCH + [str(ranks), program]) + list(args)
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def expect(args, code, needle, cwd, ranks=2):
    """`args` gives exit `code` with the program's one line on stderr holding `needle`
    (mpiexec's own lines aside), nothing on stdout, and no file written."""
    global passed
    before = sorted(os.listdir(cwd))
    r = run(args, cwd, ranks)
    ours = [x for x in r.stderr.splitlines() if x.startswith(PREFIX)]
    problems = []
    if r.returncode != code:
        problems.append(f"exit {r.returncode}, expected {code}")
    if len(ours) != 1 or needle not in ours[0]:
        problems.append(f"expected one line from the program naming {needle!r}")
    if r.stdout:
        problems.append(f"stdout not empty: {r.stdout[:200]!r}")
    if sorted(os.listdir(cwd)) != before:
        problems.append(f"files changed: {sorted(os.listdir(cwd))}")
    if problems:
        failures.append(f"-np {ranks} {args}: " + "; ".join(problems) + f"\n    stderr: {r.stderr.strip()[:600]!r}")
    else:
        passed += 1


present = gpus_present()
with tempfile.TemporaryDirectory(prefix="multi_gpu_mpi_cli.") as work:
    for ranks in (0, 2):
        r = run(["--help"], work, ranks)
        for needle in ("--gpus", "--n-per-gpu", "--sweep", "--methods", "mpirun", "NCCL_NVLS_ENABLE",
                       "NCCL_P2P_DISABLE", "Exit codes"):
            if r.returncode != 0 or needle not in r.stdout:
                failures.append(f"-np {ranks} --help: exit {r.returncode}, or no {needle!r} in it")
            else:
                passed += 1
        if r.stdout.count("usage: multi_gpu_mpi") != 1:
            failures.append(f"-np {ranks} --help: the help is printed {r.stdout.count('usage: multi_gpu_mpi')} times")
        else:
            passed += 1

    refused = [
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
        (["--csv", os.path.join(work, "missing", "x.csv")], "does not exist"),
        (["--csv", "a.csv", "--json", "a.csv"], "the same file"),
    ]
    for args, needle in refused:
        expect(args, 2, needle, work)
    # Alone (an MPI singleton), a job of one rank.
    expect(["--gpus", "1,2"], 2, "--gpus asks for 2 ranks but mpirun started 1", work, ranks=0)
    expect(["--methods", "x"], 2, "--methods item 'x'", work, ranks=0)

    if present == 0:
        expect(["--n-per-gpu", "2^10", "--csv", "a.csv"], 3, "No CUDA device", work)
        expect(["--n-per-gpu", "2^10"], 3, "No CUDA device", work, ranks=0)
    else:
        expect(["--n-per-gpu", "2^10", "--csv", "a.csv"], 3,
               f"ranks on", work, ranks=present + 1)

for f in failures:
    print("FAIL:", f)
print(f"{passed} passed, {len(failures)} failed ({present} GPU(s) visible)")
sys.exit(1 if failures else 0)
