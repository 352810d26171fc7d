"""The ladder as a plot: the effective bandwidth of every stage and baseline at one n
(the reduce table's CSV, reduce_2p28.csv), CUB's and the theoretical peak marked."""

import math

FIGURE = "ladder.png"
ABOUT = "GB/s of every stage and baseline at 2^28, with CUB and the peak"
FOLDERS = ("results/h200", "results/h100")  # a data plot: drawn in each folder from its own CSV
CSV = "reduce_2p28.csv"
COLUMNS = ["key", "stage", "kind", "gbs", "check"]


def inputs(dg, root, results):
    return from_csv(dg, results / CSV)


def from_csv(dg, path):
    """Bars in table order: (label, GB/s, verified?), CUB's GB/s and the peak. The CSV must
    be one run at one n: a sweep would put one bar per stage and size."""
    t = dg.result_files.read_table(str(path), COLUMNS)
    keys = [row["key"] for row in t.rows]
    if t.meta.get("n") == "sweep" or len(set(keys)) != len(keys):
        raise dg.DiagramError(f"{t.label}: a sweep (a stage at several n), not one run at one n: the ladder takes a "
                              "reduce CSV of a single --n, such as reduce_2p28.csv")
    bars = [(f"{row['key']}  {row['stage']}", t.number(row, "gbs"), row["check"] == "ok") for row in t.rows]
    cub = [gbs for (_, gbs, _), key in zip(bars, keys) if key == "cub"]
    if not cub:
        raise dg.DiagramError(f"{t.label}: no 'cub' row to compare with")
    return {"bars": bars, "cub_gbs": cub[0], "peak_gbs": t.peak_gbs(), "n": t.meta.get("n", "?"),
            "device": t.meta.get("device", "?")}


def draw(dg, plt, d):
    labels = [b[0] for b in d["bars"]]
    values = [0.0 if math.isnan(b[1]) else b[1] for b in d["bars"]]
    colors = [dg.BLUE if b[2] else "#bbbbbb" for b in d["bars"]]
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(labels) + 1.6), dpi=dg.PLOT_DPI)
    y = list(range(len(labels)))
    ax.barh(y, values, color=colors)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(d["peak_gbs"], color="black", linewidth=1.2, label=f"theoretical peak {d['peak_gbs']:.0f} GB/s")
    ax.axvline(d["cub_gbs"], color=dg.ORANGE, linestyle="--", linewidth=1.2, label=f"CUB {d['cub_gbs']:.0f} GB/s")
    for yi, v in zip(y, values):
        ax.text(v + d["peak_gbs"] * 0.01, yi, f"{v:.0f}", va="center", fontsize=7)
    ax.set_xlabel("effective bandwidth, GB/s (n x 4 bytes / median time)")
    ax.set_title(f"Sum of n = {dg.count_label(d['n'])} floats on {d['device']}; grey: not verified (no error bound)",
                 fontsize=9)
    ax.set_xlim(0, d["peak_gbs"] * 1.12)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return dg.FigureCanvas(fig)
