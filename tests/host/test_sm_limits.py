#!/usr/bin/env python3
"""The per-SM limits of common/sm_limits.hpp (threads and blocks one SM holds, by compute
capability), which every stage's __launch_bounds__ uses, against ptxas itself: for every
architecture the installed nvcc can compile for, tests/host/data/sm_limits_probe.cu asks
for exactly those limits (which must compile without a warning) and for one block more in
threads and in block slots (which ptxas must call out of range). A limit set too high
would make ptxas ignore the bound (an error under the ci preset); one set too low would
leave part of the SM unused. No GPU is needed.

usage: test_sm_limits.py NVCC SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(0 if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help") else 2)
nvcc, source_dir = sys.argv[1], os.path.abspath(sys.argv[2])
probe = os.path.join(source_dir, "tests", "host", "data", "sm_limits_probe.cu")
include = os.path.join(source_dir, "common")

listed = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True)
archs = sorted({int(a) for a in re.findall(r"compute_(\d+)", listed.stdout)})
if listed.returncode != 0 or not archs:
    print(f"FAIL: {nvcc} --list-gpu-arch named no architecture: {listed.stderr.strip()}")
    sys.exit(1)
archs = [a for a in archs if a >= 75]  # the oldest the project builds for

failures = 0
with tempfile.TemporaryDirectory() as scratch:
    for arch in archs:
        p = subprocess.run([nvcc, f"-arch=sm_{arch}", "-cubin", "-I", include, "-o",
                            os.path.join(scratch, "probe.cubin"), probe], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL sm_{arch}: the probe did not compile: {p.stderr.strip()[:2000]}")
            failures += 1
            continue
        out_of_range = set(re.findall(r"for entry (\w+) is out of range", p.stderr))
        expected = {"threads_over", "blocks_over"}
        ok = out_of_range == expected
        print(f"{'ok' if ok else 'FAIL'} sm_{arch}: ptxas calls {sorted(out_of_range) or 'nothing'} out of range"
              f" (expected {sorted(expected)})")
        failures += not ok
print(f"{len(archs) - failures} of {len(archs)} architectures agree with common/sm_limits.hpp")
sys.exit(1 if failures else 0)
