#!/usr/bin/env python3
"""A machine whose CUDA driver cannot start is not a machine without a GPU. With the
CUDA toolkit's stub driver library in front of the real one (LD_LIBRARY_PATH), CUDA
fails to start with cudaErrorStubLibrary, as it fails with cudaErrorInsufficientDriver
under a driver too old for the runtime: a GPU test binary must then fail with CUDA's
message rather than report Skipped (exit 77), and a program must exit 1 naming the error
rather than 3 ("no CUDA device"). Needs no GPU. Exit 77 (Skipped) when the toolkit has
no stub library to put in front.

usage: test_cuda_start.py STUB_LIBCUDA GPU_TEST_BINARY PROGRAM
"""
import os
import subprocess
import sys
import tempfile

stub, gpu_test, program = sys.argv[1:4]
if not os.path.isfile(stub):
    print(f"the CUDA toolkit's stub driver library was not found (looked for {stub!r}): nothing to check")
    sys.exit(77)

failures = []
passed = 0
with tempfile.TemporaryDirectory() as lib:
    os.symlink(os.path.abspath(stub), os.path.join(lib, "libcuda.so.1"))
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")

    p = subprocess.run([gpu_test], capture_output=True, text=True, env=env, timeout=300)
    if p.returncode in (0, 77) or "cudaErrorStubLibrary" not in p.stderr:
        failures.append(f"{gpu_test} with the stub driver: exit {p.returncode} (expected a failure, not 0 or 77 "
                        f"'Skipped'), stderr {p.stderr.strip()!r}")
    else:
        passed += 1

    p = subprocess.run([program, "--n", "1024"], capture_output=True, text=True, env=env, timeout=300)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    if p.returncode != 1 or "cudaErrorStubLibrary" not in p.stderr or len(lines) != 1:
        failures.append(f"{program} with the stub driver: exit {p.returncode} (expected 1 and one line naming "
                        f"cudaErrorStubLibrary), stderr {p.stderr.strip()!r}")
    else:
        passed += 1

for f in failures:
    print("FAIL:", f)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
