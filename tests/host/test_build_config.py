#!/usr/bin/env python3
"""The build's configuration with the real CMake, in scratch build directories (a
configure takes seconds; nothing is compiled):

  - with no Catch2 (hidden with CMAKE_DISABLE_FIND_PACKAGE_Catch2) the project
    configures with the default REDUCTION_BUILD_TESTS=AUTO, says the tests are not
    built, and generates no test target; with REDUCTION_BUILD_TESTS=ON it stops with a
    sentence saying how to get Catch2; scripts/test.sh told not to install anything
    stops before configuring, naming Catch2 and the command that installs it;
  - REDUCTION_WARNINGS_AS_ERRORS=ON (the ci preset) makes host warnings errors
    (-Werror, also through -Xcompiler in .cu files) and nvcc's and ptxas's too
    (--Werror=all-warnings);
  - CMakePresets.json's schema needs no newer CMake than the one the presets, the top
    CMakeLists.txt, the README and chapter 00 all name, and CMake reads the presets;
  - with MPI hidden (CMAKE_DISABLE_FIND_PACKAGE_MPI) the project configures, says
    multi_gpu_mpi is not built and builds everything else;
  - CI (.ci/run) runs the README's test command through the archs preset (the ci preset's
    settings, for every architecture from sm_75 to sm_120: 75;80;86;89;90;100;120) and
    installs Open MPI, and the README's prerequisites name what the build and the tests
    need;
  - the oldest CUDA toolkit is one version everywhere: CMakeLists.txt refuses anything
    older, the README and the reference name it, and the committed log of
    scripts/cuda12_build.sh (results/build/cuda12_build.txt) shows that version building
    every target and passing the host tests, for the commit it names.

usage: python3 -m pytest tests/host/test_build_config.py
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT

source_dir = str(ROOT)

# The architectures CI builds every target for (the archs preset): Turing to Blackwell.
ARCHS = "75;80;86;89;90;100;120"

# The CMake release that introduced each presets schema version.
SCHEMA_NEEDS = {1: (3, 19), 2: (3, 20), 3: (3, 21), 4: (3, 23), 5: (3, 24), 6: (3, 25), 7: (3, 27), 8: (3, 28),
                9: (3, 30), 10: (3, 31)}


def configure(build, *args):
    cmd = ["cmake", "-S", source_dir, "-B", build, "-DCMAKE_CUDA_ARCHITECTURES=90",
           "-DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON", *args]
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, " ".join((p.stdout + p.stderr).split())  # CMake wraps its messages


def read(relative):
    with open(os.path.join(source_dir, relative), encoding="utf-8") as f:
        return f.read()


def test_configure():
    with tempfile.TemporaryDirectory() as tmp:
        auto = os.path.join(tmp, "auto")
        rc, out = configure(auto, "-DREDUCTION_WARNINGS_AS_ERRORS=ON", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
        assert rc == 0 and "Catch2 was not found: the tests are not built" in out, (
            f"no Catch2, REDUCTION_BUILD_TESTS=AUTO: configuring succeeds and says so (exit {rc})\n{out[-1500:]}")
        commands = []
        if rc == 0:
            with open(os.path.join(auto, "compile_commands.json"), encoding="utf-8") as f:
                commands = json.load(f)
            assert not any("/tests/" in c["file"] for c in commands), "no Catch2: no test is built"
            assert any(c["file"].endswith("reduction/reduce_main.cpp") for c in commands), "no Catch2: reduce is built"
        cxx = [c["command"] for c in commands if c["file"].endswith("reduction/runner.cpp")]
        cu = [c["command"] for c in commands if c["file"].endswith("reduction/05_sequential_addressing.cu")]
        assert len(cxx) == 1 and " -Werror " in cxx[0] + " ", f"warnings as errors: host code gets -Werror: {cxx}"
        assert len(cu) == 1 and "--Werror=all-warnings" in cu[0] and "-Xcompiler=-Werror" in cu[0], (
            f"warnings as errors: CUDA code gets --Werror=all-warnings and -Xcompiler=-Werror: {cu}")

        plain = os.path.join(tmp, "plain")
        rc, out = configure(plain, "-DREDUCTION_BUILD_TESTS=OFF", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
                            "-DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON")
        if rc == 0:
            with open(os.path.join(plain, "compile_commands.json"), encoding="utf-8") as f:
                plain_entries = json.load(f)
            plain_commands = [c["command"] for c in plain_entries]
            assert not any("Werror" in c for c in plain_commands), "without the option no warning is an error"
            # Without MPI (hidden here) the one-process-per-GPU program is left out, saying so,
            # and the rest builds; without NCCL neither multi-GPU program is configured.
            assert not any(c["file"].endswith("multi_gpu/multi_gpu_mpi.cpp") for c in plain_entries), (
                "no MPI: multi_gpu_mpi is not built")
            if "multi_gpu/multi_gpu_sum: NCCL" in out:
                assert (("multi_gpu/multi_gpu_mpi is not built: MPI (mpicc and mpi.h) was not found" in out and
                      any(c["file"].endswith("multi_gpu/multi_gpu_sum.cpp") for c in plain_entries))), f"no MPI: configuring says multi_gpu_mpi is not built and builds multi_gpu_sum\n{out[-1500:]}"
        else:
            pytest.fail(f"REDUCTION_BUILD_TESTS=OFF: configuring failed\n{out[-1500:]}")

        on = os.path.join(tmp, "on")
        rc, out = configure(on, "-DREDUCTION_BUILD_TESTS=ON")
        assert ((rc != 0 and "Catch2 was not found and REDUCTION_BUILD_TESTS is ON" in out and
              "apt-get install catch2" in out and "scripts/test.sh" in out)), f"no Catch2, REDUCTION_BUILD_TESTS=ON: configuring stops saying how to get it (exit {rc})\n{out[-1500:]}"

        rc, out = configure(os.path.join(tmp, "bad"), "-DREDUCTION_BUILD_TESTS=maybe")
        assert rc != 0 and "REDUCTION_BUILD_TESTS is 'maybe'; use ON, OFF or AUTO" in out, (
            f"a bad REDUCTION_BUILD_TESTS is named (exit {rc})")

        # test.sh with Catch2 hidden from CMake and installing forbidden: one sentence, exit 2,
        # before anything is configured.
        build = os.path.join(tmp, "test_sh")
        env = {k: v for k, v in os.environ.items() if k not in ("PRESET", "CMAKE_ARGS")}
        env.update({"BUILD_DIR": build, "REDUCTION_NO_INSTALL": "1", "CMAKE_ARGS": "-DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON"})
        p = subprocess.run(["bash", os.path.join(source_dir, "scripts", "test.sh")], capture_output=True, text=True,
                           env=env, timeout=600)
        lines = [line for line in p.stderr.splitlines() if line.strip()]
        assert ((p.returncode == 2 and len(lines) == 1 and "the tests need Catch2" in lines[0] and
              "sudo apt-get install catch2" in lines[0] and not os.path.exists(build))), f"test.sh without Catch2 and REDUCTION_NO_INSTALL=1: exit {p.returncode}, stderr {p.stderr.strip()!r}"


# The presets and the CMake version every document names.
def test_presets_versions_and_documents():
    presets = json.loads(read("CMakePresets.json"))
    schema = presets["version"]
    stated = (presets["cmakeMinimumRequired"]["major"], presets["cmakeMinimumRequired"]["minor"])
    assert schema in SCHEMA_NEEDS and SCHEMA_NEEDS[schema] <= stated, (
        f"CMakePresets.json schema {schema} needs CMake {SCHEMA_NEEDS.get(schema)}, more than the {stated} it states")
    minimum = re.search(r"cmake_minimum_required\(VERSION (\d+)\.(\d+)", read("CMakeLists.txt"))
    assert minimum and (int(minimum.group(1)), int(minimum.group(2))) == stated, (
        f"CMakeLists.txt's cmake_minimum_required and the presets' cmakeMinimumRequired {stated} agree")
    version = f"{stated[0]}.{stated[1]}"
    for doc in ("README.md", "chapters/00_introduction.md"):
        named = set(re.findall(r"CMake (\d+\.\d+) or newer", read(doc)))
        assert named == {version}, f"{doc} names CMake {named or 'no version'}, the build needs {version}"
    configure_presets = {p["name"]: p for p in presets["configurePresets"]}
    assert configure_presets.get("ci", {}).get("cacheVariables", {}).get("REDUCTION_WARNINGS_AS_ERRORS") == "ON", (
        "the ci preset makes warnings errors")
    p = subprocess.run(["cmake", "--list-presets"], cwd=source_dir, capture_output=True, text=True)
    assert p.returncode == 0 and '"ci"' in p.stdout, f"cmake --list-presets reads the presets: {p.stderr.strip()}"

    # The archs preset: the ci preset's settings for every architecture a reader's GPU may
    # have, from Turing (sm_75: T4, RTX 20xx) to Blackwell (sm_100, sm_120); CI builds and
    # tests it.
    archs = configure_presets.get("archs", {})
    assert archs.get("inherits") == "ci" and archs.get("cacheVariables", {}).get("CMAKE_CUDA_ARCHITECTURES") == ARCHS, (
        f"the archs preset inherits ci and builds for {ARCHS}: {archs}")
    assert configure_presets.get("ci", {}).get("cacheVariables", {}).get("CMAKE_CUDA_ARCHITECTURES") == "90", (
        "the ci preset builds for sm_90")
    ci = read(".ci/run")
    assert re.search(r"^PRESET=archs exec scripts/test\.sh\s*$", ci, re.M) is not None, (
        ".ci/run runs the README's test command (scripts/test.sh) through the archs preset")
    assert "clang-format-14" in ci, ".ci/run installs clang-format 14 for the format check"
    assert "libopenmpi-dev" in ci and "openmpi-bin" in ci, (
        ".ci/run installs Open MPI, so multi_gpu_mpi is built and its command line checked")
    readme = read("README.md")
    assert "scripts/test.sh" in readme and "PRESET=archs scripts/test.sh" in read("REFERENCE.md"), (
        "the README names the test command and the reference the form CI runs")
    # The full list of prerequisites is on the reference page the README links.
    assert "REFERENCE.md#prerequisites" in readme, "the README links the full list of prerequisites"
    reference = read("REFERENCE.md")
    prerequisites = reference.split("## Prerequisites", 1)[-1].split("\n## ", 1)[0]
    for needed in ("Catch2", "matplotlib", "pandas", "pytest", "clang-format 14", "Python 3", "Ninja", f"CMake {version}"):
        assert needed in prerequisites, f"the reference's prerequisites name {needed}"


# The oldest CUDA toolkit: the configure check, the documents and the build that shows it.
def test_oldest_cuda_toolkit():
    oldest = re.search(r"if\(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS (\d+\.\d+)\)\s*\n\s*message\(FATAL_ERROR",
                       read("CMakeLists.txt"))
    assert oldest is not None, "CMakeLists.txt refuses a CUDA toolkit older than the oldest built"
    if not oldest:
        return
    cuda = oldest.group(1)
    for doc in ("README.md", "REFERENCE.md"):
        named = set(re.findall(r"CUDA toolkit (\d+(?:\.\d+)?) or newer", read(doc)))
        assert named == {cuda}, f"{doc} names CUDA {named or 'no version'} as the oldest, CMakeLists.txt {cuda}"
    # scripts/cuda12_build.sh runs this test while it writes a new log in place of the
    # committed one (it sets REDUCTION_CUDA12_LOG_PENDING=1): there the log is not checked.
    log_path = os.path.join(source_dir, "results", "build", "cuda12_build.txt")
    if os.environ.get("REDUCTION_CUDA12_LOG_PENDING") == "1":
        return
    assert os.path.exists(log_path), "results/build/cuda12_build.txt, the CUDA 12 build's log, is committed"
    log = read("results/build/cuda12_build.txt") if os.path.exists(log_path) else ""
    assert re.search(r"^cuda12_build\.sh: the build of commit [0-9a-f]{40} ", log, re.M) is not None, (
        "the CUDA 12 build log names the commit it built")
    assert re.search(rf"^Cuda compilation tools, release {re.escape(cuda)}, ", log, re.M) is not None, (
        f"the CUDA 12 build log's nvcc is CUDA {cuda}")
    assert ((re.search(rf"^cuda12_build\.sh: CUDA {re.escape(cuda)} built every target for \S+ in \d+ min with "
                    r"warnings as errors, and every host test passed\.$", log, re.M) is not None and
          "100% tests passed" in log)), f"the CUDA 12 build log shows CUDA {cuda} building every target and passing"


if __name__ == "__main__":  # python3 tests/host/test_build_config.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
