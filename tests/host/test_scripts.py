#!/usr/bin/env python3
"""The shell scripts and the scripts' output files, without building anything: the
build tools, package managers and the runner are stand-ins on PATH that record how
they were called, so every path through the scripts can be taken on any machine.

  scripts/test.sh      finds Catch2 and matplotlib; installs them with apt-get as root
                       or with passwordless sudo; else downloads them where the network
                       allows; else stops with one sentence (exit 2) naming what is
                       missing and the command that installs it, building nothing;
                       REDUCTION_NO_INSTALL=1 installs nothing; always configures with
                       the tests ON
  scripts/run_all.sh   never asks for the tests (AUTO), so it needs no test framework
  scripts/common.sh    configures every run; a failed configure leaves nothing that
                       breaks the next run; PRESET picks a preset and its directory
  scripts/run_doc_commands.py  refuses a bad --out or --timeout before running anything
  scripts/output_files.py      the checks and the writing the other scripts share

usage: python3 -m pytest tests/host/test_scripts.py
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT

import output_files  # noqa: E402  (scripts/ is on the path: conftest.py)

source_dir = str(ROOT)
scripts = os.path.join(source_dir, "scripts")



def write_exe(path, body):
    with open(path, "w") as f:
        f.write("#!/usr/bin/env bash\n" + body)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


REAL_PYTHON = sys.executable

# Stand-ins. State lives in $STATE: catch2_installed and matplotlib_installed say what is
# "installed"; configure_fails makes the project's configure fail; calls.log records calls.
FAKES = {
    "cmake": r'''
echo "cmake $*" >> "$STATE/calls.log"
if [ "$1" = --build ]; then
  mkdir -p "$2/reduction"
  printf '#!/bin/sh\necho "reduce: No CUDA device was found: this program needs an NVIDIA GPU and its driver." >&2\nexit 3\n' > "$2/reduction/reduce"
  chmod +x "$2/reduction/reduce"
  exit 0
fi
src="" build=""
while [ $# -gt 0 ]; do
  case "$1" in -S) src=$2; shift ;; -B) build=$2; shift ;; esac
  shift
done
if grep -qs catch2_probe "$src/CMakeLists.txt"; then
  [ -f "$STATE/catch2_installed" ]
  exit
fi
mkdir -p "$build/CMakeFiles"
echo "# cache" > "$build/CMakeCache.txt"
[ -f "$STATE/configure_fails" ] && exit 1
touch "$build/build.ninja"
exit 0
''',
    "ctest": 'echo "ctest $*" >> "$STATE/calls.log"\nexit 0\n',
    "apt-get": r'''
echo "apt-get $*" >> "$STATE/calls.log"
[ "${FAKE_APT_RC:-0}" = 0 ] || exit "$FAKE_APT_RC"
for p in "$@"; do
  case "$p" in catch2) touch "$STATE/catch2_installed" ;; python3-matplotlib) touch "$STATE/matplotlib_installed" ;; esac
done
exit 0
''',
    "id": '[ "$1" = -u ] && { echo "${FAKE_UID:-1000}"; exit 0; }\nexit 1\n',
    "sudo": r'''
echo "sudo $*" >> "$STATE/calls.log"
[ "${FAKE_SUDO_RC:-1}" = 0 ] || exit 1
[ "$1" = -n ] && shift
exec "$@"
''',
    "git": 'echo "git $*" >> "$STATE/calls.log"\nexit "${FAKE_NETWORK_RC:-1}"\n',
    "python3": rf'''
if [ "$1" = -c ] && [ "$2" = "import matplotlib" ]; then [ -f "$STATE/matplotlib_installed" ]; exit; fi
if [ "$1" = -c ] && [ "$2" = "import pandas" ] && [ -f "$STATE/pandas_missing" ]; then exit 1; fi
if [ "$1" = -c ] && [ "$2" = "import sys; print(sys.prefix)" ]; then echo "${{FAKE_PYTHON_PREFIX:-/usr}}"; exit 0; fi
if [ "$1" = -m ] && [ "$2" = pip ]; then
  echo "python3 $*" >> "$STATE/calls.log"
  [ "$3" = --version ] && exit 0
  [ "${{FAKE_NETWORK_RC:-1}}" = 0 ] && touch "$STATE/matplotlib_installed"
  exit "${{FAKE_NETWORK_RC:-1}}"
fi
exec "{REAL_PYTHON}" "$@"
''',
}


class Machine:
    """A scratch folder with the stand-ins on PATH, a state folder and a build folder."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="scripts_test.")
        self.bin = os.path.join(self.tmp, "bin")
        self.state = os.path.join(self.tmp, "state")
        self.build = os.path.join(self.tmp, "build")
        os.mkdir(self.bin)
        os.mkdir(self.state)
        for name, body in FAKES.items():
            write_exe(os.path.join(self.bin, name), body)

    def install(self, *what):
        for w in what:
            open(os.path.join(self.state, f"{w}_installed"), "w").close()

    def run(self, script, args=(), **env):
        e = {k: v for k, v in os.environ.items() if k not in ("BUILD_DIR", "CMAKE_ARGS", "PRESET", "JOBS",
                                                               "REDUCTION_NO_INSTALL")}
        e.update({"PATH": self.bin + os.pathsep + os.environ["PATH"], "STATE": self.state, "BUILD_DIR": self.build,
                  "JOBS": "1", "TMPDIR": self.tmp})
        e.update({k: str(v) for k, v in env.items()})
        p = subprocess.run(["bash", os.path.join(scripts, script), *args], capture_output=True, text=True, env=e,
                           timeout=120)
        return p.returncode, p.stdout, p.stderr

    def calls(self):
        path = os.path.join(self.state, "calls.log")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return f.read().splitlines()

    def configures(self):
        """The project's configure calls (not the Catch2 probes)."""
        return [c for c in self.calls() if c.startswith("cmake -S " + source_dir)]

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


# --- test.sh: what it finds, installs or refuses --------------------------------------
def test_test_sh_what_it_finds_installs_or_refuses():

    m = Machine()
    m.install("catch2", "matplotlib")
    rc, out, err = m.run("test.sh", ["-L", "host"])
    assert rc == 0, f"test.sh with everything installed: exit {rc}: {err.strip()}"
    assert not any(c.startswith(("apt-get", "sudo", "python3 -m pip")) for c in m.calls()), (
        f"test.sh installs nothing when nothing is missing: {m.calls()}")
    conf = m.configures()
    assert len(conf) == 1 and "-DREDUCTION_BUILD_TESTS=ON" in conf[0], f"test.sh configures with the tests ON: {conf}"
    assert "ctest --output-on-failure --no-tests=error -L host" in m.calls(), (f"test.sh runs ctest with its arguments: "
          f"{m.calls()}")
    m.close()

    m = Machine()
    rc, out, err = m.run("test.sh", FAKE_UID=0)
    assert rc == 0, f"test.sh as root with nothing installed: exit {rc}: {err.strip()}"
    assert ((any(c.startswith("apt-get update") for c in m.calls()) and
          any(c.startswith("apt-get install") and c.endswith("catch2 python3-matplotlib") for c in m.calls()))), f"test.sh as root installs catch2 and python3-matplotlib with apt-get: {m.calls()}"
    assert len(m.configures()) == 1 and "ctest --output-on-failure --no-tests=error" in m.calls(), (
        f"test.sh as root goes on to build and test: {m.calls()}")
    m.close()

    m = Machine()
    m.install("catch2")
    rc, out, err = m.run("test.sh", FAKE_SUDO_RC=0)
    assert ((rc == 0 and any(c.startswith("sudo env DEBIAN_FRONTEND=noninteractive apt-get install") and
                          c.endswith(" python3-matplotlib") and "catch2" not in c for c in m.calls()))), f"test.sh with passwordless sudo installs only what is missing: exit {rc}: {m.calls()}"
    m.close()

    m = Machine()
    rc, out, err = m.run("test.sh", FAKE_NETWORK_RC=0)
    conf = m.configures()
    assert rc == 0 and len(conf) == 1 and "-DREDUCTION_FETCH_CATCH2=ON" in conf[0], (
        f"test.sh without root but with a network has CMake download Catch2: exit {rc}: {m.calls()}")
    assert any(c.startswith("python3 -m pip install --user") and c.endswith("matplotlib") for c in m.calls()), (
        f"test.sh without root but with a network installs matplotlib with pip --user: {m.calls()}")
    assert not any(c.startswith("apt-get") for c in m.calls()), "test.sh without root or sudo does not run apt-get"
    m.close()


    def expect_stop(name, m, rc, err, *needles):
        lines = [line for line in err.splitlines() if line.strip()]
        assert rc == 2, f"{name}: exit {rc}, expected 2: {err.strip()}"
        assert len(lines) >= 1 and all(n in lines[-1] for n in needles), (
            f"{name}: the last line of stderr lacks {needles}: {err.strip()}")
        assert ((m.configures() == [] and not os.path.exists(m.build) and
              not any(c.startswith("ctest") for c in m.calls()))), f"{name}: nothing is configured, built or run"


    m = Machine()
    rc, out, err = m.run("test.sh", FAKE_UID=0, FAKE_NETWORK_RC=0, REDUCTION_NO_INSTALL=1)
    expect_stop("REDUCTION_NO_INSTALL=1 with nothing installed", m, rc, err, "Catch2 and matplotlib",
                "REDUCTION_NO_INSTALL is set", "sudo apt-get install catch2 python3-matplotlib",
                "run scripts/test.sh again")
    assert len([line for line in err.splitlines() if line.strip()]) == 1, f"REDUCTION_NO_INSTALL: one sentence: {err}"
    assert not any(c.startswith(("apt-get", "sudo", "git", "python3 -m pip install")) for c in m.calls()), (
        f"REDUCTION_NO_INSTALL=1 installs and downloads nothing: {m.calls()}")
    m.close()

    m = Machine()
    rc, out, err = m.run("test.sh")
    expect_stop("no root, no sudo, no network", m, rc, err, "Catch2 and matplotlib",
                "apt-get needs root or passwordless sudo; github.com cannot be reached to download Catch2; pip install "
                "--user matplotlib failed", "sudo apt-get install catch2 python3-matplotlib")
    m.close()

    m = Machine()
    rc, out, err = m.run("test.sh", FAKE_UID=0, FAKE_APT_RC=100)
    expect_stop("apt-get fails and there is no network", m, rc, err, "Catch2 and matplotlib",
                "apt-get install catch2 python3-matplotlib failed", "sudo apt-get install catch2 python3-matplotlib")
    m.close()

    # pandas (the docs generator's) is asked for like matplotlib: by its Debian name with apt-get.
    m = Machine()
    m.install("catch2", "matplotlib")
    open(os.path.join(m.state, "pandas_missing"), "w").close()
    rc, out, err = m.run("test.sh", FAKE_UID=0)
    assert any(c.startswith("apt-get install") and c.endswith(" python3-pandas") for c in m.calls()), (
        f"test.sh as root installs python3-pandas when pandas is missing: {m.calls()}")
    expect_stop("pandas still missing after apt-get, and no network", m, rc, err, "the tests need pandas (for",
                "sudo apt-get install python3-pandas")
    m.close()

    m = Machine()
    m.install("catch2")
    rc, out, err = m.run("test.sh", REDUCTION_NO_INSTALL=1)
    expect_stop("only matplotlib missing", m, rc, err, "the tests need matplotlib", "sudo apt-get install "
                "python3-matplotlib")
    assert "Catch2" not in err, f"only matplotlib missing: Catch2 is not named: {err.strip()}"
    m.close()

    # A python3 that is not the system's (pyenv, a virtual environment): Debian's package does
    # not serve it, so apt-get installs Catch2 only and matplotlib comes from pip.
    m = Machine()
    rc, out, err = m.run("test.sh", FAKE_UID=0, FAKE_PYTHON_PREFIX="/opt/python")
    assert any(c.startswith("apt-get install") and c.endswith(" catch2") for c in m.calls()), (
        f"another python3: apt-get installs catch2 alone: {m.calls()}")
    expect_stop("another python3 and no network", m, rc, err, "the tests need matplotlib (for ",
                "pip install --user matplotlib failed", "-m pip install matplotlib'")
    assert "Catch2" not in err.splitlines()[-1], f"another python3: Catch2 was installed and is not named: {err}"
    m.close()
    m = Machine()
    rc, out, err = m.run("test.sh", FAKE_UID=0, FAKE_PYTHON_PREFIX="/opt/python", FAKE_NETWORK_RC=0)
    assert rc == 0 and any(c.startswith("python3 -m pip install --user") for c in m.calls()), (
        f"another python3 with a network: pip installs matplotlib: exit {rc}: {m.calls()}")
    m.close()

# --- common.sh: configure every run; a failed configure breaks nothing ----------------
def test_common_sh_configure_every_run_a_failed_configure_b():

    m = Machine()
    m.install("catch2", "matplotlib")
    open(os.path.join(m.state, "configure_fails"), "w").close()
    rc, out, err = m.run("run_all.sh")
    assert rc != 0 and not os.path.exists(m.build), (f"a failed first configure removes the build directory it created: exit {rc}, exists "
          f"{os.path.exists(m.build)}")
    assert "configuring" in err and "afresh" in err, f"a failed configure says so: {err.strip()}"
    os.unlink(os.path.join(m.state, "configure_fails"))
    rc, out, err = m.run("run_all.sh", ["--n", "2^20"])
    assert rc == 3 and "No CUDA device" in err, f"the next run configures, builds and runs: exit {rc}: {err.strip()}"
    conf = m.configures()
    assert ((len(conf) == 2 and all("-DREDUCTION_BUILD_TESTS=AUTO" in c and "-DREDUCTION_BUILD_TESTS=ON" not in c
                                  for c in conf))), f"run_all.sh never asks for the tests (AUTO): {conf}"
    assert "-G Ninja" in conf[-1] or shutil.which("ninja") is None, f"a fresh directory picks the generator: {conf}"
    rc, out, err = m.run("run_all.sh")
    assert len(m.configures()) == 3 and "-G" not in m.configures()[-1], (
        f"an existing build directory is configured again (without a generator): {m.configures()}")
    m.close()

    m = Machine()
    os.makedirs(os.path.join(m.build, "CMakeFiles"))
    with open(os.path.join(m.build, "CMakeCache.txt"), "w") as f:
        f.write("# left by a configure that failed\n")
    with open(os.path.join(m.build, "keep.txt"), "w") as f:
        f.write("mine\n")
    rc, out, err = m.run("run_all.sh")
    assert rc == 3 and len(m.configures()) == 1 and "-G Ninja" in m.configures()[0] or shutil.which("ninja") is None, (
        f"a cache without a build system (an old failed configure) is configured afresh: exit {rc} {m.calls()}")
    assert os.path.exists(os.path.join(m.build, "keep.txt")), "configuring afresh removes only CMake's own files"
    open(os.path.join(m.state, "configure_fails"), "w").close()
    rc, out, err = m.run("run_all.sh")
    assert ((rc != 0 and os.path.exists(os.path.join(m.build, "build.ninja")) and
          os.path.exists(os.path.join(m.build, "keep.txt")))), "a failed reconfigure of a working build directory keeps it (the next run configures again)"
    m.close()

    # PRESET: the preset's directory, or one sentence naming the presets there are.
    env = {k: v for k, v in os.environ.items() if k not in ("BUILD_DIR", "PRESET")}
    p = subprocess.run(["bash", "-c", f'source "{scripts}/common.sh"; PRESET=ci build_dir'], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0 and p.stdout.strip() == os.path.join(source_dir, "build-ci"), (
        f"PRESET=ci builds in the ci preset's directory: {p.stdout.strip()!r} {p.stderr.strip()!r}")
    p = subprocess.run(["bash", "-c", f'source "{scripts}/common.sh"; PRESET=debug build_dir'], capture_output=True,
                       text=True, env=env)
    assert p.stdout.strip() == os.path.join(source_dir, "build-debug"), f"PRESET=debug: {p.stdout.strip()!r}"
    m = Machine()
    m.install("catch2", "matplotlib")
    rc, out, err = m.run("test.sh", PRESET="ci")
    assert ((rc == 0 and len(m.configures()) == 1 and "--preset ci" in m.configures()[0] and
          f"-B {m.build}" in m.configures()[0])), f"PRESET=ci configures through the preset: {m.calls()}"
    rc, out, err = m.run("test.sh", PRESET="nosuch")
    assert rc != 0 and "PRESET 'nosuch' is not a configure preset" in err and "ci" in err, (
        f"an unknown PRESET is named: exit {rc}: {err.strip()}")
    m.close()

# --- run_doc_commands.py: refusals before anything runs ---------------------------------
def test_run_doc_commands_py_refusals_before_anything_runs():

    with tempfile.TemporaryDirectory() as tmp:
        for args, needle in [(["--out", tmp], "is a directory"), (["--out", os.path.join(tmp, "no", "r.txt")],
                                                                   "does not exist"),
                             (["--timeout", "-1"], "--timeout '-1'"), (["--timeout", "nan"], "--timeout 'nan'"),
                             (["--timeout", "inf"], "--timeout 'inf'"), (["--timeout", "0"], "--timeout '0'"),
                             (["--check-programs", os.path.join(tmp, "nobuild")], "is not a directory")]:
            p = subprocess.run([sys.executable, os.path.join(scripts, "run_doc_commands.py"), *args],
                               capture_output=True, text=True, timeout=60)
            assert p.returncode == 2 and needle in p.stderr and p.stdout == "" and len(p.stderr.splitlines()) == 1, (f"run_doc_commands.py {args}: exit {p.returncode}, stdout {p.stdout[:200]!r}, "
                  f"stderr {p.stderr.strip()!r}")

# --- output_files.py --------------------------------------------------------------------
def test_output_files_py():

    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "sub"))
        locked = os.path.join(tmp, "locked.csv")
        with open(locked, "w") as f:
            f.write("keep\n")
        os.chmod(locked, stat.S_IRUSR)
        for path, needle in [("", "is not a file name"), (tmp, "is a directory"), ("/dev/null", "not a regular file"),
                             (locked, "is a read-only file"), (os.path.join(tmp, "no", "x"), "does not exist"),
                             (os.path.join(tmp, "x/"), "ends in '/'")]:
            assert needle in output_files.problem(path, "--out"), f"output_files.problem({path!r}) lacks {needle!r}"
        assert output_files.problem(os.path.join(tmp, "fine.csv"), "--out") == "", "a new file in a folder is fine"
        assert ((output_files.directory_problem(locked, "--out").endswith("is not a directory: give a directory to write "
                                                                       "the files in."))), "a file is not a directory"
        assert ((output_files.directory_problem(os.path.join(tmp, "new", "deeper"), "--out") == "" and
              not os.path.exists(os.path.join(tmp, "new")))), "a folder to create is fine, and checking creates nothing"
        target = os.path.join(tmp, "sub", "out.csv")
        with open(target + ".tmp", "w") as f:
            f.write("mine\n")
        output_files.write(target, "a,b\n")
        output_files.write(target, b"c,d\n")
        with open(target) as f:
            assert f.read() == "c,d\n", "write() replaces the file whole"
        with open(target + ".tmp") as f:
            assert f.read() == "mine\n", "write() leaves FILE.tmp alone"
        assert sorted(os.listdir(os.path.join(tmp, "sub"))) == ["out.csv", "out.csv.tmp"], "write() leaves nothing else"
        assert stat.S_IMODE(os.stat(target).st_mode) & 0o044 == 0o044 or os.umask(os.umask(0)) & 0o044, (
            "a new file is readable as a new file would be (not mkstemp's 0600)")


if __name__ == "__main__":  # python3 tests/host/test_scripts.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
