#!/usr/bin/env python3
"""scripts/run_doc_commands.py --check-programs: every build/PROGRAM a document names is a
program of the build, except a program the build leaves out by design because a library it
needs was not found (multi_gpu_sum without NCCL), which the configure lists in the build's
left_out.txt: it is reported as not checked; a missing program the list does not name fails.

usage: python3 -m pytest tests/host/test_doc_commands.py
"""
import os
import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "run_doc_commands.py"


def check_programs(build):
    return subprocess.run([sys.executable, str(SCRIPT), "--check-programs", str(build)], capture_output=True,
                          text=True, timeout=120)


def fake_build(tmp_path, nccl):
    """A build folder holding every program the docs name (empty executables) but
    multi_gpu_sum, whose left_out.txt lists it (no NCCL) or is empty, as the configure
    writes it."""
    listing = subprocess.run([sys.executable, str(SCRIPT), "--list"], capture_output=True, text=True, timeout=120)
    assert listing.returncode == 0, listing.stderr
    for token in re.findall(r"(?:^|\s)build/(\S+/\S+)", listing.stdout):
        if token == "multi_gpu/multi_gpu_sum":
            continue
        path = tmp_path / token
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    (tmp_path / "CMakeCache.txt").write_text("CMAKE_PROJECT_NAME:STATIC=reduction\n")
    left_out = "multi_gpu/multi_gpu_sum\tNCCL\nmulti_gpu/multi_gpu_mpi\tNCCL\n"
    (tmp_path / "left_out.txt").write_text("" if nccl else left_out)
    return tmp_path


def test_a_program_left_out_for_want_of_its_library_is_not_checked(tmp_path):
    r = check_programs(fake_build(tmp_path, nccl=False))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "not checked: chapters/26_multi_gpu.md: multi_gpu/multi_gpu_sum (this build has no NCCL" in r.stdout
    assert " 0 missing" in r.stdout


def test_with_its_library_found_a_missing_program_fails(tmp_path):
    r = check_programs(fake_build(tmp_path, nccl=True))
    assert r.returncode == 1
    assert "multi_gpu_sum is not a program of the build" in r.stdout and "not checked" not in r.stdout
    assert os.path.exists(tmp_path / "CMakeCache.txt")
