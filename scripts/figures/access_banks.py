"""The time of the strided shared-memory reads against the stride, without and with
padding, next to the predicted wavefronts per load times the stride-1 time, from
access_05_bank_padding.csv."""

import math

FIGURE = "access_banks.png"
ABOUT = "chapter 25: shared-memory reads at a stride, measured and predicted, with and without padding"
FOLDERS = ("results/h200",)  # a data plot: drawn in the folder from its own CSV
CSV = "access_05_bank_padding.csv"
COLUMNS = ["stride", "padded", "median_us", "wavefronts_pred", "check"]


def inputs(dg, root, results):
    return from_csv(dg, results / CSV)


def from_csv(dg, path):
    """Per padding (0, 1): [(stride, median us, predicted wavefronts)] sorted by stride,
    and the unpadded stride-1 time every prediction is scaled by."""
    t = dg.result_files.read_table(str(path), COLUMNS)
    series = {0: [], 1: []}
    for row in t.rows:
        pad = int(t.number(row, "padded"))
        if pad not in series:
            raise dg.DiagramError(f"{t.label}: padded must be 0 or 1, not {row['padded']}")
        us = t.number(row, "median_us") if row["check"] == "ok" else math.nan
        series[pad].append((t.number(row, "stride"), us, t.number(row, "wavefronts_pred")))
    base = [us for s, us, _ in series[0] if s == 1]
    if not base or math.isnan(base[0]):
        raise dg.DiagramError(f"{t.label}: no verified unpadded stride-1 row to scale the prediction by")
    return {"series": {k: sorted(v) for k, v in series.items()}, "base_us": base[0],
            "device": t.meta.get("device", "?")}


def draw(dg, plt, d):
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=dg.PLOT_DPI)
    styles = {0: ("no padding", dg.BLUE), 1: ("one pad word per 32", dg.ORANGE)}
    for pad, points in sorted(d["series"].items()):
        label, color = styles[int(pad)]
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
    return dg.FigureCanvas(fig)
