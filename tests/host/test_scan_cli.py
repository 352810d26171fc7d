#!/usr/bin/env python3
"""The scan runner's and scripts/time_torch_scan.py's command lines end to end: --help,
--list, and every bad input refused with one sentence and exit code 2 before a GPU is
looked for, leaving no file; a good command exits 3 on a machine without a GPU (0 with
one). Then the torch script's check of int and float scans (with numpy, when installed).

usage: SCAN_BIN=PATH/TO/scan TORCH_SCAN=PATH/TO/time_torch_scan.py python3 -m pytest tests/host/test_scan_cli.py
   or: test_scan_cli.py PATH/TO/scan PATH/TO/time_torch_scan.py
"""
import os
import subprocess
import sys

import pytest

from conftest import env_arg, run_as_script


def scan_bin():
    return env_arg("SCAN_BIN", "PATH/TO/scan")


def torch_script():
    return env_arg("TORCH_SCAN", "PATH/TO/scripts/time_torch_scan.py")


def expect(cmd, code, *needles, out_needles=(), absent=()):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    rc, out, err = p.returncode, p.stdout, p.stderr
    problems = []
    if rc != code and not (code == 3 and rc == 0):  # 0: a GPU was found and every row passed
        problems.append(f"exit code {rc}, expected {code}")
    for needle in needles if not (code == 3 and rc == 0) else ():  # with a GPU there is no refusal
        if needle not in err:
            problems.append(f"stderr lacks {needle!r}")
    for needle in out_needles:
        if needle not in out:
            problems.append(f"stdout lacks {needle!r}")
    for needle in absent:
        if needle in out:
            problems.append(f"stdout has {needle!r}")
    if code == 2 and len([line for line in err.splitlines() if line.strip()]) != 1:
        problems.append("expected one line on stderr")
    assert not problems, " ".join(cmd[-6:]) + ": " + "; ".join(problems) + f"\n    stderr: {err.strip()[:300]}"


def test_scan_help_and_list():
    s = [scan_bin()]
    expect(s + ["--help"], 0, out_needles=("--type", "--kind", "--stages", "--sweep", "--csv", "Exit codes"))
    expect(s + ["--list"], 0,
           out_needles=("01\tblock_scan", "05\tvector_lookback", "06\tprefetch_lookback", "cub_inclusive", "copy"),
           absent=("cub_exclusive",))
    expect(s + ["--list", "--kind", "exclusive", "--stages", "4-5"], 0,
           out_needles=("04\tdecoupled_lookback", "cub_exclusive", "copy"), absent=("cub_inclusive", "03\t"))
    expect(s + ["--list", "--stages", "6", "--bounds"], 0,
           out_needles=("06\tprefetch_lookback", "copy_stream\t", "copy_tiles\t", "phases_tiles\t", "scan/bounds.cu"))
    expect(s + ["--list"], 0, absent=("copy_tiles", "phases_tiles", "copy_stream"))


SCAN_REFUSALS = [
    (["--n", "0"], "--n"),
    (["--n", "2^32"], "--n"),
    (["--n", "1000,"], ""),  # an empty item is dropped: a valid command
    (["--n", ","], "gives no size"),
    (["--sweep", "2^10:2^32"], "2^31"),
    (["--n", "5", "--sweep", "2^10:2^12"], "cannot be combined"),
    (["--type", "double"], "--type"),
    (["--kind", "both"], "--kind"),
    (["--stages", "7"], "unknown stage"),
    (["--stages", "copy_tiles"], "unknown stage"),  # a bound is asked for with --bounds
    (["--stages", "5-3"], "range"),
    (["--stages", "cub_exclusive"], "cub_exclusive computes exclusive"),
    (["--kind", "exclusive", "--stages", "cub_inclusive"], "inclusive sums only"),
    (["--reps", "0"], "--reps"),
    (["--csv", "{tmp}/missing/x.csv"], "--csv"),
    (["--run-once", "--sweep", "2^10:2^12"], "--run-once"),
    (["--run-once", "--csv", "{csv}"], "--run-once"),
    (["--bogus"], "--bogus"),
]


@pytest.mark.parametrize("args, needle", SCAN_REFUSALS, ids=[" ".join(a) for a, _ in SCAN_REFUSALS])
def test_scan_refusal(args, needle, tmp_path):
    csv = str(tmp_path / "scan.csv")
    args = [a.format(tmp=tmp_path, csv=csv) for a in args]
    expect([scan_bin()] + args + (["--csv", csv] if "--csv" not in args and "--run-once" not in args else []),
           3 if needle == "" else 2, needle)
    assert not (os.path.exists(csv) and needle), f"scan {' '.join(args)} left {csv} behind"


def test_scan_without_gpu():
    expect([scan_bin(), "--n", "1000", "--type", "float", "--kind", "exclusive"], 3, "GPU")


TORCH_REFUSALS = [
    (["--n", "0"], "--n"),
    (["--n", "2^32"], "--n"),
    (["--types", "double"], "--types"),
    (["--n", "5", "--sweep", "2^10:2^12"], "cannot be combined"),
    (["--reps", "x"], "--reps"),
    (["--csv", "{tmp}/missing/x.csv"], "--csv"),
    (["--bogus"], "--bogus"),
]


def test_torch_script_help():
    expect([sys.executable, torch_script(), "--help"], 0, out_needles=("--types", "--sweep", "--csv"))


@pytest.mark.parametrize("args, needle", TORCH_REFUSALS, ids=[" ".join(a) for a, _ in TORCH_REFUSALS])
def test_torch_script_refusal(args, needle, tmp_path):
    expect([sys.executable, torch_script()] + [a.format(tmp=tmp_path) for a in args], 2, needle)


def test_torch_script_without_gpu():
    expect([sys.executable, torch_script(), "--n", "1000"], 3, "GPU")


def test_torch_script_check():
    """The torch script's check, without torch or a GPU: numpy's scans, right and wrong."""
    np = pytest.importorskip("numpy", reason="numpy is not installed: the torch script's check is not tried")
    sys.path.insert(0, os.path.dirname(os.path.abspath(torch_script())))
    import time_torch_scan as tts
    x = tts.inputs("int", 1, 100003)
    y = np.cumsum(x.view(np.uint32), dtype=np.uint32).view(np.int32)  # wraps as int32 sums do
    verdict, _, _ = tts.check("int", x, y, chunk=4096)
    ok = verdict == "ok"
    y[70001] += 1
    ok = ok and tts.check("int", x, y, chunk=4096)[0] == "FAIL" and "70001" in tts.check("int", x, y)[2]
    f = tts.inputs("float", 1, 100003)
    yf = np.cumsum(f.astype(np.float64)).astype(np.float32)
    ok = ok and tts.check("float", f, yf, chunk=4096)[0] == "ok"
    yf[99999] *= 1.001
    ok = ok and tts.check("float", f, yf, chunk=4096)[0] == "FAIL"
    assert ok, "time_torch_scan.check does not tell right scans from wrong ones"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.strip())
        sys.exit(2)
    sys.exit(run_as_script(__file__, {"SCAN_BIN": sys.argv[1], "TORCH_SCAN": sys.argv[2]}))
