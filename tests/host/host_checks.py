"""What the host test scripts share: check() counts a passed check or records a failure
(fail() records one directly), and finish() prints the count and every failure, then
exits 1 if there was one, else 0; load_script() imports one of scripts/*.py as a module
and run_script() runs it as a program."""
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

failures = []
_passed = [0]


def check(cond, what):
    if cond:
        _passed[0] += 1
    else:
        failures.append(what)


def named_check(name, ok, detail=""):
    """check() with the failure written as "name: detail"."""
    check(ok, f"{name}" + (f": {detail}" if detail and not ok else ""))


def passed():
    return _passed[0]


def fail(what):
    failures.append(what)


def finish():
    print(f"{_passed[0]} checks passed, {len(failures)} failed")
    for f in failures:
        print("FAILED:", f)
    sys.exit(1 if failures else 0)


def load_script(path: Path, name: str):
    """scripts/NAME.py imported as module `name` (registered in sys.modules, where
    dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_script(path: Path, *args, timeout: int = 300):
    """The script run with this Python: (exit code, stdout, stderr)."""
    p = subprocess.run([sys.executable, str(path), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def gpus_present():
    """The GPUs CUDA will see: nvidia-smi's, narrowed by CUDA_VISIBLE_DEVICES when it is set."""
    if shutil.which("nvidia-smi") is None:
        return 0
    r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    found = len([x for x in r.stdout.splitlines() if x.startswith("GPU ")]) if r.returncode == 0 else 0
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        found = min(found, len([x for x in visible.split(",") if x.strip()]))
    return found
