"""Effective bandwidth against the stride between the lanes' floats (with the random order
as a line) and against the start offset, from access_01_stride_offset.csv."""

import math

FIGURE = "access_stride.png"
ABOUT = "chapter 24: GB/s against the lanes' stride and the start offset"
FOLDERS = ("results/h200",)  # a data plot: drawn in the folder from its own CSV
CSV = "access_01_stride_offset.csv"
COLUMNS = ["key", "map", "step", "gbs", "sectors_pred", "check"]


def inputs(dg, root, results):
    return from_csv(dg, results / CSV)


def from_csv(dg, path):
    """(stride, GB/s, predicted sectors) sorted by stride, (offset, GB/s) sorted by
    offset, the random row's GB/s and the DRAM peak."""
    t = dg.result_files.read_table(str(path), COLUMNS)
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
            raise dg.DiagramError(f"{t.label}: row {row['key']} has map '{row['map']}', not stride, offset or random")
    if not strides or not offsets:
        raise dg.DiagramError(f"{t.label}: needs both stride and offset rows")
    return {"strides": sorted(strides), "offsets": sorted(offsets), "random": random, "peak_gbs": t.peak_gbs(),
            "n": t.meta.get("n", "?"), "device": t.meta.get("device", "?")}


def draw(dg, plt, d):
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True, dpi=dg.PLOT_DPI)
    xs = [s for s, _, _ in d["strides"]]
    left.plot(xs, [g for _, g, _ in d["strides"]], marker="o", color=dg.BLUE, label="stride s: in[j x s]")
    for s, g, sect in d["strides"]:
        left.annotate(f"{sect:.0f} sect/req", (s, g), textcoords="offset points", xytext=(4, 6), fontsize=7)
    if not math.isnan(d["random"]):
        left.axhline(d["random"], color=dg.VERMILLION, linestyle=":", label=f"random order: {d['random']:.0f} GB/s")
    left.set_xscale("log", base=2)
    left.set_xticks(xs)
    left.set_xticklabels([f"{s:.0f}" for s in xs])
    left.set_xlabel("stride between the lanes' floats")
    left.set_ylabel("effective GB/s (bytes read and written / time)")
    right.plot([o for o, _ in d["offsets"]], [g for _, g in d["offsets"]], marker=".", color=dg.GREEN,
               label="offset o: in[o + j]")
    right.set_xlabel("start offset, floats past a 128-byte line")
    right.set_xticks(range(0, 32, 4))
    for ax in (left, right):
        ax.axhline(d["peak_gbs"], color="black", linewidth=1.0, label=f"theoretical peak {d['peak_gbs']:.0f} GB/s")
        ax.set_ylim(0, d["peak_gbs"] * 1.08)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower left" if ax is right else "upper right")
    fig.suptitle(f"Reading n = {dg.count_label(d['n'])} floats on {d['device']}, L2 flushed before each repetition",
                 fontsize=9)
    fig.tight_layout()
    return dg.FigureCanvas(fig)
