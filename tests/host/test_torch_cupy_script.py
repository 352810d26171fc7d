#!/usr/bin/env python3
"""scripts/time_torch_cupy.py without torch, cupy or a GPU: its refusals (exit 2, one
sentence naming the value, no file written), its inputs and references against the
runner's committed sweep, its check and repetition plan, and its CSV against the
runner's format (results/h200/sweep.csv's columns and metadata keys).

usage: test_torch_cupy_script.py SOURCE_DIR
"""
import csv
import io
import math
import os
import shutil
import subprocess
import sys
import tempfile

root = os.path.abspath(sys.argv[1])
script = os.path.join(root, "scripts", "time_torch_cupy.py")
sys.path.insert(0, os.path.join(root, "scripts"))
import time_torch_cupy as t  # noqa: E402

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def run(*args, env=None):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, env=env)


work = tempfile.mkdtemp(prefix="torch_cupy_test.")
try:
    # --help
    r = run("--help")
    expect(r.returncode == 0 and "--sweep" in r.stdout and "--csv" in r.stdout, f"--help: rc {r.returncode}")

    # Refusals: exit 2, one line on stderr naming the value, nothing written.
    out = os.path.join(work, "out.csv")
    refused = [
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
        (["--csv", os.path.join(work, "missing", "x.csv")], "does not exist"),
        (["--csv", work], "is a directory"),
    ]
    for args, named in refused:
        r = run("--csv", out, *args)
        lines = [x for x in r.stderr.splitlines() if x.strip()]
        expect(r.returncode == 2, f"{args}: rc {r.returncode}, wanted 2 ({r.stderr.strip()})")
        expect(len(lines) == 1 and named in lines[0], f"{args}: stderr {r.stderr!r} does not name {named}")
        expect(not os.path.exists(out), f"{args}: wrote {out}")
    expect(os.listdir(work) == [], f"files left behind by refusals: {os.listdir(work)}")

    # Number forms the runner accepts.
    expect(t.parse_count("16777216", "--n") == 1 << 24, "16777216")
    expect(t.parse_count("2^24", "--n") == 1 << 24, "2^24")
    expect(t.parse_count("16M", "--n") == 1 << 24, "16M")
    expect(t.parse_count("64MiB", "--n") == 1 << 24, "64MiB")
    expect(t.parse_sweep("2^10:2^30") == [1 << k for k in range(10, 31)], "sweep 2^10:2^30")
    expect(t.parse_sweep("1K:1M:4") == [1 << k for k in range(10, 21, 2)], "sweep 1K:1M:4")
    expect(t.format_count(1 << 24) == "2^24" and t.format_count(1000) == "1000", "format_count")

    # A library that is not installed is skipped with a sentence (a stand-in that fails to import).
    fake = os.path.join(work, "fake")
    os.makedirs(fake)
    for name in ("torch", "cupy"):
        with open(os.path.join(fake, name + ".py"), "w") as f:
            f.write(f"raise ImportError('no module named {name} here')\n")
    sys.path.insert(0, fake)
    for name in ("torch", "cupy"):
        lib, why = t.load_library(name, 0)
        expect(lib is None and why.startswith(f"{name} is not installed") and f"{name}.sum is not timed" in why,
               f"skip sentence for {name}: {why!r}")
    sys.path.remove(fake)
    shutil.rmtree(fake)

    # Without a GPU (CI): exit 3 with one sentence, nothing written.
    has_gpu = shutil.which("nvidia-smi") is not None and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True).returncode == 0
    if not has_gpu:
        r = run("--n", "2^10", "--csv", out)
        expect(r.returncode == 3 and "CUDA" in r.stderr and not os.path.exists(out),
               f"no GPU: rc {r.returncode}, stderr {r.stderr!r}")

    # The inputs and references are the runner's: the committed sweep's reference column.
    with open(os.path.join(root, "results", "h200", "sweep.csv"), encoding="utf-8") as f:
        sweep_text = f.read()
    sweep_meta = [line[2:].split(":", 1)[0] for line in sweep_text.splitlines() if line.startswith("# ")]
    sweep_rows = list(csv.DictReader(line for line in sweep_text.splitlines() if not line.startswith("#")))
    seed = int(next(line.split(":", 1)[1] for line in sweep_text.splitlines() if line.startswith("# seed:")))
    runner_refs = {int(float(row["n"])): float(row["reference"]) for row in sweep_rows if int(float(row["n"])) <= 1 << 22}
    expect(len(runner_refs) >= 5, f"the sweep has only {len(runner_refs)} sizes up to 2^22")
    x = t.uniform_inputs(seed, max(runner_refs))
    refs = t.prefix_references(x, list(runner_refs))
    for n, ref in runner_refs.items():
        expect(abs(refs[n][0] - ref) <= 1e-9 * abs(ref), f"reference at n={n}: {refs[n][0]!r}, runner {ref!r}")
        expect(abs(refs[n][1] - refs[n][0]) <= 1e-9 * ref, f"sum |x| at n={n} differs from the sum of >= 0 inputs")

    # The check: within the bound passes, far outside fails, a NaN result fails.
    n = 1 << 20
    s, a = refs[n]
    verdict, abs_err, rel_err, tol, _ = t.check(s * (1 + 1e-7), s, a, n)
    expect(verdict == "ok" and tol > abs_err, f"check near the reference: {verdict}, tolerance {tol}")
    expect(t.check(s * 1.01, s, a, n)[0] == "FAIL", "check 1% off passes")
    expect(t.check(float("nan"), s, a, n)[0] == "FAIL", "check of NaN passes")
    expect(t.blocked_depth(1 << 20, 128) == (1 << 13) + 7, "blocked_depth")

    # The repetition plan of common/timing.cpp.
    expect(t.planned_repetitions(1.0, 100, 3, 1000) == 100, "plan: fast rows run every repetition")
    expect(t.planned_repetitions(50.0, 100, 3, 1000) == 20, "plan: the budget cuts")
    expect(t.planned_repetitions(5000.0, 100, 3, 1000) == 3, "plan: never below min-reps")
    expect(t.median([3.0, 1.0, 2.0]) == 2.0 and t.median([4.0, 1.0, 2.0, 3.0]) == 2.5, "median")

    # The CSV: the runner's header row exactly, its metadata keys in its order, parseable.
    header = next(line for line in sweep_text.splitlines() if not line.startswith("#"))
    meta = [(k, "v") for k in sweep_meta] + [("torch_version", "2.0, test")]
    rec = t.make_record(1 << 10, "torch_sum", 'torch.sum ("x", 2.0)', "100", [3.0, 1.0, 2.0], 1.5, 1.5, "ok",
                        (0.0, 0.0, 1e-3), 4000.0)
    text = t.to_csv(meta, [rec])
    lines = text.splitlines()
    expect(lines[:len(sweep_meta)] == [f"# {k}: v" for k in sweep_meta], "metadata lines")
    expect(lines[len(meta)] == header, f"header {lines[len(meta)]!r} is not the runner's {header!r}")
    row = next(csv.DictReader(io.StringIO("\n".join(lines[len(meta):]))))
    expect(row["stage"] == 'torch.sum ("x", 2.0)' and row["kind"] == "peer", f"quoting: {row['stage']!r}")
    expect(row["median_us"] == "2" and row["min_us"] == "1" and row["max_us"] == "3", "times")
    expect(row["gbs"] == format(4096 / 2e-6 / 1e9, ".10g"), f"gbs {row['gbs']}")
    expect(row["vs_cub"] == "" and row["grid"] == "", "empty columns print as empty")
    target = os.path.join(work, "peers.csv")
    t.output_files.write(target, text)
    with open(target, encoding="utf-8") as f:
        expect(f.read() == text, "the CSV written whole")
    expect(os.listdir(work) == ["peers.csv"], f"temporary files left: {os.listdir(work)}")
finally:
    shutil.rmtree(work, ignore_errors=True)

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
