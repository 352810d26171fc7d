"""The scan ladder against CUB and the copy: effective bandwidth (bytes read and written per
second) against n for the single-pass stages, CUB's DeviceScan::ExclusiveSum and the copy,
int32 exclusive sums, one panel per GPU, from the committed sweeps
(results/<gpu>/scan_int_exclusive.csv, scripts/device.sh scan)."""

FIGURE = "scan_bandwidth.png"
ABOUT = "scan: GB/s against n for stages 04-06, CUB and the copy, on the H200 and the H100"

GPUS = ("h200", "h100")
CSV = "scan_int_exclusive.csv"
# (key, label, colour, marker, line width)
LINES = [("copy", "copy (cudaMemcpy)", "GREY", "", 2.4),
         ("cub_exclusive", "CUB ExclusiveSum", "ORANGE", "s", 1.6),
         ("04", "04 look-back", "SKY", ".", 1.0),
         ("05", "05 16-byte loads", "GREEN", "^", 1.2),
         ("06", "06 L2 prefetch", "BLUE", "o", 1.8)]


def inputs(dg, root, results):
    import result_files

    panels = []
    for gpu in GPUS:
        path = results.parent / gpu / CSV
        try:
            f = result_files.load(path)
        except result_files.MissingFile as e:
            raise dg.DiagramError(f"{e.path} does not exist; the figure plots it.") from None
        except result_files.ResultFileError as e:
            raise dg.DiagramError(str(e)) from None
        for column in ("n", "key", "gbs"):
            if column not in f.columns:
                raise dg.DiagramError(f"results/{gpu}/{CSV} has no '{column}' column.")
        lines = []
        for key, label, colour, marker, width in LINES:
            # Powers of two only: the odd sizes of the sweep would zigzag the lines.
            pts = sorted((int(f.number(r, "n")), f.number(r, "gbs")) for r in f.rows
                         if r["key"] == key and int(f.number(r, "n")) & (int(f.number(r, "n")) - 1) == 0)
            if not pts:
                raise dg.DiagramError(f"results/{gpu}/{CSV} has no {key} rows at powers of two.")
            lines.append({"label": label, "colour": colour, "marker": marker, "width": width,
                          "n": [p[0] for p in pts], "gbs": [p[1] for p in pts]})
        panels.append({"gpu": gpu, "device": f.meta.get("device", gpu), "commit": f.meta.get("commit", "?"),
                       "peak": f.peak_gbs(), "lines": lines})
    return {"panels": panels}


def draw(dg, plt, d):
    fig, axes = plt.subplots(1, len(d["panels"]), figsize=(10, 4.4), dpi=dg.DPI, sharey=True)
    for ax, p in zip(axes, d["panels"]):
        for line in p["lines"]:
            ax.plot(line["n"], line["gbs"], color=getattr(dg, line["colour"]), marker=line["marker"] or None,
                    markersize=4, linewidth=line["width"], label=line["label"],
                    alpha=0.6 if line["colour"] == "GREY" else 1.0)
        ax.axhline(p["peak"], color=dg.INK, linewidth=0.8, linestyle=":")
        ax.text(2 ** 10, p["peak"] * 1.04, f"theoretical {p['peak']:.0f} GB/s", fontsize=7, color=dg.INK)
        ax.set_xscale("log", base=2)
        ax.set_xticks([2 ** k for k in range(10, 31, 4)])
        ax.set_xticklabels([f"2^{k}" for k in range(10, 31, 4)])
        ax.set_xlabel("n (int32 values)")
        ax.set_title(f"{p['device']} (commit {p['commit']})", fontsize=9)
        ax.grid(True, color=dg.PALE, linewidth=0.8)
    axes[0].set_ylabel("GB/s (input read + output written)")
    axes[0].legend(fontsize=7.5, loc="center left", frameon=True, framealpha=0.95, edgecolor=dg.PALE)
    fig.suptitle("Exclusive int32 scans beside CUB and the copy, L2 flushed before each repetition", fontsize=10)
    fig.text(0.01, 0.01, f"results/<gpu>/{CSV}", fontsize=7, color=dg.GREY)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return dg.FigureCanvas(fig)
