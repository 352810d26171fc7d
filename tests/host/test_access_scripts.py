#!/usr/bin/env python3
"""The access-pattern scripts without a GPU.

scripts/access_ncu.py on small hand-made ncu exports: a row's kernels are summed and
divided as the columns say, kernels outside the rows are left out, and a missing row,
a missing metric or a malformed line is refused with exit code 2.
scripts/plot_access.py on small CSVs in the programs' format: the figures are drawn,
and a missing file or a row it cannot place is refused with exit code 2.
scripts/profile.sh --program access_NN_name with a stand-in ncu: the rows come from the
program's --list, each is profiled through its NVTX range, an unknown row is refused.

usage: python3 -m pytest tests/host/test_access_scripts.py --build-dir BUILD_DIR
"""
import csv
import io
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT
from host_tools import detail
SCRIPT = ROOT / "scripts" / "access_ncu.py"
METRICS = subprocess.run([sys.executable, str(SCRIPT), "--metrics"], capture_output=True, text=True,
                         check=True).stdout.strip().split(",")

def export(kernels):
    """An ncu raw-page CSV: kernels is a list of (name, {metric: value}); unset metrics are 0."""
    header = ["ID", "Kernel Name"] + METRICS
    units = ["", ""] + ["ns" if m == "gpu__time_duration.sum" else "" for m in METRICS]
    buf = io.StringIO()
    buf.write("==PROF== Disconnected from process 1\n")
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(header)
    w.writerow(units)
    for i, (name, values) in enumerate(kernels):
        w.writerow([str(i), name] + [f"{values.get(m, 0):,}" for m in METRICS])
    return buf.getvalue()


def run(tmp, keys, text, *extra):
    (tmp / "p.keys").write_text("".join(f"{k}\tlabel\n" for k in keys))
    (tmp / "p.csv").write_text(text)
    out = tmp / "out.csv"
    if out.exists():
        out.unlink()
    p = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--meta", "device=Test GPU", *extra,
                        f"01_prog={tmp / 'p.keys'}:{tmp / 'p.csv'}"], capture_output=True, text=True)
    rows = list(csv.DictReader(line for line in out.read_text().splitlines() if not line.startswith("#"))) \
        if out.exists() else []
    return p.returncode, p.stderr, rows, out


def test_access_ncu():
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ld = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
        sect = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
        good = export([
            ("fill_words", {ld: 999, sect: 1}),  # outside every row: left out
            ("stride-1", {ld: 100, sect: 400, "dram__sectors_read.sum": 400, "gpu__time_duration.sum": 2000}),
            ("two-kernels", {ld: 100, sect: 400, "smsp__inst_executed_op_shared_ld.sum": 10,
                             "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 20}),
            ("two-kernels", {ld: 100, sect: 3200, "smsp__inst_executed_op_shared_ld.sum": 10,
                             "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 40}),
        ])
        rc, err, rows, out = run(tmp, ["stride-1", "two-kernels"], good)
        assert rc == 0, f"exit 0 on a good export: {err}"
        assert [r["key"] for r in rows] == ["stride-1", "two-kernels"], f"one row per key, in key order: {rows}"
        if len(rows) == 2:
            a, b = rows
            assert a["ld_sectors_per_request"] == "4" and a["dram_sectors_per_request"] == "4", (
                f"sectors per request: {a}")
            assert a["duration_us"] == "2", f"duration in us: {a}"
            assert a["dram_read_mb"] == "0.0128", f"dram MB = sectors x 32: {a}"
            assert b["kernels"] == "2" and b["ld_sectors_per_request"] == "18", f"a row's kernels are summed: {b}"
            assert b["smem_ld_wavefronts_per_inst"] == "3", f"wavefronts per instruction: {b}"
            assert a["smem_ld_wavefronts_per_inst"] == "", f"no shared loads: empty, not zero: {a}"
            assert a["program"] == "01_prog", f"the program column: {a}"
        assert out.exists() and "# device: Test GPU" in out.read_text(), "metadata lines"

        rc, err, rows, _ = run(tmp, ["stride-1", "stride-2"], good)
        assert rc == 2 and "stride-2" in err, f"a row with no kernel: exit 2: {err}"
        rc, err, _, _ = run(tmp, ["stride-1"], good.replace("dram__sectors_write.sum", "something_else"))
        assert rc == 2 and "dram__sectors_write.sum" in err, f"a missing metric: exit 2: {err}"
        rc, err, _, _ = run(tmp, ["stride-1"], good + '"7","stride-1"\n')
        assert rc == 2 and "fields" in err, f"a short line: exit 2: {err}"
        rc, err, _, _ = run(tmp, ["stride-1"], "nothing here\n")
        assert rc == 2 and "no ncu raw-page table" in err, f"no table: exit 2: {err}"
        rc, err, _, _ = run(tmp, ["stride-1"], good, "--meta", "novalue")
        assert rc == 2 and "KEY=VALUE" in err, f"bad --meta: exit 2: {err}"


# ---- scripts/plot_access.py ----------------------------------------------------------

META = "# device: Test GPU\n# peak_gbs: 4000.0\n# n: 67108864\n# commit: abc\n"
PLOT = ROOT / "scripts" / "plot_access.py"


def stride_csv():
    rows = ["key,map,step,gbs,sectors_pred,check"]
    for s, g in [(1, 3000), (2, 1500), (4, 800), (8, 400), (16, 380), (32, 390)]:
        rows.append(f"stride-{s},stride,{s},{g},{min(4 * s, 32)},ok")
    rows.append("random,random,,300,31.9,ok")
    rows += [f"offset-{o},offset,{o},{2900 - o},{4 if o % 8 == 0 else 5},ok" for o in range(32)]
    return META + "\n".join(rows) + "\n"


def bank_csv():
    rows = ["stride,padded,median_us,wavefronts_pred,check"]
    for pad in (0, 1):
        rows += [f"{s},{pad},{100 * (s if pad == 0 else 1)},{s if pad == 0 else 1},ok" for s in range(1, 34)]
    return META + "\n".join(rows) + "\n"


def plot(results, *extra):
    return subprocess.run([sys.executable, str(PLOT), "--results", str(results), *extra], capture_output=True,
                          text=True)


def test_plot_access():
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "access_01_stride_offset.csv").write_text(stride_csv())
        (tmp / "access_05_bank_padding.csv").write_text(bank_csv())
        p = plot(tmp, "--out", str(tmp / "figs"))
        assert p.returncode == 0, f"plot_access.py: exit 0: {p.stderr}"
        for name in ("access_stride.png", "access_banks.png"):
            f = tmp / "figs" / name
            assert f.is_file() and f.read_bytes()[:4] == b"\x89PNG", f"plot_access.py draws {name}: {str(f)}"

        sys.path.insert(0, str(ROOT / "scripts"))
        import diagrams as dg  # noqa: E402  the registry, whose modules draw the access plots
        data = dg.MODULES["figures/access_stride.py"].from_csv(dg, tmp / "access_01_stride_offset.csv")
        assert [s for s, _, _ in data["strides"]] == [1, 2, 4, 8, 16, 32], f"stride data sorted by stride: {data}"
        assert data["random"] == 300 and len(data["offsets"]) == 32, f"the random row: {data}"
        b = dg.MODULES["figures/access_banks.py"].from_csv(dg, tmp / "access_05_bank_padding.csv")
        assert b["base_us"] == 100 and len(b["series"][1]) == 33, (
            f"bank data: the stride-1 time scales the prediction: {b}")

        (tmp / "access_05_bank_padding.csv").unlink()
        p = plot(tmp)
        assert p.returncode == 2 and "access_05_bank_padding.csv" in p.stderr, (
            f"plot_access.py: a missing CSV is exit 2: {p.stderr}")
        (tmp / "access_05_bank_padding.csv").write_text(bank_csv())
        (tmp / "access_01_stride_offset.csv").write_text(stride_csv().replace("random,random", "random,diagonal"))
        p = plot(tmp)
        assert p.returncode == 2 and "diagonal" in p.stderr, f"plot_access.py: an unknown map is exit 2: {p.stderr}"


# ---- scripts/profile.sh --program access_NN_name ---------------------------------------

def test_profile_access(build_dir):
    PROGRAM = build_dir / "access_patterns" / "01_stride_offset"
    assert PROGRAM.is_file(), f"the program profile.sh needs is built: {str(PROGRAM)}"
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        log = tmp / "ncu_args.txt"
        fake = tmp / "ncu"
        fixture = ROOT / "tests" / "host" / "data" / "ncu_raw_two_kernels.csv"
        # A stand-in ncu: records each call's arguments, writes -o BASE.ncu-rep, exports the fixture.
        fake.write_text(f"""#!/usr/bin/env bash
    case "$1" in --version) echo "Version 2099.1"; exit 0 ;; esac
    echo "$*" >> "{log}"
    for a in "$@"; do [ "$a" = --import ] && {{ cat "{fixture}"; exit 0; }}; done
    while [ $# -gt 0 ]; do [ "$1" = -o ] && {{ : > "$2.ncu-rep"; }}; shift; done
    exit 0
    """)
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
        # profile.sh asks nvidia-smi for a GPU before it writes anything: a stand-in finds one.
        (tmp / "bin").mkdir()
        (tmp / "bin" / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA Stand-in'\n")
        (tmp / "bin" / "nvidia-smi").chmod(0o755)
        env = dict(os.environ, NCU=str(fake), REDUCTION_COMMIT="abc123",
                   PATH=str(tmp / "bin") + os.pathsep + os.environ["PATH"])
        args = ["bash", str(ROOT / "scripts" / "profile.sh"), "--program", "access_01_stride_offset", "--build", str(build_dir),
                "--out", str(tmp / "out")]
        p = subprocess.run(args + ["stride-2", "offset-3", "--n", "2^20"], capture_output=True, text=True, env=env,
                           timeout=300)
        assert p.returncode == 0, f"profile.sh access: exit 0: {p.stderr[-600:]}"
        calls = log.read_text().splitlines() if log.exists() else []
        profiled = [c for c in calls if "--import" not in c]
        assert ((len(profiled) == 2
              and "--nvtx-include stride-2/" in profiled[0] and "--only stride-2 --n 2^20 --run-once" in profiled[0]
              and "--nvtx-include offset-3/" in profiled[1])), "profile.sh access: one ncu run per row, through its NVTX range and --only" + detail("\n".join(calls))
        table = tmp / "out" / "ncu_metrics_access_01_stride_offset.csv"
        rows = list(csv.DictReader(l for l in table.read_text().splitlines() if not l.startswith("#"))) \
            if table.exists() else []
        assert [r["item"] for r in rows] == ["stride-2", "offset-3"], (
            f"profile.sh access: the table has the two rows: {rows}")
        p = subprocess.run(args + ["stride-3"], capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 2 and "stride-3" in p.stderr, f"profile.sh access: an unknown row is exit 2: {p.stderr}"
        p = subprocess.run(args[:3] + ["access_99_nothing"] + args[4:], capture_output=True, text=True, env=env,
                           timeout=300)
        assert p.returncode == 2 and "not found" in p.stderr, (
            f"profile.sh access: a program that is not built is exit 2: {p.stderr}")


if __name__ == "__main__":  # python3 tests/host/test_access_scripts.py --build-dir DIR: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider", *sys.argv[1:]]))
