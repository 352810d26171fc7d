#!/usr/bin/env python3
"""scripts/time_torch_histogram.py without torch or a GPU: its refusals (exit 2, one
sentence, nothing written), its inputs against the runner's (checksums of
histogram::make_values' bytes, seed 1, n = 1000003), its count check, and its CSV
columns against the ones histogram/runner.cpp writes, in the same order.

usage: SOURCE_DIR=REPOSITORY python3 -m pytest tests/host/test_torch_histogram_script.py
   or: test_torch_histogram_script.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys

import pytest

from conftest import env_arg, run_as_script


@pytest.fixture(scope="module")
def root():
    return os.path.abspath(env_arg("SOURCE_DIR", "the repository"))


@pytest.fixture(scope="module")
def t(root):
    sys.path.insert(0, os.path.join(root, "scripts"))
    import time_torch_histogram
    return time_torch_histogram


REFUSED = (["--input", "zipf"], ["--n", "0"], ["--n", "2^32"], ["--sweep", "2^10:2^33"], ["--reps", "0"],
           ["--n", "5", "--sweep", "2^10:2^12"], ["--bins", "256"], ["--csv", "{tmp}/no/x.csv"],
           ["--min-reps", "9", "--reps", "3"], ["--n"])


@pytest.mark.parametrize("args", REFUSED, ids=[" ".join(a) for a in REFUSED])
def test_refusal(root, args, tmp_path):
    script = os.path.join(root, "scripts", "time_torch_histogram.py")
    target = str(tmp_path / "out.csv")
    args = [a.format(tmp=tmp_path) for a in args]
    r = subprocess.run([sys.executable, script, *args, "--csv", target] if "--csv" not in args else
                       [sys.executable, script, *args], capture_output=True, text=True)
    assert r.returncode == 2, f"{args}: exit {r.returncode}, not 2"
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("time_torch_histogram.py: "), \
        f"{args}: not one sentence: {r.stderr!r}"
    assert not os.path.exists(target), f"{args}: wrote {target}"


def test_help(root):
    r = subprocess.run([sys.executable, os.path.join(root, "scripts", "time_torch_histogram.py"), "--help"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "--input LIST" in r.stdout, "--help"


# The runner's bytes (checksum: s = s * 31 + byte, modulo 2^64, over the bytes in order).
GOLDEN = {"uniform": (13351787628373693680, 198, 249), "skewed": (5764243044785949142, 0, 0),
          "one": (1582211350201678570, 42, 42)}


@pytest.mark.parametrize("kind", GOLDEN)
def test_inputs_match_the_runner(t, kind):
    checksum, b0, b1 = GOLDEN[kind]
    v = t.make_bytes(kind, 1, 1000003)
    s = 0
    for x in v.tolist():
        s = (s * 31 + x) % (1 << 64)
    assert s == checksum and v[0] == b0 and v[1] == b1, f"{kind}: the bytes differ from histogram::make_values'"
    assert (t.make_bytes(kind, 1, 1000)[:] == v[:1000]).all(), f"{kind}: a shorter input is not a prefix"


def test_count_check(t):
    assert t.first_difference([1, 2, 3], [1, 2, 3]) == "", "equal counts pass"
    assert t.first_difference([1, 5, 4], [1, 2, 3]) == "bin 1 holds 5 instead of 2; 2 of 3 bins wrong", \
        "first wrong bin"
    assert t.first_difference([1, 2], [1, 2, 3]) != "", "a short histogram fails"


def test_columns_match_the_runner(root, t):
    runner = open(os.path.join(root, "histogram", "runner.cpp"), encoding="utf-8").read()
    body = runner[runner.index("common::Record rec = {"):runner.index("if (r.stage->kind == Kind::stage) t_prev = us;")]
    keys = re.findall(r'(?:number|text)_field\(\s*"(\w+)"', body)
    timing = ["reps", "median_us", "min_us", "max_us"]  # common::timing_fields, appended after "block"
    keys = keys[:keys.index("block") + 1] + timing + keys[keys.index("block") + 1:]
    assert tuple(keys) == t.COLUMNS, f"columns differ from the runner's: {keys} vs {list(t.COLUMNS)}"
    csv = t.to_csv([("device", "Test")], [dict({c: None for c in t.COLUMNS}, key="torch", check="ok")])
    assert csv.splitlines()[1] == ",".join(t.COLUMNS), "the CSV's header"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip())
        sys.exit(2)
    sys.exit(run_as_script(__file__, {"SOURCE_DIR": sys.argv[1]}))
