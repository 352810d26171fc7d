#!/usr/bin/env python3
"""multi_gpu/multi_gpu_sum's command line: --help, every refusal of bad input (exit 2,
one sentence on stderr naming the value, nothing on stdout, no file written) before a
GPU is looked for, --methods among them, and the missing GPUs: with no GPU, exit 3 and
one sentence; with GPUs, a --gpus count above the number present is exit 3 naming both
numbers, and an --n that the default counts (1 and every GPU) cannot split is exit 2.
(The multi_gpu step of scripts/device.sh, its refusals and its exit 3 without a GPU, is
tested in test_device_driver.py.)

usage: test_multi_gpu_cli.py PROGRAM
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from host_tools import gpus_present  # noqa: E402

if len(sys.argv) != 2:
    print("usage: test_multi_gpu_cli.py PROGRAM", file=sys.stderr)
    sys.exit(2)
program = os.path.abspath(sys.argv[1])
failures = []
passed = 0




def run(*args, cwd):
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def expect(args, code, needle, cwd):
    """`args` gives exit `code` with one line on stderr holding `needle`, and writes nothing."""
    global passed
    before = sorted(os.listdir(cwd))
    r = run(*args, cwd=cwd)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    problems = []
    if r.returncode != code:
        problems.append(f"exit {r.returncode}, expected {code}")
    if len(lines) != 1 or needle not in lines[0]:
        problems.append(f"expected one line naming {needle!r}")
    if r.stdout:
        problems.append(f"stdout not empty: {r.stdout[:200]!r}")
    if sorted(os.listdir(cwd)) != before:
        problems.append(f"files changed: {sorted(os.listdir(cwd))}")
    if problems:
        failures.append(f"{args}: " + "; ".join(problems) + f"\n    stderr: {r.stderr.strip()!r}")
    else:
        passed += 1


present = gpus_present()
with tempfile.TemporaryDirectory(prefix="multi_gpu_cli.") as work:
    r = run("--help", cwd=work)
    for needle in ("--gpus", "--n-per-gpu", "--sweep", "--methods", "shard_then_peer_store", "peer access",
                   "NCCL_NVLS_ENABLE", "Exit codes"):
        if r.returncode != 0 or needle not in r.stdout:
            failures.append(f"--help: exit {r.returncode}, or no {needle!r} in it")
        else:
            passed += 1

    refused = [
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
        (["--csv", os.path.join(work, "missing", "x.csv")], "does not exist"),
        (["--csv", "a.csv", "--json", "a.csv"], "the same file"),
        (["--methods", "nope"], "--methods item 'nope' is not a method"),
        (["--methods", "copy_to_one,peer_store"], "--methods item 'peer_store'"),
        (["--methods", ","], "--methods ',' names no method"),
    ]
    for args, needle in refused:
        expect(args, 2, needle, work)

    if present == 0:
        expect(["--n-per-gpu", "2^10", "--csv", "a.csv"], 3, "No CUDA device", work)
        expect(["--gpus", "2", "--n-per-gpu", "2^10"], 3, "No CUDA device", work)
    else:
        expect(["--gpus", f"1,{present + 1}", "--n-per-gpu", "2^10", "--csv", "a.csv"], 3,
               f"--gpus asks for {present + 1} GPUs but {present} CUDA device", work)
        if present > 1:
            expect(["--n", str(present * 1024 + 1)], 2, "does not split evenly", work)

for f in failures:
    print("FAIL:", f)
print(f"{passed} passed, {len(failures)} failed ({present} GPU(s) visible)")
sys.exit(1 if failures else 0)
