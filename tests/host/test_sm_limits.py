#!/usr/bin/env python3
"""The per-SM limits of common/sm_limits.hpp (threads and blocks one SM holds, by compute
capability), which every stage's __launch_bounds__ uses, against ptxas itself: for every
architecture the installed nvcc can compile for, tests/host/data/sm_limits_probe.cu asks
for exactly those limits (which must compile without a warning) and for one block more in
threads and in block slots (which ptxas must call out of range). A limit set too high
would make ptxas ignore the bound (an error under the ci preset); one set too low would
leave part of the SM unused. No GPU is needed.

usage: NVCC=PATH/TO/nvcc SOURCE_DIR=REPOSITORY python3 -m pytest tests/host/test_sm_limits.py
   or: test_sm_limits.py NVCC SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

import pytest

from conftest import env_arg, run_as_script


def archs_of(nvcc):
    listed = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True)
    archs = sorted({int(a) for a in re.findall(r"compute_(\d+)", listed.stdout)})
    assert listed.returncode == 0 and archs, f"{nvcc} --list-gpu-arch named no architecture: {listed.stderr.strip()}"
    return [a for a in archs if a >= 75]  # the oldest the project builds for


def test_ptxas_agrees_with_sm_limits():
    nvcc = env_arg("NVCC", "PATH/TO/nvcc")
    source_dir = os.path.abspath(env_arg("SOURCE_DIR", "the repository"))
    probe = os.path.join(source_dir, "tests", "host", "data", "sm_limits_probe.cu")
    include = os.path.join(source_dir, "common")
    archs = archs_of(nvcc)
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        for arch in archs:
            p = subprocess.run([nvcc, f"-arch=sm_{arch}", "-cubin", "-I", include, "-o",
                                os.path.join(scratch, "probe.cubin"), probe], capture_output=True, text=True)
            if p.returncode != 0:
                failures.append(f"sm_{arch}: the probe did not compile: {p.stderr.strip()[:2000]}")
                continue
            out_of_range = set(re.findall(r"for entry (\w+) is out of range", p.stderr))
            expected = {"threads_over", "blocks_over"}
            if out_of_range != expected:
                failures.append(f"sm_{arch}: ptxas calls {sorted(out_of_range) or 'nothing'} out of range"
                                f" (expected {sorted(expected)})")
    assert not failures, (f"{len(failures)} of {len(archs)} architectures disagree with common/sm_limits.hpp:\n"
                          + "\n".join(failures))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help") else 2)
    sys.exit(run_as_script(__file__, {"NVCC": sys.argv[1], "SOURCE_DIR": sys.argv[2]}))
