#!/usr/bin/env python3
"""scripts/compare_bits.py: equal sums pass, one differing bit fails, different inputs are
refused; and the committed H200 and H100 sweeps give stage 16 the same bits wherever both
hold it (skipped, and said so, while results/h100/sweep.csv does not exist).

usage: python3 -m pytest tests/host/test_compare_bits.py
"""
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "compare_bits.py"
HEADER = "n,key,result\n"


def write(folder: Path, name: str, seed: str, rows: list[tuple[int, str, str]]) -> Path:
    path = folder / name
    lines = [f"# device: GPU {name}", "# pattern: uniform", f"# seed: {seed}", HEADER.strip()]
    lines += [f"{n},{k},{r}" for n, k, r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def a(tmp_path):
    return write(tmp_path, "a.csv", "1", [(1024, "16", "510.3042603"), (2048, "16", "1032.22583"), (2048, "cub", "1.0")])


def test_equal_sums(tmp_path, a):
    r = run(a, write(tmp_path, "same.csv", "1", [(1024, "16", "510.3042603"), (2048, "16", "1032.22583")]))
    assert r.returncode == 0 and "2 of 2 sizes give the same bits" in r.stdout, r.stdout + r.stderr


def test_one_ulp_apart(tmp_path, a):
    # 1032.2259 is the next float up from 1032.22583 (one unit in the last place).
    r = run(a, write(tmp_path, "other.csv", "1", [(1024, "16", "510.3042603"), (2048, "16", "1032.225952")]))
    assert r.returncode == 1 and " NO" in r.stdout, r.stdout + r.stderr


def test_refusals(tmp_path, a):
    r = run(a, write(tmp_path, "seed2.csv", "2", [(1024, "16", "510.3042603")]))
    assert r.returncode == 2, "different seeds: " + r.stdout + r.stderr
    r = run(a, tmp_path / "missing.csv")
    assert r.returncode == 2, "a missing file: " + r.stdout + r.stderr


def test_stage_16_on_the_h200_and_the_h100():
    h200, h100 = ROOT / "results/h200/sweep.csv", ROOT / "results/h100/sweep.csv"
    if not h100.exists():
        pytest.skip(f"{h100.relative_to(ROOT)} does not exist yet: the cross-GPU check of the committed sweeps")
    r = run(h200, h100, "--key", "16")
    assert r.returncode == 0, r.stdout + r.stderr


if __name__ == "__main__":  # python3 tests/host/test_compare_bits.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
