"""The mixed-precision dot products on a roofline: operations per byte against operations
per second, under the DRAM roof and, for a GPU whose FP32 figure is known
(FP32_FMA_GOPS), the FP32 compute roof. Every measured number comes from
mixed_precision_2p28.csv; the one that does not is the vendor's FP32 figure."""

FIGURE = "mixed_precision.png"
ABOUT = "chapter 20: the dot products under the DRAM roof, operations per byte against Gop/s"
FOLDERS = ("results/h200",)  # a data plot: drawn in the folder from its own CSV
CSV = "mixed_precision_2p28.csv"
COLUMNS = ["key", "variant", "bytes_per_element", "gmacs", "gbs", "check"]
# NVIDIA's published FP32 figure (billions of operations per second, a fused multiply-add
# counted as two) for the GPUs the results come from, by the device name in the CSV.
# The dot products issue FMAs, so this is their compute roof; the FP16, BF16 and INT8
# paths only raise it. A device not listed gets no compute roof.
FP32_FMA_GOPS = {"NVIDIA H200": 67000.0, "NVIDIA H100 80GB HBM3": 67000.0}


def inputs(dg, root, results):
    return from_csv(dg, results / CSV)


def from_csv(dg, path):
    """Per variant: operations per byte (2 per element pair: a multiply and an add, over
    the bytes of both inputs) and billions of operations per second achieved."""
    t = dg.result_files.read_table(str(path), COLUMNS)
    points = []
    for row in t.rows:
        bytes_per_pair = t.number(row, "bytes_per_element")
        if not bytes_per_pair > 0:
            raise dg.DiagramError(f"{t.label}: bytes_per_element must be positive, not {row['bytes_per_element']}")
        points.append({"label": f"{row['key']} {row['variant']}", "intensity": 2.0 / bytes_per_pair,
                       "gops": 2.0 * t.number(row, "gmacs"), "gbs": t.number(row, "gbs"), "ok": row["check"] == "ok"})
    device = t.meta.get("device", "?")
    return {"points": points, "peak_gbs": t.peak_gbs(), "n": t.meta.get("n", "?"), "device": device,
            "compute_gops": FP32_FMA_GOPS.get(device)}


def draw(dg, plt, d):
    fig, ax = plt.subplots(figsize=(8, 5), dpi=dg.PLOT_DPI)
    xs = [p["intensity"] for p in d["points"]]
    compute = d["compute_gops"]
    ridge = compute / d["peak_gbs"] if compute else None
    lo, hi = min(xs) / 2, max(max(xs) * 2, ridge * 2 if ridge else 0)
    end = ridge if ridge else hi
    ax.plot([lo, end], [d["peak_gbs"] * lo, d["peak_gbs"] * end], color="black", linewidth=1.0,
            label=f"DRAM roof: {d['peak_gbs']:.0f} GB/s x ops per byte")
    if ridge:
        ax.plot([ridge, hi], [compute, compute], color="black", linestyle="--", linewidth=1.0,
                label=f"FP32 FMA roof: {compute / 1000:.0f} Top/s (vendor figure); ridge at {ridge:.1f} ops per byte")
    # One colour and marker per variant, named in the legend: variants of the same element
    # size share an intensity, so text beside the points would overlap. Hollow markers of
    # different shapes and sizes stay visible when points coincide.
    colours = [dg.BLUE, dg.ORANGE, dg.GREEN, dg.PURPLE, dg.VERMILLION, dg.SKY, dg.YELLOW]
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    for i, p in enumerate(d["points"]):
        ax.scatter([p["intensity"]], [p["gops"]], s=110 - 14 * (i % 5), facecolors="none",
                   edgecolors=colours[i % len(colours)], linewidths=1.6,
                   marker=markers[i % len(markers)] if p["ok"] else "x", zorder=3,
                   label=f"{p['label']}: {p['gops']:.0f} Gop/s, {p['gbs']:.0f} GB/s" + ("" if p["ok"] else " (not ok)"))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("operations per byte read (a multiply and an add per element pair)")
    ax.set_ylabel("Gop/s achieved")
    where = "far left of the ridge" if ridge else "(no compute roof known for this GPU)"
    ax.set_title(f"Dot products of n = {dg.count_label(d['n'])} on {d['device']}: under the memory roof, {where}",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return dg.FigureCanvas(fig)
