#!/usr/bin/env python3
"""Figures of the access-pattern programs, from their result CSVs (matplotlib, no GPU).

    scripts/plot_access.py [--results DIR] [--out DIR]

draws
  access_stride.png  effective bandwidth against the stride between the lanes' floats
                     (with the random order as a line) and against the start offset,
                     from access_01_stride_offset.csv;
  access_banks.png   the time of the strided shared-memory reads against the stride,
                     without and with padding, next to the predicted wavefronts per
                     load times the stride-1 time, from access_05_bank_padding.csv.
Defaults: --results results/h200, --out the results directory. Every number comes from
the CSVs (read and checked by scripts/result_files.py). Each figure is written to a new
file beside its target and renamed into place (scripts/output_files.py). Exit codes: 0
success, 1 a figure could not be written, 2 a missing or malformed CSV or bad usage,
such as a --results that is not a folder or an --out that cannot be written (one
sentence on stderr; nothing written).
"""

from __future__ import annotations

import math
import os
import sys

import output_files  # scripts/output_files.py: checked, then written whole
from plot import count_label, pyplot, save  # scripts/plot.py: the figures' shared drawing helpers
from result_files import ResultFile, ResultFileError, read_table  # scripts/result_files.py: the CSV reader

STRIDE_COLUMNS = ["key", "map", "step", "gbs", "sectors_pred", "check"]
BANK_COLUMNS = ["stride", "padded", "median_us", "wavefronts_pred", "check"]


def stride_data(t: ResultFile) -> dict:
    """(stride, GB/s, predicted sectors) sorted by stride, (offset, GB/s) sorted by
    offset, the random row's GB/s and the DRAM peak."""
    strides, offsets, random = [], [], math.nan
    for row in t.rows:
        gbs = t.number(row, "gbs") if row["check"] == "ok" else math.nan
        if row["map"] == "stride":
            strides.append((t.number(row, "step"), gbs, t.number(row, "sectors_pred")))
        elif row["map"] == "offset":
            offsets.append((t.number(row, "step"), gbs))
        elif row["map"] == "random":
            random = gbs
        else:
            raise ResultFileError(f"{t.label}: row {row['key']} has map '{row['map']}', not stride, offset or random")
    if not strides or not offsets:
        raise ResultFileError(f"{t.label}: needs both stride and offset rows")
    return {"strides": sorted(strides), "offsets": sorted(offsets), "random": random, "peak_gbs": t.peak_gbs(),
            "n": t.meta.get("n", "?"), "device": t.meta.get("device", "?")}


def bank_data(t: ResultFile) -> dict:
    """Per padding (0, 1): [(stride, median us, predicted wavefronts)] sorted by stride,
    and the unpadded stride-1 time every prediction is scaled by."""
    series: dict[int, list] = {0: [], 1: []}
    for row in t.rows:
        pad = int(t.number(row, "padded"))
        if pad not in series:
            raise ResultFileError(f"{t.label}: padded must be 0 or 1, not {row['padded']}")
        us = t.number(row, "median_us") if row["check"] == "ok" else math.nan
        series[pad].append((t.number(row, "stride"), us, t.number(row, "wavefronts_pred")))
    base = [us for s, us, _ in series[0] if s == 1]
    if not base or math.isnan(base[0]):
        raise ResultFileError(f"{t.label}: no verified unpadded stride-1 row to scale the prediction by")
    return {"series": {k: sorted(v) for k, v in series.items()}, "base_us": base[0], "device": t.meta.get("device", "?")}


def draw_stride(d: dict, path: str) -> None:
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    xs = [s for s, _, _ in d["strides"]]
    left.plot(xs, [g for _, g, _ in d["strides"]], marker="o", label="stride s: in[j x s]")
    for s, g, sect in d["strides"]:
        left.annotate(f"{sect:.0f} sect/req", (s, g), textcoords="offset points", xytext=(4, 6), fontsize=7)
    if not math.isnan(d["random"]):
        left.axhline(d["random"], color="#c44e52", linestyle=":", label=f"random order: {d['random']:.0f} GB/s")
    left.set_xscale("log", base=2)
    left.set_xticks(xs)
    left.set_xticklabels([f"{s:.0f}" for s in xs])
    left.set_xlabel("stride between the lanes' floats")
    left.set_ylabel("effective GB/s (bytes read and written / time)")
    right.plot([o for o, _ in d["offsets"]], [g for _, g in d["offsets"]], marker=".", color="#55a868",
               label="offset o: in[o + j]")
    right.set_xlabel("start offset, floats past a 128-byte line")
    right.set_xticks(range(0, 32, 4))
    for ax in (left, right):
        ax.axhline(d["peak_gbs"], color="black", linewidth=1.0, label=f"theoretical peak {d['peak_gbs']:.0f} GB/s")
        ax.set_ylim(0, d["peak_gbs"] * 1.08)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower left" if ax is right else "upper right")
    fig.suptitle(f"Reading n = {count_label(d['n'])} floats on {d['device']}, L2 flushed before each repetition", fontsize=9)
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def draw_banks(d: dict, path: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    styles = {0: ("no padding", "#4c72b0"), 1: ("one pad word per 32", "#dd8452")}
    for pad, points in d["series"].items():
        label, color = styles[pad]
        xs = [s for s, _, _ in points]
        ax.plot(xs, [us for _, us, _ in points], marker="o", markersize=3, color=color, label=f"{label}: measured")
        ax.plot(xs, [w * d["base_us"] for _, _, w in points], linestyle=":", color=color,
                label=f"{label}: predicted wavefronts x stride-1 time")
    ax.set_yscale("log")
    ax.set_xticks(range(1, 34, 2))
    ax.set_xlabel("stride between the lanes' shared-memory words")
    ax.set_ylabel("median time (us)")
    ax.set_title(f"Shared-memory reads at a stride on {d['device']}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def main(argv: list[str]) -> int:
    p = output_files.Parser(prog="plot_access.py", description="Figures of the access-pattern programs.")
    p.add_argument("--results", default="results/h200", help="directory of the CSVs (default results/h200)")
    p.add_argument("--out", help="where the PNGs go (default: the results directory)")
    args = p.parse_args(argv)
    out = args.out if args.out is not None else args.results
    problem = (output_files.input_problem(args.results, "--results", needs="that holds the access_*.csv files") or
               output_files.directory_problem(out, "--out" if args.out is not None else "--results"))
    if problem:
        print(f"plot_access.py: {problem}", file=sys.stderr)
        return 2
    jobs = [("access_01_stride_offset.csv", STRIDE_COLUMNS, stride_data, draw_stride, "access_stride.png"),
            ("access_05_bank_padding.csv", BANK_COLUMNS, bank_data, draw_banks, "access_banks.png")]
    try:
        figures = [(data(read_table(os.path.join(args.results, csv), cols)), draw, name)
                   for csv, cols, data, draw, name in jobs]
        for _, _, name in figures:
            problem = os.path.isdir(out) and output_files.problem(os.path.join(out, name), "the figure")
            if problem:
                raise ResultFileError(problem)
        os.makedirs(out, exist_ok=True)
        for d, draw, name in figures:
            target = os.path.join(out, name)
            draw(d, target)
            print(f"wrote {target}")
    except ResultFileError as e:
        print(f"plot_access.py: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"plot_access.py: cannot write a figure in '{out}': {e.strerror or e}.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
