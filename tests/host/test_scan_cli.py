#!/usr/bin/env python3
"""The scan runner's and scripts/time_torch_scan.py's command lines end to end: --help,
--list, and every bad input refused with one sentence and exit code 2 before a GPU is
looked for, leaving no file; a good command exits 3 on a machine without a GPU (0 with
one). Then the torch script's check of int and float scans (with numpy, when installed).

usage: test_scan_cli.py PATH/TO/scan PATH/TO/time_torch_scan.py
"""
import os
import subprocess
import sys
import tempfile

scan_bin, torch_script = sys.argv[1], sys.argv[2]
failures = []
passed = 0


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def expect(cmd, code, *needles, out_needles=(), absent=()):
    global passed
    rc, out, err = run(cmd)
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
    if code == 2 and len([l for l in err.splitlines() if l.strip()]) != 1:
        problems.append("expected one line on stderr")
    if problems:
        failures.append(" ".join(cmd[-6:]) + ": " + "; ".join(problems) + f"\n    stderr: {err.strip()[:300]}")
    else:
        passed += 1


with tempfile.TemporaryDirectory() as tmp:
    csv = os.path.join(tmp, "scan.csv")
    s = [scan_bin]
    expect(s + ["--help"], 0, out_needles=("--type", "--kind", "--stages", "--sweep", "--csv", "Exit codes"))
    expect(s + ["--list"], 0,
           out_needles=("01\tblock_scan", "05\tvector_lookback", "06\tprefetch_lookback", "cub_inclusive", "copy"),
           absent=("cub_exclusive",))
    expect(s + ["--list", "--kind", "exclusive", "--stages", "4-5"], 0,
           out_needles=("04\tdecoupled_lookback", "cub_exclusive", "copy"), absent=("cub_inclusive", "03\t"))
    expect(s + ["--list", "--stages", "6", "--bounds"], 0,
           out_needles=("06\tprefetch_lookback", "copy_stream\t", "copy_tiles\t", "phases_tiles\t", "scan/bounds.cu"))
    expect(s + ["--list"], 0, absent=("copy_tiles", "phases_tiles", "copy_stream"))
    for args, needle in [
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
        (["--csv", os.path.join(tmp, "missing", "x.csv")], "--csv"),
        (["--run-once", "--sweep", "2^10:2^12"], "--run-once"),
        (["--run-once", "--csv", csv], "--run-once"),
        (["--bogus"], "--bogus"),
    ]:
        if os.path.exists(csv):
            os.remove(csv)  # a valid command before this one (with a GPU) wrote it
        expect(s + args + (["--csv", csv] if "--csv" not in args and "--run-once" not in args else []),
               3 if needle == "" else 2, needle)
        if os.path.exists(csv) and needle:
            failures.append(f"scan {' '.join(args)} left {csv} behind")
            os.remove(csv)
    expect(s + ["--n", "1000", "--type", "float", "--kind", "exclusive"], 3, "GPU")

    t = [sys.executable, torch_script]
    expect(t + ["--help"], 0, out_needles=("--types", "--sweep", "--csv"))
    for args, needle in [
        (["--n", "0"], "--n"),
        (["--n", "2^32"], "--n"),
        (["--types", "double"], "--types"),
        (["--n", "5", "--sweep", "2^10:2^12"], "cannot be combined"),
        (["--reps", "x"], "--reps"),
        (["--csv", os.path.join(tmp, "missing", "x.csv")], "--csv"),
        (["--bogus"], "--bogus"),
    ]:
        expect(t + args, 2, needle)
    expect(t + ["--n", "1000"], 3, "GPU")

# The torch script's check, without torch or a GPU: numpy's scans, right and wrong.
try:
    import numpy as np
except ImportError:
    np = None
if np is not None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(torch_script)))
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
    if ok:
        passed += 1
    else:
        failures.append("time_torch_scan.check does not tell right scans from wrong ones")
else:
    print("numpy is not installed: the torch script's check is not tried")

for f in failures:
    print("FAIL:", f)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
