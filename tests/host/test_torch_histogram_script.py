#!/usr/bin/env python3
"""scripts/time_torch_histogram.py without torch or a GPU: its refusals (exit 2, one
sentence, nothing written), its inputs against the runner's (checksums of
histogram::make_values' bytes, seed 1, n = 1000003), its count check, and its CSV
columns against the ones histogram/runner.cpp writes, in the same order.

usage: test_torch_histogram_script.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

root = os.path.abspath(sys.argv[1])
script = os.path.join(root, "scripts", "time_torch_histogram.py")
sys.path.insert(0, os.path.join(root, "scripts"))
import time_torch_histogram as t  # noqa: E402

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    target = os.path.join(tmp, "out.csv")
    for args in (["--input", "zipf"], ["--n", "0"], ["--n", "2^32"], ["--sweep", "2^10:2^33"], ["--reps", "0"],
                 ["--n", "5", "--sweep", "2^10:2^12"], ["--bins", "256"], ["--csv", os.path.join(tmp, "no", "x.csv")],
                 ["--min-reps", "9", "--reps", "3"], ["--n"]):
        r = subprocess.run([sys.executable, script, *args, "--csv", target] if "--csv" not in args else
                           [sys.executable, script, *args], capture_output=True, text=True)
        expect(r.returncode == 2, f"{args}: exit {r.returncode}, not 2")
        expect(r.stderr.count("\n") == 1 and r.stderr.startswith("time_torch_histogram.py: "),
               f"{args}: not one sentence: {r.stderr!r}")
        expect(not os.path.exists(target), f"{args}: wrote {target}")
    r = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True)
    expect(r.returncode == 0 and "--input LIST" in r.stdout, "--help")

# The runner's bytes (checksum: s = s * 31 + byte, modulo 2^64, over the bytes in order).
golden = {"uniform": (13351787628373693680, 198, 249), "skewed": (5764243044785949142, 0, 0),
          "one": (1582211350201678570, 42, 42)}
for kind, (checksum, b0, b1) in golden.items():
    v = t.make_bytes(kind, 1, 1000003)
    s = 0
    for x in v.tolist():
        s = (s * 31 + x) % (1 << 64)
    expect(s == checksum and v[0] == b0 and v[1] == b1, f"{kind}: the bytes differ from histogram::make_values'")
    expect((t.make_bytes(kind, 1, 1000)[:] == v[:1000]).all(), f"{kind}: a shorter input is not a prefix")

expect(t.first_difference([1, 2, 3], [1, 2, 3]) == "", "equal counts pass")
expect(t.first_difference([1, 5, 4], [1, 2, 3]) == "bin 1 holds 5 instead of 2; 2 of 3 bins wrong", "first wrong bin")
expect(t.first_difference([1, 2], [1, 2, 3]) != "", "a short histogram fails")

runner = open(os.path.join(root, "histogram", "runner.cpp"), encoding="utf-8").read()
body = runner[runner.index("common::Record rec = {"):runner.index("if (r.stage->kind == Kind::stage) t_prev = us;")]
keys = re.findall(r'(?:number|text)_field\(\s*"(\w+)"', body)
timing = ["reps", "median_us", "min_us", "max_us"]  # common::timing_fields, appended after "block"
keys = keys[:keys.index("block") + 1] + timing + keys[keys.index("block") + 1:]
expect(tuple(keys) == t.COLUMNS, f"columns differ from the runner's: {keys} vs {list(t.COLUMNS)}")
csv = t.to_csv([("device", "Test")], [dict({c: None for c in t.COLUMNS}, key="torch", check="ok")])
expect(csv.splitlines()[1] == ",".join(t.COLUMNS), "the CSV's header")

for f in failures:
    print("FAIL:", f)
print(f"{'all checks passed' if not failures else str(len(failures)) + ' failed'}")
sys.exit(1 if failures else 0)
