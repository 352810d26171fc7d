#!/usr/bin/env python3
"""scripts/time_torch_cupy.py without torch, cupy or a GPU: its refusals (exit 2, one
sentence naming the value, no file written), its inputs and references against the
runner's committed sweep, its check and repetition plan, and its CSV against the
runner's format (results/h200/sweep.csv's columns and metadata keys).

usage: python3 -m pytest tests/host/test_torch_cupy_script.py
"""
import csv
import io
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

import time_torch_cupy as t  # noqa: E402  (scripts/ is on the path: conftest.py)

SCRIPT = ROOT / "scripts" / "time_torch_cupy.py"
SWEEP = (ROOT / "results" / "h200" / "sweep.csv").read_text(encoding="utf-8")


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_help():
    r = run("--help")
    assert r.returncode == 0 and "--sweep" in r.stdout and "--csv" in r.stdout


@pytest.mark.parametrize("args, named", [
    (["--n", "0"], "'0'"),
    (["--n", "1e6"], "'1e6'"),
    (["--n", "16k"], "'16k'"),
    (["--n", "-5"], "'-5'"),
    (["--n", "2^41"], "'2^41'"),
    (["--n", "6B"], "'6B'"),
    (["--sweep", "2^30:2^10"], "'2^30:2^10'"),
    (["--sweep", "2^10"], "'2^10'"),
    (["--sweep", "2^10:2^20:1"], "'1'"),
    (["--n", "2^20", "--sweep", "2^10:2^12"], "--n and --sweep"),
    (["--libs", "numpy"], "'numpy'"),
    (["--libs", ""], "''"),
    (["--reps", "0"], "'0'"),
    (["--reps", "5", "--min-reps", "10"], "--min-reps 10"),
    (["--budget-ms", "fast"], "'fast'"),
    (["--device", "-1"], "'-1'"),
    (["--bogus"], "'--bogus'"),
    (["--n"], "--n needs a value"),
    (["--warm-l2=yes"], "--warm-l2"),
    (["--csv", "{work}/missing/x.csv"], "does not exist"),
    (["--csv", "{work}"], "is a directory"),
])
def test_refusals(tmp_path, args, named):
    """Exit 2, one line on stderr naming the value, nothing written."""
    out = tmp_path / "out.csv"
    r = run("--csv", str(out), *[a.format(work=tmp_path) for a in args])
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and named in lines[0], r.stderr
    assert list(tmp_path.iterdir()) == [], "a refusal wrote a file"


def test_number_forms():
    """The forms the runner accepts."""
    assert [t.parse_count(x, "--n") for x in ("16777216", "2^24", "16M", "64MiB")] == [1 << 24] * 4
    assert t.parse_sweep("2^10:2^30") == [1 << k for k in range(10, 31)]
    assert t.parse_sweep("1K:1M:4") == [1 << k for k in range(10, 21, 2)]
    assert t.format_count(1 << 24) == "2^24" and t.format_count(1000) == "1000"


@pytest.mark.parametrize("name", ["torch", "cupy"])
def test_missing_library_is_skipped_with_a_sentence(tmp_path, monkeypatch, name):
    (tmp_path / f"{name}.py").write_text(f"raise ImportError('no module named {name} here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    lib, why = t.load_library(name, 0)
    assert lib is None and why.startswith(f"{name} is not installed") and f"{name}.sum is not timed" in why


def test_no_gpu_exits_3(tmp_path):
    if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0:
        pytest.skip("a GPU is present: the no-GPU refusal is checked on machines without one")
    out = tmp_path / "out.csv"
    r = run("--n", "2^10", "--csv", str(out))
    assert r.returncode == 3 and "CUDA" in r.stderr and not out.exists(), r.stderr


def sweep_rows():
    return list(csv.DictReader(line for line in SWEEP.splitlines() if not line.startswith("#")))


def test_inputs_and_references_are_the_runners():
    """The committed sweep's reference column, from the same inputs."""
    seed = int(next(line.split(":", 1)[1] for line in SWEEP.splitlines() if line.startswith("# seed:")))
    runner = {int(float(r["n"])): float(r["reference"]) for r in sweep_rows() if int(float(r["n"])) <= 1 << 22}
    assert len(runner) >= 5, f"the sweep has only {len(runner)} sizes up to 2^22"
    refs = t.prefix_references(t.uniform_inputs(seed, max(runner)), list(runner))
    for n, ref in runner.items():
        assert abs(refs[n][0] - ref) <= 1e-9 * abs(ref), f"reference at n={n}: {refs[n][0]!r}, runner {ref!r}"
        assert abs(refs[n][1] - refs[n][0]) <= 1e-9 * ref, f"sum |x| at n={n} differs from the sum of >= 0 inputs"


def test_check():
    """Within the bound passes, far outside fails, a NaN result fails."""
    n = 1 << 20
    s, a = t.prefix_references(t.uniform_inputs(1, n), [n])[n]
    verdict, abs_err, _, tol, _ = t.check(s * (1 + 1e-7), s, a, n)
    assert verdict == "ok" and tol > abs_err
    assert t.check(s * 1.01, s, a, n)[0] == "FAIL"
    assert t.check(float("nan"), s, a, n)[0] == "FAIL"
    assert t.blocked_depth(1 << 20, 128) == (1 << 13) + 7


def test_repetition_plan():
    """common/timing.cpp's plan."""
    assert t.planned_repetitions(1.0, 100, 3, 1000) == 100
    assert t.planned_repetitions(50.0, 100, 3, 1000) == 20
    assert t.planned_repetitions(5000.0, 100, 3, 1000) == 3
    assert t.median([3.0, 1.0, 2.0]) == 2.0 and t.median([4.0, 1.0, 2.0, 3.0]) == 2.5


def test_csv_is_the_runners_format(tmp_path):
    """The runner's header row exactly, its metadata keys in its order, parseable, written whole."""
    sweep_meta = [line[2:].split(":", 1)[0] for line in SWEEP.splitlines() if line.startswith("# ")]
    header = next(line for line in SWEEP.splitlines() if not line.startswith("#"))
    meta = [(k, "v") for k in sweep_meta] + [("torch_version", "2.0, test")]
    rec = t.make_record(1 << 10, "torch_sum", 'torch.sum ("x", 2.0)', "100", [3.0, 1.0, 2.0], 1.5, 1.5, "ok",
                        (0.0, 0.0, 1e-3), 4000.0)
    text = t.to_csv(meta, [rec])
    lines = text.splitlines()
    assert lines[:len(sweep_meta)] == [f"# {k}: v" for k in sweep_meta]
    assert lines[len(meta)] == header
    row = next(csv.DictReader(io.StringIO("\n".join(lines[len(meta):]))))
    assert row["stage"] == 'torch.sum ("x", 2.0)' and row["kind"] == "peer"
    assert (row["median_us"], row["min_us"], row["max_us"]) == ("2", "1", "3")
    assert row["gbs"] == format(4096 / 2e-6 / 1e9, ".10g")
    assert row["vs_cub"] == "" and row["grid"] == ""
    target = tmp_path / "peers.csv"
    t.output_files.write(str(target), text)
    assert target.read_text(encoding="utf-8") == text
    assert os.listdir(tmp_path) == ["peers.csv"], "temporary files left"


if __name__ == "__main__":  # python3 tests/host/test_torch_cupy_script.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
