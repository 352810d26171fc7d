"""The occupancy sweep of occupancy/03_occupancy_sweep.cu as a plot: time and bandwidth
against the warps resident on each SM, one line per block size, from the committed
results/h200/occupancy_03_sweep.csv."""

FIGURE = "occupancy_sweep.png"
ABOUT = "chapter 21: the occupancy sweep, time and GB/s against resident warps per SM"

SOURCE = "occupancy/03_occupancy_sweep.cu"
RESULT = "occupancy_03_sweep.csv"


def inputs(dg, root, results):
    import result_files

    try:
        sweep = result_files.load(results / RESULT)
    except result_files.MissingFile as e:
        raise dg.DiagramError(f"{e.path} does not exist; the figure plots it.") from None
    except result_files.ResultFileError as e:
        raise dg.DiagramError(str(e)) from None
    for key in ("peak_gbs", "device", "n"):
        if key not in sweep.meta:
            raise dg.DiagramError(f"{RESULT} has no '# {key}:' metadata line.")
    rows = []
    for r in sweep.rows:
        rows.append({"block": int(sweep.number(r, "block")), "per_sm": int(sweep.number(r, "per_sm")),
                     "warps": int(sweep.number(r, "warps_per_sm")), "us": sweep.number(r, "median_us"),
                     "gbs": sweep.number(r, "gbs"), "occ": sweep.number(r, "occupancy_pct")})
    # The kernel the sweep times: one 4-byte load per thread and step (Little's law in the chapter).
    load_line = dg.require_line(root, SOURCE, r"^\s*sum \+= in\[i\];")
    return {"rows": rows, "peak_gbs": float(sweep.meta["peak_gbs"]), "device": sweep.meta["device"],
            "n": int(sweep.meta["n"]), "kernel": load_line, "file": f"results/h200/{RESULT}"}


def draw(dg, plt, d):
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 4.0), dpi=dg.DPI)
    blocks = sorted({r["block"] for r in d["rows"]})
    colours = [dg.BLUE, dg.ORANGE, dg.GREEN, dg.PURPLE, dg.SKY, dg.VERMILLION]
    markers = ["o", "s", "^", "D", "v", "P"]
    for i, b in enumerate(blocks):
        pts = sorted((r for r in d["rows"] if r["block"] == b), key=lambda r: r["warps"])
        x = [r["warps"] for r in pts]
        kw = dict(color=colours[i % len(colours)], marker=markers[i % len(markers)], markersize=10 - i,
                  markerfacecolor="none", linewidth=1.0, label=f"block {b}")
        left.plot(x, [r["us"] for r in pts], **kw)
        right.plot(x, [r["gbs"] for r in pts], **kw)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 2, 4, 8, 16, 32, 64])
        ax.set_xticklabels(["1", "2", "4", "8", "16", "32", "64"])
        ax.set_xlabel("resident warps per SM (64 = 100 % occupancy)")
        ax.grid(True, color=dg.PALE, linewidth=0.8)
    left.set_yscale("log")
    left.set_ylabel("median time (us, log scale)")
    left.set_title("each doubling of the warps halves the time")
    right.axhline(d["peak_gbs"], color=dg.GREY, linestyle="--", linewidth=1)
    right.text(1.1, d["peak_gbs"] * 0.95, f"theoretical peak, {d['peak_gbs']:.0f} GB/s", va="top", fontsize=8,
               color=dg.GREY)
    right.set_ylim(0, d["peak_gbs"] * 1.08)
    right.set_ylabel("GB/s")
    right.set_title("every block size on one line: only the warps count")
    right.legend(fontsize=8, loc="center left", frameon=False)
    fig.suptitle(f"Occupancy sweep on the {d['device']}, n = 2^{d['n'].bit_length() - 1} floats "
                 f"({d['file']})", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return dg.FigureCanvas(fig)
