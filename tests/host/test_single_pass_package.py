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
CUDA_ARCHITECTURES is the parent build's list with commas for semicolons; the -D
arguments (compiler, launcher, make program) are passed to every configure.
Prints one line per check and exits 1 on any failure.
"""
import filecmp
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

source_dir, build_dir, archs, generator = (os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]),
                                           sys.argv[3].replace(",", ";"), sys.argv[4])
extra = [a for a in sys.argv[5:] if a.split("=", 1)[-1] != ""]
PACKAGE = "reduction_single_pass"
failures = []
passed = 0


def check(cond, what, detail=""):
    global passed
    if cond:
        passed += 1
        print(f"ok: {what}")
    else:
        failures.append(what)
        print(f"FAIL: {what}" + (f"\n{detail}" if detail else ""))


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


work = tempfile.mkdtemp(prefix="single_pass_package.")
try:
    prefix = os.path.join(work, "prefix")
    # 1. The install.
    rc, out = run(["cmake", "--install", build_dir, "--prefix", prefix, "--component", "single_pass"])
    check(rc == 0, "cmake --install --component single_pass exits 0", out)
    for name in ("single_pass.cuh", "workspace_layout.hpp"):
        header = os.path.join(prefix, "include", "reduction", name)
        check(os.path.isfile(header) and filecmp.cmp(header, os.path.join(source_dir, "single_pass", name),
                                                     shallow=False),
              f"the installed include/reduction/{name} is the source's header")
    package_dir = None
    for libdir in ("lib", "lib64"):
        candidate = os.path.join(prefix, libdir, "cmake", PACKAGE)
        if os.path.isdir(candidate):
            package_dir = candidate
    expected = {f"{PACKAGE}Config.cmake", f"{PACKAGE}ConfigVersion.cmake", f"{PACKAGE}Targets.cmake"}
    found = set(os.listdir(package_dir)) if package_dir else set()
    check(expected <= found, f"the package files are installed under lib/cmake/{PACKAGE}",
          f"found {sorted(found)} in {package_dir}")

    common = ["-G", generator, f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON"] + extra

    # 2. find_package from a C++-only project: the target, its link to the CUDA runtime,
    # and the version check.
    def probe(version):
        probe_dir = os.path.join(work, f"probe-{version}")
        os.makedirs(probe_dir)
        with open(os.path.join(probe_dir, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write("cmake_minimum_required(VERSION 3.24)\nproject(probe LANGUAGES CXX)\n"
                    f"find_package({PACKAGE} {version} CONFIG REQUIRED)\n"
                    "get_target_property(libs reduction::single_pass INTERFACE_LINK_LIBRARIES)\n"
                    "if(NOT TARGET CUDA::cudart OR NOT \"CUDA::cudart\" IN_LIST libs)\n"
                    "  message(FATAL_ERROR \"reduction::single_pass does not bring CUDA::cudart: ${libs}\")\n"
                    "endif()\nmessage(STATUS \"probe found ${" + PACKAGE + "_VERSION} at ${" + PACKAGE + "_DIR}\")\n")
        return run(["cmake", "-S", probe_dir, "-B", os.path.join(probe_dir, "build")] + common)

    rc, out = probe("0.1")
    check(rc == 0 and f"probe found 0.1.0 at {package_dir}" in out,
          "find_package(reduction_single_pass 0.1 CONFIG REQUIRED) finds the installed 0.1.0 with CUDA::cudart", out)
    rc, out = probe("1.0")
    check(rc != 0 and "0.1.0" in out, "find_package(reduction_single_pass 1.0 ...) is refused (0.1.0 installed)", out)

    # 3. The example as an outside project.
    example_build = os.path.join(work, "example")
    rc, out = run(["cmake", "-S", os.path.join(source_dir, "single_pass", "example"), "-B", example_build,
                   f"-DCMAKE_CUDA_ARCHITECTURES={archs}", "-DCMAKE_BUILD_TYPE=Release",
                   "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"] + common)
    check(rc == 0, "single_pass/example configures as an outside project", out)
    if rc == 0:
        found_at = cache_value(example_build, f"{PACKAGE}_DIR")
        check(found_at is not None and os.path.realpath(found_at) == os.path.realpath(package_dir),
              "the example found the installed package", f"{PACKAGE}_DIR = {found_at}")
        rc, out = run(["cmake", "--build", example_build])
        check(rc == 0, "the example builds against the installed package", out)
        with open(os.path.join(example_build, "compile_commands.json"), encoding="utf-8") as f:
            commands = [c for c in json.load(f) if c["file"].endswith("main.cu")]
        dirs = include_dirs(commands[0]["command"]) if commands else []
        installed = os.path.normpath(os.path.join(prefix, "include", "reduction"))
        in_tree = os.path.normpath(os.path.join(source_dir, "single_pass"))
        check(installed in dirs and in_tree not in dirs,
              "main.cu is compiled with the installed include directory, not the source tree's", f"{dirs}")
        program = os.path.join(example_build, "single_pass_example")
        if rc == 0 and os.path.isfile(program):
            rc, out = run([program], timeout=120)
            if rc == 77:
                print(f"note: no CUDA device here, so the example was built but not run ({out.strip()})")
            check(rc in (0, 77) and (rc == 0 or "No CUDA device" in out),
                  "the example exits 0 (results right) or 77 with its no-device sentence", f"exit {rc}\n{out}")
finally:
    shutil.rmtree(work, ignore_errors=True)

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
