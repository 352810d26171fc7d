#!/usr/bin/env python3
"""The single-pass reduction as an installed CMake package, consumed by another project:

  1. `cmake --install BUILD_DIR --component single_pass` into a temporary prefix installs
     the headers (single_pass.cuh and the workspace_layout.hpp it includes, byte for byte
     the source's) and the package files;
  2. a C++-only project finds the package with find_package(... 0.1 CONFIG REQUIRED),
     gets the imported target reduction::single_pass with CUDA::cudart, and a request
     for version 1.0 is refused;
  3. single_pass/example, configured as an outside project with CMAKE_PREFIX_PATH set
     to that prefix, finds the installed package (not the source tree's target), builds
     against the installed header, and its program exits 0 (both results right) or 77
     (no CUDA device: built, not run; the GPU test single_pass_example runs it where
     there is a GPU).

usage: test_single_pass_package.py SOURCE_DIR BUILD_DIR CUDA_ARCHITECTURES GENERATOR
                                   [-DVAR=VALUE ...]
   or: SOURCE_DIR=... BUILD_DIR=... CUDA_ARCHITECTURES=... GENERATOR=... CONFIGURE_ARGS='-DVAR=VALUE|...'
       python3 -m pytest tests/host/test_single_pass_package.py
CUDA_ARCHITECTURES is the parent build's list with commas for semicolons; the -D
arguments (compiler, launcher, make program; in CONFIGURE_ARGS separated by |) are
passed to every configure. The install, the find_package probes and the example are
three tests, in that order, on one temporary prefix.
"""
import filecmp
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import env_arg, run_as_script

PACKAGE = "reduction_single_pass"


def run(args, timeout=600):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def cache_value(build, name):
    with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.rstrip("\n").split("=", 1)[1]
    return None


def include_dirs(command):
    """The include directories of one compile command (-I, -isystem; joined or not)."""
    words = shlex.split(command)
    dirs = []
    for i, w in enumerate(words):
        if w in ("-I", "-isystem") and i + 1 < len(words):
            dirs.append(words[i + 1])
        elif w.startswith("-isystem"):
            dirs.append(w[len("-isystem"):].lstrip("="))
        elif w.startswith("-I"):
            dirs.append(w[2:])
    return [os.path.normpath(d) for d in dirs]


class Setup:
    """The parent build, the options for every configure, and the temporary prefix."""

    def __init__(self, work):
        self.source_dir = os.path.abspath(env_arg("SOURCE_DIR", "the repository"))
        self.build_dir = os.path.abspath(env_arg("BUILD_DIR", "the parent build"))
        self.archs = env_arg("CUDA_ARCHITECTURES", "the parent build's architectures, joined by commas").replace(",", ";")
        self.generator = env_arg("GENERATOR", "the parent build's CMake generator")
        self.extra = [a for a in os.environ.get("CONFIGURE_ARGS", "").split("|") if a and a.split("=", 1)[-1] != ""]
        self.work = work
        self.prefix = os.path.join(work, "prefix")
        self.package_dir = None
        self.common = ["-G", self.generator, f"-DCMAKE_PREFIX_PATH={self.prefix}",
                       "-DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON"] + self.extra


@pytest.fixture(scope="module")
def setup():
    work = tempfile.mkdtemp(prefix="single_pass_package.")
    try:
        yield Setup(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def installed(setup):
    """1. The install (the other tests fail with it where it fails)."""
    rc, out = run(["cmake", "--install", setup.build_dir, "--prefix", setup.prefix, "--component", "single_pass"])
    assert rc == 0, f"cmake --install --component single_pass exits 0\n{out}"
    for libdir in ("lib", "lib64"):
        candidate = os.path.join(setup.prefix, libdir, "cmake", PACKAGE)
        if os.path.isdir(candidate):
            setup.package_dir = candidate
    return setup


def test_install(installed):
    s = installed
    for name in ("single_pass.cuh", "workspace_layout.hpp"):
        header = os.path.join(s.prefix, "include", "reduction", name)
        assert os.path.isfile(header) and filecmp.cmp(header, os.path.join(s.source_dir, "single_pass", name),
                                                      shallow=False), \
            f"the installed include/reduction/{name} is the source's header"
    expected = {f"{PACKAGE}Config.cmake", f"{PACKAGE}ConfigVersion.cmake", f"{PACKAGE}Targets.cmake"}
    found = set(os.listdir(s.package_dir)) if s.package_dir else set()
    assert expected <= found, \
        f"the package files are installed under lib/cmake/{PACKAGE}\nfound {sorted(found)} in {s.package_dir}"


def test_find_package(installed):
    """2. find_package from a C++-only project: the target, its link to the CUDA runtime,
    and the version check."""
    s = installed

    def probe(version):
        probe_dir = os.path.join(s.work, f"probe-{version}")
        os.makedirs(probe_dir)
        with open(os.path.join(probe_dir, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write("cmake_minimum_required(VERSION 3.24)\nproject(probe LANGUAGES CXX)\n"
                    f"find_package({PACKAGE} {version} CONFIG REQUIRED)\n"
                    "get_target_property(libs reduction::single_pass INTERFACE_LINK_LIBRARIES)\n"
                    "if(NOT TARGET CUDA::cudart OR NOT \"CUDA::cudart\" IN_LIST libs)\n"
                    "  message(FATAL_ERROR \"reduction::single_pass does not bring CUDA::cudart: ${libs}\")\n"
                    "endif()\nmessage(STATUS \"probe found ${" + PACKAGE + "_VERSION} at ${" + PACKAGE + "_DIR}\")\n")
        return run(["cmake", "-S", probe_dir, "-B", os.path.join(probe_dir, "build")] + s.common)

    rc, out = probe("0.1")
    assert rc == 0 and f"probe found 0.1.0 at {s.package_dir}" in out, \
        f"find_package(reduction_single_pass 0.1 CONFIG REQUIRED) finds the installed 0.1.0 with CUDA::cudart\n{out}"
    rc, out = probe("1.0")
    assert rc != 0 and "0.1.0" in out, (
        f"find_package(reduction_single_pass 1.0 ...) is refused (0.1.0 installed)\n{out}")


def test_example_as_outside_project(installed):
    """3. The example as an outside project: it finds the installed package, builds
    against its header and exits 0 (results right) or 77 (no CUDA device)."""
    s = installed
    example_build = os.path.join(s.work, "example")
    rc, out = run(["cmake", "-S", os.path.join(s.source_dir, "single_pass", "example"), "-B", example_build,
                   f"-DCMAKE_CUDA_ARCHITECTURES={s.archs}", "-DCMAKE_BUILD_TYPE=Release",
                   "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"] + s.common)
    assert rc == 0, f"single_pass/example configures as an outside project\n{out}"
    found_at = cache_value(example_build, f"{PACKAGE}_DIR")
    assert found_at is not None and s.package_dir is not None and \
        os.path.realpath(found_at) == os.path.realpath(s.package_dir), \
        f"the example found the installed package\n{PACKAGE}_DIR = {found_at}"
    rc, out = run(["cmake", "--build", example_build])
    assert rc == 0, f"the example builds against the installed package\n{out}"
    with open(os.path.join(example_build, "compile_commands.json"), encoding="utf-8") as f:
        commands = [c for c in json.load(f) if c["file"].endswith("main.cu")]
    dirs = include_dirs(commands[0]["command"]) if commands else []
    installed_dir = os.path.normpath(os.path.join(s.prefix, "include", "reduction"))
    in_tree = os.path.normpath(os.path.join(s.source_dir, "single_pass"))
    assert installed_dir in dirs and in_tree not in dirs, \
        f"main.cu is compiled with the installed include directory, not the source tree's\n{dirs}"
    program = os.path.join(example_build, "single_pass_example")
    if os.path.isfile(program):
        rc, out = run([program], timeout=120)
        if rc == 77:
            print(f"note: no CUDA device here, so the example was built but not run ({out.strip()})")
        assert rc in (0, 77) and (rc == 0 or "No CUDA device" in out), \
            f"the example exits 0 (results right) or 77 with its no-device sentence\nexit {rc}\n{out}"


if __name__ == "__main__":
    if len(sys.argv) < 5:
        print(__doc__.strip())
        sys.exit(2)
    sys.exit(run_as_script(__file__, {"SOURCE_DIR": sys.argv[1], "BUILD_DIR": sys.argv[2],
                                      "CUDA_ARCHITECTURES": sys.argv[3], "GENERATOR": sys.argv[4],
                                      "CONFIGURE_ARGS": "|".join(sys.argv[5:])}))
