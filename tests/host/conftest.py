"""pytest's set-up for the host tests written for it. ctest runs each such file on its own:

    python3 -m pytest -q -rs -p no:cacheprovider tests/host/test_NAME.py [--build-dir DIR]

The repository is the one holding this folder; --build-dir names the build tree for
the tests that run its programs (the `build_dir` fixture; a test asking for it without
the option fails, saying so). The tests that take programs or folders from CMake read
them from the environment (env_arg(); CMake runs them through `cmake -E env NAME=VALUE`),
and each such file still runs as a script with its former arguments (run_as_script()).

A file whose tests all skip would exit 0 under pytest, a pass; a file that sets
SKIPPED_EXIT_CODE = 77 exits 77 instead, which ctest reports as Skipped (SKIP_RETURN_CODE)."""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))  # the scripts import each other by name, as when run


def pytest_addoption(parser):
    parser.addoption("--build-dir", default=None, help="the build tree (for the tests that run its programs)")


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def build_dir(request) -> Path:
    value = request.config.getoption("--build-dir")
    if not value:
        pytest.fail("this test runs the built programs: give --build-dir DIR")
    return Path(value).resolve()



def env_arg(name: str, what: str) -> str:
    """The environment variable NAME (a program or folder CMake hands the test); without
    it the test fails, saying what to give."""
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"this test needs {name}={what} in the environment", pytrace=False)
    return value


def run_as_script(path: str, env: dict) -> int:
    """A test file run as a script: its arguments, mapped to `env`, go to pytest as the
    environment, and pytest runs the file as ctest does."""
    os.environ.update({k: str(v) for k, v in env.items()})
    return int(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", str(path)]))


_outcomes = {"passed": 0, "failed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        _outcomes[report.outcome] = _outcomes.get(report.outcome, 0) + 1


def pytest_sessionfinish(session, exitstatus):
    opted_in = any(getattr(getattr(item, "module", None), "SKIPPED_EXIT_CODE", None) == 77
                   for item in getattr(session, "items", []))
    if opted_in and exitstatus == 0 and _outcomes["skipped"] and not _outcomes["passed"] and not _outcomes["failed"]:
        session.exitstatus = 77
