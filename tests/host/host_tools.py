"""What several host tests share: load_script() imports one of scripts/*.py as a module,
run_script() runs it as a program, gpus_present() counts the GPUs CUDA sees."""
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
