#!/usr/bin/env python3
"""Figures from the committed result CSVs (matplotlib, no GPU needed).

    scripts/plot.py [--results DIR] [--out DIR] [--ladder CSV] [--sweep CSV] [--mixed CSV]

draws
  ladder.png           effective bandwidth of every stage and baseline at one n (the
                       reduce table's CSV), with CUB's and the theoretical peak marked;
  sweep.png            GB/s against n on log axes for the stages in the sweep CSV and
                       CUB, with the peak line;
  mixed_precision.png  the mixed-precision dot products on a roofline: operations per
                       byte against operations per second, under the DRAM roof and,
                       for a GPU whose FP32 figure is known (FP32_FMA_GOPS), the FP32
                       compute roof.
Defaults: --results results/h200, --ladder DIR/reduce_2p28.csv, --sweep
DIR/sweep.csv, --mixed DIR/mixed_precision_2p28.csv, --out the results directory.
Every measured number comes from the CSV; the bandwidth peak from its '# peak_gbs:'
line. The one number that does not is the vendor's FP32 figure for the compute roof.
Each figure is written to a new file beside its target and renamed into place.
Exit codes: 0 success, 1 a figure could not be written, 2 a missing or malformed CSV
(or one of the wrong kind: a sweep given as --ladder) or bad usage, such as an --out
that cannot be written; every error is one sentence on stderr.
"""

from __future__ import annotations

import io
import math
import os
import sys

import output_files  # scripts/output_files.py: checked, then written whole
import result_files  # scripts/result_files.py: the one reader of result CSVs


# A CSV that cannot be drawn from; the message names the file and the problem. The
# figures' own checks raise the reader's error, so one handler reports them all.
PlotInputError = result_files.ResultFileError
Table = result_files.ResultFile
read_table = result_files.read_table


# --- what each figure shows, as plain data (tested without matplotlib) --------------

LADDER_COLUMNS = ["key", "stage", "kind", "gbs", "check"]


def ladder_data(t: Table) -> dict:
    """Bars in table order: (label, GB/s, verified?), CUB's GB/s and the peak. The CSV
    must be one run at one n: a sweep would put one bar per stage and size."""
    keys = [row["key"] for row in t.rows]
    if t.meta.get("n") == "sweep" or len(set(keys)) != len(keys):
        raise PlotInputError(f"{t.label}: a sweep (a stage at several n), not one run at one n: the ladder takes a "
                             "reduce CSV of a single --n, such as reduce_2p28.csv")
    bars = []
    cub = math.nan
    for row in t.rows:
        gbs = t.number(row, "gbs")
        label = f"{row['key']}  {row['stage']}"
        bars.append((label, gbs, row["check"] == "ok"))
        if row["key"] == "cub":
            cub = gbs
    if math.isnan(cub):
        raise PlotInputError(f"{t.label}: no 'cub' row to compare with")
    return {"bars": bars, "cub_gbs": cub, "peak_gbs": t.peak_gbs(), "n": t.meta.get("n", "?"),
            "device": t.meta.get("device", "?")}


SWEEP_COLUMNS = ["n", "key", "stage", "gbs"]


def sweep_data(t: Table) -> dict:
    """One series per stage key, in order of first appearance: [(n, GB/s)] sorted by n."""
    series: dict[str, dict] = {}
    for row in t.rows:
        n = t.number(row, "n")
        gbs = t.number(row, "gbs")
        if not n > 0:
            raise PlotInputError(f"{t.label}: n must be positive, not {row['n']}")
        s = series.setdefault(row["key"], {"label": f"{row['key']} {row['stage']}", "points": []})
        s["points"].append((n, gbs))
    for s in series.values():
        s["points"].sort()
    return {"series": series, "peak_gbs": t.peak_gbs(), "device": t.meta.get("device", "?")}


MIXED_COLUMNS = ["key", "variant", "bytes_per_element", "gmacs", "gbs", "check"]

# NVIDIA's published FP32 figure (billions of operations per second, a fused multiply-add
# counted as two) for the GPUs the results come from, by the device name in the CSV.
# The dot products issue FMAs, so this is their compute roof; the FP16, BF16 and INT8
# paths only raise it. A device not listed gets no compute roof.
FP32_FMA_GOPS = {"NVIDIA H200": 67000.0, "NVIDIA H100 80GB HBM3": 67000.0}


def mixed_data(t: Table) -> dict:
    """Per variant: operations per byte (2 per element pair: a multiply and an add, over
    the bytes of both inputs) and billions of operations per second achieved."""
    points = []
    for row in t.rows:
        bytes_per_pair = t.number(row, "bytes_per_element")
        gmacs = t.number(row, "gmacs")
        if not bytes_per_pair > 0:
            raise PlotInputError(f"{t.label}: bytes_per_element must be positive, not {row['bytes_per_element']}")
        points.append({"label": f"{row['key']} {row['variant']}", "intensity": 2.0 / bytes_per_pair,
                       "gops": 2.0 * gmacs, "gbs": t.number(row, "gbs"), "ok": row["check"] == "ok"})
    device = t.meta.get("device", "?")
    return {"points": points, "peak_gbs": t.peak_gbs(), "n": t.meta.get("n", "?"), "device": device,
            "compute_gops": FP32_FMA_GOPS.get(device)}


# --- drawing ----------------------------------------------------------------------------


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotInputError("matplotlib is not installed (apt-get install python3-matplotlib, "
                             "or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, path: str) -> None:
    """The figure as a PNG file, written whole through a new file beside `path`."""
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    output_files.write(path, png.getvalue())


def count_label(n: str) -> str:
    try:
        v = int(float(n))
    except ValueError:
        return n
    e = int(round(math.log2(v))) if v > 0 else 0
    return f"2^{e}" if v > 0 and 2 ** e == v else str(v)


def draw_ladder(d: dict, path: str) -> None:
    plt = pyplot()
    labels = [b[0] for b in d["bars"]]
    values = [0.0 if math.isnan(b[1]) else b[1] for b in d["bars"]]
    colors = ["#4c72b0" if b[2] else "#bbbbbb" for b in d["bars"]]
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(labels) + 1.6))
    y = list(range(len(labels)))
    ax.barh(y, values, color=colors)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(d["peak_gbs"], color="black", linewidth=1.2, label=f"theoretical peak {d['peak_gbs']:.0f} GB/s")
    ax.axvline(d["cub_gbs"], color="#dd8452", linestyle="--", linewidth=1.2, label=f"CUB {d['cub_gbs']:.0f} GB/s")
    for yi, v in zip(y, values):
        ax.text(v + d["peak_gbs"] * 0.01, yi, f"{v:.0f}", va="center", fontsize=7)
    ax.set_xlabel("effective bandwidth, GB/s (n x 4 bytes / median time)")
    ax.set_title(f"Sum of n = {count_label(d['n'])} floats on {d['device']}; grey: not verified (no error bound)",
                 fontsize=9)
    ax.set_xlim(0, d["peak_gbs"] * 1.12)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


# The peers drawn beside a sweep when their files sit in the same folder
# (scripts/device_peers.sh), and the label each gets: the ceiling is the fastest of its
# streaming kernels at each n.
PEER_SERIES = [("peers_cub_modes.csv", "cub_gpu_to_gpu", "peer: CUB 3.5 gpu_to_gpu (own run)"),
               ("peers_torch_cupy.csv", "torch_sum", "peer: torch.sum (own run)"),
               ("peers_torch_cupy.csv", "cupy_sum", "peer: cupy.sum (own run)")]


def peer_series(folder: str) -> tuple[dict, list]:
    """[(label, points)] of the peers found beside the sweep, and the ceiling's points."""
    found = {}
    for name, key, label in PEER_SERIES:
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            continue
        t = read_table(path, ["n", "key", "gbs"])
        points = sorted((t.number(r, "n"), t.number(r, "gbs")) for r in t.rows if r["key"] == key)
        if points:
            found[label] = points
    ceiling = []
    path = os.path.join(folder, "peers_ceiling.csv")
    if os.path.exists(path):
        t = read_table(path, ["n", "gbs"])
        best: dict[float, float] = {}
        for r in t.rows:
            n = t.number(r, "n")
            best[n] = max(best.get(n, 0.0), t.number(r, "gbs"))
        ceiling = sorted(best.items())
    return found, ceiling


def draw_sweep(d: dict, path: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    for key, s in d["series"].items():
        xs = [p[0] for p in s["points"]]
        ys = [p[1] for p in s["points"]]
        style = {"linestyle": "--", "color": "#dd8452", "linewidth": 2} if key == "cub" else {"linewidth": 1.4}
        ax.plot(xs, ys, marker="o", markersize=3, label=s["label"], **style)
    for label, points in d.get("peers", {}).items():
        ax.plot([p[0] for p in points], [p[1] for p in points], linestyle=":", linewidth=1.4, marker="x",
                markersize=3, label=label)
    if d.get("ceiling"):
        pts = d["ceiling"]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color="grey", linewidth=2.5, alpha=0.5,
                label="ceiling: stream the bytes, combine nothing (own run)")
    ax.axhline(d["peak_gbs"], color="black", linewidth=1.0, label=f"theoretical peak {d['peak_gbs']:.0f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (floats)")
    ax.set_ylabel("effective bandwidth, GB/s")
    ax.set_title(f"Bandwidth against size on {d['device']}, L2 flushed before each repetition", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def draw_mixed(d: dict, path: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    xs = [p["intensity"] for p in d["points"]]
    compute = d.get("compute_gops")
    ridge = compute / d["peak_gbs"] if compute else None
    lo = min(xs) / 2
    hi = max(max(xs) * 2, ridge * 2 if ridge else 0)
    memory_end = ridge if ridge else hi
    ax.plot([lo, memory_end], [d["peak_gbs"] * lo, d["peak_gbs"] * memory_end], color="black", linewidth=1.0,
            label=f"DRAM roof: {d['peak_gbs']:.0f} GB/s x ops per byte")
    if ridge:
        ax.plot([ridge, hi], [compute, compute], color="black", linestyle="--", linewidth=1.0,
                label=f"FP32 FMA roof: {compute / 1000:.0f} Top/s (vendor figure); ridge at {ridge:.1f} ops per byte")
    # One colour and marker per variant, named in the legend: variants of the same
    # element size share an intensity, so text beside the points would overlap.
    colours = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#f0e442"]
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    # Hollow markers of different shapes and sizes stay visible when points coincide.
    for i, p in enumerate(d["points"]):
        colour = colours[i % len(colours)]
        ax.scatter([p["intensity"]], [p["gops"]], s=110 - 14 * (i % 5), facecolors="none", edgecolors=colour,
                   linewidths=1.6, marker=markers[i % len(markers)] if p["ok"] else "x", zorder=3,
                   label=f"{p['label']}: {p['gops']:.0f} Gop/s, {p['gbs']:.0f} GB/s" + ("" if p["ok"] else " (not ok)"))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("operations per byte read (a multiply and an add per element pair)")
    ax.set_ylabel("Gop/s achieved")
    where = "far left of the ridge" if ridge else "(no compute roof known for this GPU)"
    ax.set_title(f"Dot products of n = {count_label(d['n'])} on {d['device']}: under the memory roof, {where}",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def main(argv: list[str]) -> int:
    p = output_files.Parser(prog="plot.py", description="Figures from the committed result CSVs.")
    p.add_argument("--results", help="directory of the CSVs (default results/h200)")
    p.add_argument("--out", help="where the PNGs go (default: the results directory)")
    p.add_argument("--ladder", help="reduce table CSV (default RESULTS/reduce_2p28.csv)")
    p.add_argument("--sweep", help="sweep CSV (default RESULTS/sweep.csv)")
    p.add_argument("--mixed", help="mixed-precision CSV (default RESULTS/mixed_precision_2p28.csv)")
    args = p.parse_args(argv)
    # Every name checked before anything is read or drawn: the results folder, when it
    # is named or used, must exist (a typo would otherwise skip every figure and
    # succeed), an empty name is refused, and the output folder must be one files can
    # be written in.
    uses_results = args.results is not None or args.out is None or None in (args.ladder, args.sweep, args.mixed)
    if args.results is None:
        args.results = "results/h200"
    problem = uses_results and output_files.input_problem(args.results, "--results", needs="that holds the result CSVs")
    out = args.out if args.out is not None else args.results
    problem = problem or output_files.directory_problem(out, "--out" if args.out is not None else "--results")
    if problem:
        print(f"plot.py: {problem}", file=sys.stderr)
        return 2
    jobs = [
        (args.ladder or os.path.join(args.results, "reduce_2p28.csv"), LADDER_COLUMNS, ladder_data, draw_ladder,
         "ladder.png"),
        (args.sweep or os.path.join(args.results, "sweep.csv"), SWEEP_COLUMNS, sweep_data, draw_sweep, "sweep.png"),
        (args.mixed or os.path.join(args.results, "mixed_precision_2p28.csv"), MIXED_COLUMNS, mixed_data, draw_mixed,
         "mixed_precision.png"),
    ]
    try:
        given = {"ladder.png": args.ladder, "sweep.png": args.sweep, "mixed_precision.png": args.mixed}
        for path, _, _, _, name in jobs:
            if not given[name] and not os.path.exists(path):
                print(f"plot.py: skipped {name}: {path} does not exist (this GPU has no such results)")
        jobs = [j for j in jobs if given[j[4]] or os.path.exists(j[0])]
        prepared = [(read_table(path, cols), data, draw, name) for path, cols, data, draw, name in jobs]
        figures = [(data(t), draw, name) for t, data, draw, name in prepared]
        for d, _, name in figures:
            if name == "sweep.png":
                sweep_path = args.sweep or os.path.join(args.results, "sweep.csv")
                d["peers"], d["ceiling"] = peer_series(os.path.dirname(sweep_path) or ".")
        for _, _, name in figures:
            problem = os.path.exists(out) and output_files.problem(os.path.join(out, name), "the figure")
            if problem:
                raise PlotInputError(problem)
        os.makedirs(out, exist_ok=True)
        for d, draw, name in figures:
            target = os.path.join(out, name)
            draw(d, target)
            print(f"wrote {target}")
    except PlotInputError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"plot.py: cannot write a figure in '{out}': {e.strerror or e}.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
