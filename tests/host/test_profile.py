#!/usr/bin/env python3
"""scripts/ncu_table.py and scripts/profile.sh without a GPU and without Nsight Compute.

ncu_table.py is checked on a synthetic export (tests/host/data/ncu_raw_two_kernels.csv:
two kernels with made-up numbers, so every combining rule gives a known answer) and on
broken ones. profile.sh is checked on its error paths (unknown stage, unknown program,
missing ncu, missing runner, counters not permitted) and end to end with a stand-in
ncu that writes an empty report and exports the synthetic CSV. The stage list still
comes from the real runner's --list.

usage: python3 -m pytest tests/host/test_profile.py --build-dir BUILD_DIR
"""
import csv
import math
import os
import stat
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT

import ncu_table  # noqa: E402  (scripts/ is on the path: conftest.py)

source_dir = str(ROOT)

fixture = os.path.join(source_dir, "tests", "host", "data", "ncu_raw_two_kernels.csv")
profile_sh = os.path.join(source_dir, "scripts", "profile.sh")


def close(a, b):
    return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


# --- ncu_table.py -------------------------------------------------------------------

def test_ncu_table():
    kernels = ncu_table.read_export(fixture)
    assert len(kernels) == 2, f"fixture: 2 kernels expected, read {len(kernels)}"
    assert close(kernels[0].values["gpu__time_duration.sum"], 30000.0), "thousands separators in '30,000' are read"
    row = ncu_table.summarize("x", kernels)
    # Kernel 1: 30 us, kernel 2: 10 us, so weights 3/4 and 1/4.
    assert row["kernels"] == 2, "kernel count"
    assert close(row["duration_us"], 40.0), f"durations are summed: {row['duration_us']}"
    assert close(row["dram_read_mb"], (67108864 + 4224) / 1e6), f"DRAM bytes are summed: {row['dram_read_mb']}"
    assert close(row["dram_pct_peak"], 0.75 * 90 + 0.25 * 10), f"DRAM % is time-weighted: {row['dram_pct_peak']}"
    assert close(row["achieved_occupancy_pct"], 0.75 * 80 + 0.25 * 40), "achieved occupancy is time-weighted"
    assert close(row["branch_uniformity_pct"], 0.75 * 100 + 0.25 * 80), "branch uniformity is time-weighted"
    assert close(row["long_scoreboard_pct"], 0.75 * 60 + 0.25 * 20), "long-scoreboard share is time-weighted"
    assert row["registers"] == 40, f"registers: the largest of the kernels, got {row['registers']}"
    assert close(row["theoretical_occupancy_pct"], 100.0), "theoretical occupancy comes from the longest kernel"
    assert row["occupancy_limiter"] == "registers+warps", (
        f"limiter: the smallest limits, got {row['occupancy_limiter']}")
    assert close(row["smem_ld_conflicts"], 15) and close(row["smem_st_conflicts"], 2), "bank conflicts are summed"
    assert row["main_kernel"] == "first_pass<256>", f"longest kernel's short name, got {row['main_kernel']}"
    assert ncu_table.short_kernel_name("void a::b<c::d, 4>(const float *, e::f)") == "b<c::d, 4>", "short_kernel_name"

    text = ncu_table.render_table([row])
    assert "stall_memory_dependency" in text and "branch_efficiency" in text, "the table names the nvprof metrics"
    out_csv = ncu_table.to_csv([row], [("n", "2^24")])
    parsed = list(csv.DictReader(line for line in out_csv.splitlines() if not line.startswith("#")))
    assert out_csv.startswith("# n: 2^24\n"), "metadata lines come first"
    assert len(parsed) == 1 and parsed[0]["item"] == "x" and float(parsed[0]["duration_us"]) == 40.0, "CSV round trip"


def expect_error(text, needle, what):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        ncu_table.read_export(path)
        pytest.fail(f"{what}: no error raised")
    except ncu_table.NcuTableError as e:
        assert needle in str(e), f"{what}: message {str(e)!r} lacks {needle!r}"
    finally:
        os.unlink(path)
    rc = subprocess.run([sys.executable, os.path.join(source_dir, "scripts", "ncu_table.py"), "x=" + path],
                        capture_output=True, text=True).returncode
    assert rc == 2, f"{what}: ncu_table.py exit code {rc}, expected 2"


def test_broken_exports():
    with open(fixture, encoding="utf-8") as f:
        good = f.read()
    lines = good.splitlines()
    expect_error("==PROF== nothing profiled\n", "no ncu raw-page table", "no table")
    expect_error(good.replace("gpu__time_duration.sum", "gpu__time_duration.avg"), "gpu__time_duration.sum",
                 "missing metric")
    expect_error("\n".join(lines[:3]) + "\n", "no kernels", "header and units only")
    expect_error(good.replace('"80"', '"eighty"', 1), "'eighty' is not a number", "a value that is not a number")
    expect_error("\n".join(lines[:-1] + [lines[-1].rsplit(",", 2)[0]]) + "\n", "fields where the header has",
                 "a short row")
    expect_error(good.replace('"ns"', '"cycle"', 1), "unexpected unit", "a duration in cycles")

# --out: checked before anything is read (one sentence, exit 2, no traceback), written
# through a unique temporary name (a user's FILE.tmp is left alone).
def test_out_file():
    ncu_table_py = os.path.join(source_dir, "scripts", "ncu_table.py")
    with tempfile.TemporaryDirectory() as tmp:
        for out, needle in [(tmp, "is a directory"), (os.path.join(tmp, "no", "x.csv"), "does not exist"),
                            ("", "is not a file name"), ("/dev/null", "is not a regular file")]:
            p = subprocess.run([sys.executable, ncu_table_py, "--out", out, "x=" + fixture], capture_output=True, text=True)
            assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr and len(p.stderr.splitlines()) == 1, (
                f"ncu_table.py --out {out!r}: exit {p.returncode}, stderr {p.stderr.strip()!r}")
            assert not os.path.exists(tmp + ".tmp"), f"ncu_table.py --out {out!r} left {tmp}.tmp"
        target = os.path.join(tmp, "table.csv")
        with open(target + ".tmp", "w") as f:
            f.write("mine\n")
        p = subprocess.run([sys.executable, ncu_table_py, "--out", target, "x=" + fixture], capture_output=True, text=True)
        assert p.returncode == 0 and os.path.exists(target), f"ncu_table.py --out FILE: exit {p.returncode}"
        with open(target + ".tmp") as f:
            assert f.read() == "mine\n", "ncu_table.py --out FILE leaves FILE.tmp alone"
        assert sorted(os.listdir(tmp)) == ["table.csv", "table.csv.tmp"], f"nothing else is left: {os.listdir(tmp)}"

# --- profile.sh ----------------------------------------------------------------------


def profile(args, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    p = subprocess.run(["bash", profile_sh] + args, capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, p.stdout, p.stderr


def expect_profile(args, code, needle, what, env_extra=None):
    rc, out, err = profile(args, env_extra)
    assert rc == code, f"{what}: exit code {rc}, expected {code}; stderr: {err.strip()[-400:]}"
    assert needle in err, f"{what}: stderr lacks {needle!r}; stderr: {err.strip()[-400:]}"


def test_profile_sh(build_dir):
    rc, out, _ = profile(["--help"])
    assert rc == 0 and "--clock-control none" in out and "performance counters" in out, "--help"

    with tempfile.TemporaryDirectory() as tmp:
        fake_bin = os.path.join(tmp, "bin")
        os.mkdir(fake_bin)

        def write_exe(name, body):
            path = os.path.join(fake_bin, name)
            with open(path, "w") as f:
                f.write("#!/usr/bin/env bash\n" + body)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            return path

        no_ncu = {"NCU": os.path.join(tmp, "no", "ncu")}
        outdir = os.path.join(tmp, "out")
        common = ["--build", build_dir, "--out", outdir]
        expect_profile(["nosuch"] + common, 2, "unknown stage 'nosuch'", "unknown stage", no_ncu)
        expect_profile(["--program", "gemm"] + common, 2, "--program 'gemm'", "unknown program", no_ncu)
        expect_profile(["--n", "0"] + common, 2, "--n", "a zero size", no_ncu)
        expect_profile(["--program", "occupancy", "256by8"] + common, 2, "BLOCKxPER_SM", "a bad configuration", no_ncu)
        expect_profile(["--bogus"] + common, 2, "unknown option '--bogus'", "unknown option", no_ncu)
        expect_profile(["--build", os.path.join(tmp, "nobuild")], 2, "was not found; build the project first",
                       "missing runner", no_ncu)
        expect_profile(["13"] + common, 2, "ncu was not found", "missing ncu", no_ncu)
        expect_profile(["13", "--build", build_dir, "--out", fixture], 2, "is not a directory", "an --out that is a file",
                       no_ncu)

        # With every argument right, profile.sh asks nvidia-smi for a GPU before it writes
        # anything: none (exit 3, nothing written), then a stand-in that finds one.
        write_exe("nvidia-smi", "exit 9\n")
        no_gpu = {"NCU": os.path.join(tmp, "ncu_none"), "PATH": fake_bin + os.pathsep + os.environ["PATH"]}
        write_exe("ncu_none", "echo 'ncu must not run without a GPU' >&2\nexit 1\n")
        no_gpu["NCU"] = os.path.join(fake_bin, "ncu_none")
        expect_profile(["13"] + common, 3, "no NVIDIA GPU is visible", "no GPU", no_gpu)
        assert not os.path.exists(outdir), "no GPU: the reports' folder is not created"
        write_exe("nvidia-smi", "echo 'NVIDIA Stand-in'\n")
        gpu_path = {"PATH": fake_bin + os.pathsep + os.environ["PATH"]}

        denied = write_exe("ncu_denied", """
    case "$1" in --version) echo "Version 2099.1"; exit 0 ;; esac
    echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters"
    exit 1
    """)
        expect_profile(["13"] + common, 3, "ERR_NVGPUCTRPERM", "counters not permitted", {"NCU": denied, **gpu_path})

        # A stand-in ncu: "-o BASE" writes BASE.ncu-rep, "--import" prints the synthetic export.
        fake = write_exe("ncu_fake", f"""
    case "$1" in --version) echo "Version 2099.1"; exit 0 ;; esac
    for a in "$@"; do [ "$a" = --import ] && {{ cat "{fixture}"; exit 0; }}; done
    case " $* " in *" --clock-control none "*) ;; *) echo "clock control was not 'none'" >&2; exit 9 ;; esac
    while [ $# -gt 0 ]; do [ "$1" = -o ] && {{ : > "$2.ncu-rep"; }}; shift; done
    exit 0
    """)
        rc, out, err = profile(["1", "13"] + common, {"NCU": fake, "REDUCTION_COMMIT": "abc123", **gpu_path})
        assert rc == 0, f"stand-in ncu: exit code {rc}; stderr: {err.strip()[-600:]}"
        table_csv = os.path.join(outdir, "ncu_metrics.csv")
        assert os.path.exists(table_csv), "stand-in ncu: ncu_metrics.csv was written"
        if os.path.exists(table_csv):
            with open(table_csv) as f:
                text = f.read()
            rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
            assert [r["item"] for r in rows] == ["01", "13"], (
                f"rows for stages 01 and 13, got {[r['item'] for r in rows]}")
            assert all(float(r["duration_us"]) == 40.0 for r in rows), "each row sums the export's two kernels"
            assert "# commit: abc123" in text and "# program: reduce" in text, "metadata in the CSV"
        assert os.path.exists(os.path.join(outdir, "reduce_13.ncu-rep")), "a report per stage"
        assert "stall_memory_dependency" in out, "the printed table names the nvprof metrics"


if __name__ == "__main__":  # python3 tests/host/test_profile.py --build-dir DIR: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider", *sys.argv[1:]]))
