"""The sweep as a plot: GB/s against n on log axes for the stages of sweep.csv and CUB,
with the peak line, and the peers and the ceiling when their files sit beside it
(scripts/device.sh peers)."""

FIGURE = "sweep.png"
ABOUT = "GB/s against n for the swept stages, CUB, the peers and the ceiling"
FOLDERS = ("results/h200", "results/h100")  # a data plot: drawn in each folder from its own CSVs
CSV = "sweep.csv"
COLUMNS = ["n", "key", "stage", "gbs"]
# The peers drawn beside a sweep when their files sit in the same folder, and the label
# each gets: the ceiling is the fastest of its streaming kernels at each n.
PEERS = [("peers_cub_modes.csv", "cub_gpu_to_gpu", "peer: CUB 3.5 gpu_to_gpu (own run)"),
         ("peers_torch_cupy.csv", "torch_sum", "peer: torch.sum (own run)"),
         ("peers_torch_cupy.csv", "cupy_sum", "peer: cupy.sum (own run)")]
CEILING = "peers_ceiling.csv"


def inputs(dg, root, results):
    return from_csv(dg, results / CSV)


def from_csv(dg, path):
    """One series per stage key, in order of first appearance: [(n, GB/s)] sorted by n;
    the peers' series and the ceiling's points from the files beside it."""
    t = dg.result_files.read_table(str(path), COLUMNS)
    series = {}
    for row in t.rows:
        n, gbs = t.number(row, "n"), t.number(row, "gbs")
        if not n > 0:
            raise dg.DiagramError(f"{t.label}: n must be positive, not {row['n']}")
        s = series.setdefault(row["key"], {"label": f"{row['key']} {row['stage']}", "points": []})
        s["points"].append((n, gbs))
    for s in series.values():
        s["points"].sort()
    peers = {}
    for name, key, label in PEERS:
        if (path.parent / name).exists():
            p = dg.result_files.read_table(str(path.parent / name), ["n", "key", "gbs"])
            points = sorted((p.number(r, "n"), p.number(r, "gbs")) for r in p.rows if r["key"] == key)
            if points:
                peers[label] = points
    best = {}
    if (path.parent / CEILING).exists():
        c = dg.result_files.read_table(str(path.parent / CEILING), ["n", "gbs"])
        for r in c.rows:
            best[c.number(r, "n")] = max(best.get(c.number(r, "n"), 0.0), c.number(r, "gbs"))
    return {"series": series, "peak_gbs": t.peak_gbs(), "device": t.meta.get("device", "?"), "peers": peers,
            "ceiling": sorted(best.items())}


def draw(dg, plt, d):
    fig, ax = plt.subplots(figsize=(8, 5), dpi=dg.PLOT_DPI)
    for key, s in d["series"].items():
        style = {"linestyle": "--", "color": dg.ORANGE, "linewidth": 2} if key == "cub" else {"linewidth": 1.4}
        ax.plot([p[0] for p in s["points"]], [p[1] for p in s["points"]], marker="o", markersize=3, label=s["label"],
                **style)
    for label, points in d["peers"].items():
        ax.plot([p[0] for p in points], [p[1] for p in points], linestyle=":", linewidth=1.4, marker="x",
                markersize=3, label=label)
    if d["ceiling"]:
        ax.plot([p[0] for p in d["ceiling"]], [p[1] for p in d["ceiling"]], color="grey", linewidth=2.5, alpha=0.5,
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
    return dg.FigureCanvas(fig)
