#!/usr/bin/env python3
"""scripts/plot.py: reading the result CSVs, refusing malformed ones (and a sweep given as
the ladder) and an --out that cannot be written with a clear message and exit code 2,
and drawing the three figures. matplotlib is required (scripts/test.sh installs it):
without it the drawing checks fail, they are never skipped.

usage: python3 -m pytest tests/host/test_plot.py
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT

import diagrams as dg  # noqa: E402  (scripts/ is on the path: conftest.py): the registry and its plot modules

LADDER_PLOT, SWEEP_PLOT, MIXED_PLOT = (dg.MODULES[f"figures/{m}.py"] for m in ("ladder", "sweep", "mixed_precision"))

source_dir = str(ROOT)

plot_py = os.path.join(source_dir, "scripts", "plot.py")


META = "# device: Test GPU\n# peak_gbs: 1000\n# n: 1024\n"
LADDER = META + ("key,id,stage,kind,gbs,check\n"
                 "01,naive,naive global memory,stage,100,ok\n"
                 "13,single_pass,\"single pass, last block\",stage,900,ok\n"
                 "cub,cub,CUB DeviceReduce::Sum,baseline,880,ok\n"
                 "one_thread,one_thread,one thread,baseline,0.5,no-bound\n")
SWEEP = ("# device: Test GPU\n# peak_gbs: 1000\n"
         "n,key,stage,gbs\n"
         "2048,13,single pass,20\n1024,13,single pass,10\n1024,cub,CUB,8\n2048,cub,CUB,16\n")
MIXED = META + ("key,variant,bytes_per_element,gmacs,gbs,check\n"
                "01,FP32,8,100,800,ok\n05,INT8 dp4a,2,400,800,ok\n")


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def test_plot_script():
    with tempfile.TemporaryDirectory() as tmp:
        ladder = write(tmp, "ladder.csv", LADDER)
        sweep = write(tmp, "sweep.csv", SWEEP)
        mixed = write(tmp, "mixed.csv", MIXED)

        d = LADDER_PLOT.from_csv(dg, Path(ladder))
        assert [b[1] for b in d["bars"]] == [100.0, 900.0, 880.0, 0.5], f"ladder bars in table order: {d['bars']}"
        assert d["bars"][1][0] == "13  single pass, last block", "a quoted stage name with a comma is one field"
        assert [b[2] for b in d["bars"]] == [True, True, True, False], "no-bound rows are marked as not verified"
        assert d["cub_gbs"] == 880.0 and d["peak_gbs"] == 1000.0, "CUB's and the peak's GB/s"

        s = SWEEP_PLOT.from_csv(dg, Path(sweep))
        assert list(s["series"]) == ["13", "cub"], "one series per stage, in order of appearance"
        assert s["series"]["13"]["points"] == [(1024.0, 10.0), (2048.0, 20.0)], "points sorted by n"
        assert s["peers"] == {} and s["ceiling"] == [], "no peers or ceiling without their files beside the sweep"
        write(tmp, "peers_ceiling.csv", "n,key,gbs\n1024,copy,30\n1024,read,40\n2048,read,50\n")
        assert SWEEP_PLOT.from_csv(dg, Path(sweep))["ceiling"] == [(1024.0, 40.0), (2048.0, 50.0)], (
            "the ceiling is the fastest streaming kernel at each n")
        os.remove(os.path.join(tmp, "peers_ceiling.csv"))

        m = MIXED_PLOT.from_csv(dg, Path(mixed))
        assert [p["intensity"] for p in m["points"]] == [0.25, 1.0], "2 operations per element pair over its bytes"
        assert [p["gops"] for p in m["points"]] == [200.0, 800.0], "Gop/s = 2 x G multiply-adds/s"
        assert m["compute_gops"] is None, "no compute roof for a GPU whose FP32 figure is not known"
        h200 = MIXED_PLOT.from_csv(dg, Path(write(tmp, "mixed_h200.csv", MIXED.replace("Test GPU", "NVIDIA H200"))))
        assert h200["compute_gops"] == MIXED_PLOT.FP32_FMA_GOPS["NVIDIA H200"], (
            "the H200's FP32 figure is its compute roof")

        # Errors: exit code 2 and one message naming the file and the problem.
        def expect_error(name, text, needle, flag="--ladder"):
            path = write(tmp, name, text) if text is not None else os.path.join(tmp, name)
            args = [sys.executable, plot_py, "--out", os.path.join(tmp, "err"), "--ladder", ladder, "--sweep", sweep,
                    "--mixed", mixed, flag, path]
            p = subprocess.run(args, capture_output=True, text=True)
            assert p.returncode == 2, f"{name}: exit code {p.returncode}, expected 2 ({p.stderr.strip()})"
            assert needle in p.stderr and path in p.stderr, f"{name}: stderr {p.stderr.strip()!r} lacks {needle!r}"
            assert not os.path.exists(os.path.join(tmp, "err")), f"{name}: no figure is drawn when an input is bad"

        expect_error("missing.csv", None, "cannot read it")
        expect_error("empty.csv", META, "it has no header row")
        expect_error("header_only.csv", META + "key,id,stage,kind,gbs,check\n", "a header but no rows")
        expect_error("no_gbs.csv", LADDER.replace(",gbs,", ",gbps,"), "missing column(s) gbs")
        expect_error("text_gbs.csv", LADDER.replace(",900,", ",fast,"), "'fast', not a number")
        expect_error("short_row.csv", LADDER + "02,shared,shared memory\n", "the row has 3 fields, the header 6")
        expect_error("no_peak.csv", LADDER.replace("# peak_gbs: 1000\n", ""), "peak_gbs")
        expect_error("no_cub.csv", "\n".join(l for l in LADDER.splitlines() if not l.startswith("cub")) + "\n",
                     "no 'cub' row")
        expect_error("bad_n.csv", SWEEP.replace("2048,13", "0,13"), "n must be positive", "--sweep")
        expect_error("bad_bytes.csv", MIXED.replace("01,FP32,8", "01,FP32,0"), "bytes_per_element must be positive",
                     "--mixed")

        # A sweep CSV is not a ladder: one bar per stage and size would mean nothing.
        expect_error("sweep_as_ladder.csv", META.replace("# n: 1024", "# n: sweep") + LADDER.split(META)[1],
                     "a sweep (a stage at several n)")
        expect_error("repeated_keys.csv", LADDER + "13,single_pass,single pass,stage,950,ok\n",
                     "a sweep (a stage at several n)")
        p = subprocess.run([sys.executable, plot_py, "--ladder", os.path.join(source_dir, "results", "h200", "sweep.csv"),
                            "--sweep", sweep, "--mixed", mixed, "--out", os.path.join(tmp, "err")],
                           capture_output=True, text=True)
        assert p.returncode == 2 and "a sweep (a stage at several n)" in p.stderr, (
            f"--ladder results/h200/sweep.csv: exit {p.returncode}, stderr {p.stderr.strip()!r}")

        # An --out that cannot be written: one sentence and exit 2 before anything is read.
        for out, needle in [("/proc/x", "files cannot be written in '/proc'"), (ladder, "is not a directory")]:
            p = subprocess.run([sys.executable, plot_py, "--out", out, "--ladder", ladder, "--sweep", sweep, "--mixed",
                                mixed], capture_output=True, text=True)
            assert ((p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr
                  and len(p.stderr.strip().splitlines()) == 1)), f"--out {out}: exit {p.returncode}, stderr {p.stderr.strip()!r}"

        # Drawing: three PNG files.
        figures = os.path.join(tmp, "figures")
        p = subprocess.run([sys.executable, plot_py, "--out", figures, "--ladder", ladder, "--sweep", sweep, "--mixed",
                            mixed], capture_output=True, text=True)
        assert p.returncode == 0, f"drawing: exit code {p.returncode}: {p.stderr.strip()}"
        assert sorted(os.listdir(figures)) == ["ladder.png", "mixed_precision.png", "sweep.png"], (
            f"drawing leaves the three figures and nothing else: {sorted(os.listdir(figures))}")
        for name in ("ladder.png", "sweep.png", "mixed_precision.png"):
            path = os.path.join(figures, name)
            ok = os.path.exists(path) and os.path.getsize(path) > 1000
            if ok:
                with open(path, "rb") as f:
                    ok = f.read(8) == b"\x89PNG\r\n\x1a\n"
            assert ok, f"drawing: {name} is a PNG file"

        # The committed results can be drawn (the figures in results/h200 come from them).
        results = os.path.join(source_dir, "results", "h200")
        p = subprocess.run([sys.executable, plot_py, "--results", results, "--out", os.path.join(tmp, "committed")],
                           capture_output=True, text=True)
        assert p.returncode == 0, f"the committed CSVs: exit code {p.returncode}: {p.stderr.strip()}"
        # Drawn here, a committed plot is byte for byte the one in results/h200 (its fingerprint
        # included) when this machine has the renderer that drew it (matplotlib, FreeType and
        # Pillow); with another renderer, the same fingerprint and the same pixel size.
        renderer = dg.renderer_version()
        for name in ("ladder.png", "sweep.png", "mixed_precision.png"):
            drawn = os.path.join(tmp, "committed", name)
            with open(drawn, "rb") as f, open(os.path.join(results, name), "rb") as g:
                fresh, committed = f.read(), g.read()
            ours, theirs = dg.png_text(fresh), dg.png_text(committed)
            if theirs.get("Renderer") == renderer:
                assert fresh == committed, f"{name}: plot.py draws the committed bytes (else run scripts/diagrams.py)"
            else:
                assert ours.get("Fingerprint") == theirs.get("Fingerprint") and fresh[16:24] == committed[16:24], (f"{name}: plot.py draws the committed fingerprint and size (drawn with "
                      f"{theirs.get('Renderer')}, here {renderer}; else run scripts/diagrams.py)")


if __name__ == "__main__":  # python3 tests/host/test_plot.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
