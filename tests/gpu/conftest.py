"""pytest's set-up for the GPU test written in Python (test_multi_gpu_mpi.py): the host
tests' helpers (env_arg, run_as_script) and their hooks, so that a file whose tests all
skip exits 77 here too (tests/host/conftest.py)."""
import importlib.util
import sys
from pathlib import Path

HOST = Path(__file__).resolve().parents[1] / "host"
sys.path.insert(0, str(HOST))  # host_tools
_spec = importlib.util.spec_from_file_location("host_conftest", HOST / "conftest.py")
_host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_host)

env_arg = _host.env_arg
run_as_script = _host.run_as_script
pytest_runtest_logreport = _host.pytest_runtest_logreport
pytest_sessionfinish = _host.pytest_sessionfinish
