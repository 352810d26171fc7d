"""What several host tests share: load_script() imports one of scripts/*.py as a module,
run_script() runs it as a program, gpus_present() counts the GPUs CUDA sees, and the
checks of a program's command line (expect, one_sentence, refusal_problems)."""
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path


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


def detail(text) -> str:
    """': TEXT' for an assertion's message when TEXT says something, else nothing."""
    return f": {text}" if str(text) else ""


def expect(problems, label, ok, detail):
    """Adds '`label`: `detail`' to `problems` unless `ok`: a test gathers every problem
    before it fails, so one run names them all."""
    if not ok:
        problems.append(f"{label}: {detail}")


def one_sentence(name, err):
    """One line on stderr, naming the program, ending with a full stop."""
    lines = err.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith(f"{name}: ") and lines[0].rstrip().endswith(".")


def refusal_problems(result, code, needle, stderr_lines=None):
    """What keeps `result` (a finished subprocess.run) from being a refusal: exit `code`,
    one line on stderr naming `needle` (one of `stderr_lines` when given: the program's own
    among a launcher's), and nothing on stdout. The empty list when it is one."""
    lines = stderr_lines if stderr_lines is not None else [x for x in result.stderr.splitlines() if x.strip()]
    problems = []
    if result.returncode != code:
        problems.append(f"exit {result.returncode}, expected {code}")
    if len(lines) != 1 or needle not in lines[0]:
        problems.append(f"expected one line naming {needle!r}")
    if result.stdout:
        problems.append(f"stdout not empty: {result.stdout[:200]!r}")
    return problems
