"""pytest's set-up for the host tests written for it. ctest runs each such file on its own:

    python3 -m pytest -q -rs -p no:cacheprovider tests/host/test_NAME.py [--build-dir DIR]

The repository is the one holding this folder; --build-dir names the build tree for
the tests that run its programs (the `build_dir` fixture; a test asking for it without
the option fails, saying so)."""
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


@pytest.fixture(autouse=True)
def no_failed_checks():
    """The tests that count their checks with host_checks.check() fail under pytest when a
    check failed during them, naming every failed check."""
    import host_checks

    before = len(host_checks.failures)
    yield
    new = host_checks.failures[before:]
    del host_checks.failures[before:]
    assert not new, "failed checks:\n" + "\n".join(new)
