#!/usr/bin/env python3
"""A machine whose CUDA driver cannot start is not a machine without a GPU. With the
CUDA toolkit's stub driver library in front of the real one (LD_LIBRARY_PATH), CUDA
fails to start with cudaErrorStubLibrary, as it fails with cudaErrorInsufficientDriver
under a driver too old for the runtime: a GPU test binary must then fail with CUDA's
message rather than report Skipped (exit 77), and a program must exit 1 naming the error
rather than 3 ("no CUDA device"). Needs no GPU. Skipped (exit 77) when the toolkit has
no stub library to put in front.

usage: STUB_LIBCUDA=... GPU_TEST=... PROGRAM=... python3 -m pytest tests/host/test_cuda_start.py
   or: test_cuda_start.py STUB_LIBCUDA GPU_TEST_BINARY PROGRAM
"""
import os
import subprocess
import sys

import pytest

from conftest import env_arg, run_as_script

SKIPPED_EXIT_CODE = 77  # every test skipped (no stub library): the file exits 77, Skipped under ctest


@pytest.fixture
def stub_env(tmp_path):
    """The environment with the stub driver library in front of the real one."""
    stub = os.environ.get("STUB_LIBCUDA", "")
    if not os.path.isfile(stub):
        pytest.skip(f"the CUDA toolkit's stub driver library was not found (looked for {stub!r}): nothing to check")
    os.symlink(os.path.abspath(stub), tmp_path / "libcuda.so.1")
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(tmp_path) + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def test_gpu_test_binary_fails(stub_env):
    gpu_test = env_arg("GPU_TEST", "a GPU test binary")
    p = subprocess.run([gpu_test], capture_output=True, text=True, env=stub_env, timeout=300)
    assert p.returncode not in (0, 77) and "cudaErrorStubLibrary" in p.stderr, \
        (f"{gpu_test} with the stub driver: exit {p.returncode} (expected a failure, not 0 or 77 "
         f"'Skipped'), stderr {p.stderr.strip()!r}")


def test_program_exits_1(stub_env):
    program = env_arg("PROGRAM", "build/reduction/reduce")
    p = subprocess.run([program, "--n", "1024"], capture_output=True, text=True, env=stub_env, timeout=300)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert p.returncode == 1 and "cudaErrorStubLibrary" in p.stderr and len(lines) == 1, \
        (f"{program} with the stub driver: exit {p.returncode} (expected 1 and one line naming "
         f"cudaErrorStubLibrary), stderr {p.stderr.strip()!r}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__.strip())
        sys.exit(2)
    sys.exit(run_as_script(__file__, dict(zip(("STUB_LIBCUDA", "GPU_TEST", "PROGRAM"), sys.argv[1:4]))))
