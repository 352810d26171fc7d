#!/usr/bin/env python3
"""The peer programs' command lines (peers/ceiling, and peers/cub_modes when it is
built): --help, every refusal (exit 2, one sentence naming the value, no file written)
and, on a machine without a GPU, exit 3 with one sentence.

usage: test_peers_cli.py PROGRAM...
"""
import os
import shutil
import subprocess
import sys
import tempfile

failures = []
has_gpu = shutil.which("nvidia-smi") is not None and subprocess.run(["nvidia-smi", "-L"],
                                                                    capture_output=True).returncode == 0
for program in sys.argv[1:]:
    name = os.path.basename(program)
    work = tempfile.mkdtemp(prefix="peers_cli.")
    out = os.path.join(work, "out.csv")

    def run(*args):
        return subprocess.run([program, *args], capture_output=True, text=True)

    r = run("--help")
    if r.returncode != 0 or "--sweep" not in r.stdout or "Exit codes" not in r.stdout:
        failures.append(f"{name} --help: rc {r.returncode}")
    refused = [
        (["--n", "0"], "'0'"),
        (["--n", "1e6"], "'1e6'"),
        (["--sweep", "2^30:2^10"], "'2^30:2^10'"),
        (["--sweep", "2^10"], "'2^10'"),
        (["--n", "2^20", "--sweep", "2^10:2^12"], "--n and --sweep"),
        (["--reps", "0"], "--reps"),
        (["--pattern", "zeros"], "'zeros'"),
        (["--flush", "sideways"], "'sideways'"),
        (["--bogus"], "'--bogus'"),
        (["--csv", os.path.join(work, "missing", "x.csv")], "does not exist"),
        (["--json", out], "the same file"),
    ]
    for args, named in refused:
        r = run("--csv", out, *args)
        lines = [x for x in r.stderr.splitlines() if x.strip()]
        if r.returncode != 2 or len(lines) != 1 or named not in lines[0]:
            failures.append(f"{name} {args}: rc {r.returncode}, stderr {r.stderr!r} (wanted 2 naming {named})")
        if os.listdir(work):
            failures.append(f"{name} {args}: left {os.listdir(work)}")
    if not has_gpu:
        r = run("--n", "2^10", "--csv", out)
        if r.returncode != 3 or "CUDA device" not in r.stderr or os.listdir(work):
            failures.append(f"{name} without a GPU: rc {r.returncode}, stderr {r.stderr!r}")
    shutil.rmtree(work, ignore_errors=True)

for f in failures:
    print("FAIL:", f)
print(f"{len(sys.argv) - 1} program(s), {len(failures)} failure(s)")
sys.exit(1 if failures or len(sys.argv) < 2 else 0)
