"""The roofline of chapter 00 with the stages on it: a float sum does one addition per
4-byte element (0.25 FLOP per byte), so every stage sits on one vertical line far left of
the ridge, and its height is its measured bandwidth (results/h200/reduce_2p24.csv) times
0.25. The right panel zooms in on that line: each stage's GB/s against the peak."""

FIGURE = "roofline.png"
ABOUT = "00: the roofline, and every stage's measured bandwidth at 0.25 FLOP per byte"

STAGE01 = "reduction/01_naive_global.cu"
FLOP_PER_BYTE = 0.25  # one addition per 4-byte float
# The arithmetic roof for plain additions: each of an SM's 128 FP32 lanes finishes one add
# per cycle (NVIDIA Hopper architecture whitepaper), at the H200 SXM's boost clock of
# 1,980 MHz (NVIDIA's H200 datasheet). The 67 TFLOP/s NVIDIA quotes counts an FMA as two.
FP32_LANES_PER_SM = 128
BOOST_CLOCK_GHZ = 1.98


def inputs(dg, root, results):
    dg.require_line(root, STAGE01, r"dst\[i\] = src\[2 \* i\] \+ src\[2 \* i \+ 1\];")  # one add per element read
    f = dg.result_files.load(results / "reduce_2p24.csv")
    for key in ("peak_gbs", "sm_count", "device"):
        if key not in f.meta:
            raise dg.DiagramError(f"{f.path} has no '# {key}:' metadata line.")
    rows = [(r["key"], float(r["gbs"])) for r in f.rows if r.get("kind") == "stage" or r["key"] == "cub"]
    if not rows:
        raise dg.DiagramError(f"{f.path} has no stage rows.")
    sm = int(f.meta["sm_count"])
    return {"peak_gbs": float(f.meta["peak_gbs"]), "sm_count": sm, "device": f.meta["device"],
            "add_tflops": sm * FP32_LANES_PER_SM * BOOST_CLOCK_GHZ / 1000, "intensity": FLOP_PER_BYTE,
            "rows": rows, "file": f"results/h200/{f.path.name}", "source": STAGE01}


def draw(dg, plt, d):
    fig = plt.figure(figsize=(10.0, 4.4), dpi=dg.DPI)
    ax = fig.add_axes([0.07, 0.14, 0.45, 0.70])
    peak_gflops = d["add_tflops"] * 1000
    bw = d["peak_gbs"]
    ridge = peak_gflops / bw
    xs = [0.01, ridge, 1000]
    ax.plot(xs, [min(x * bw, peak_gflops) for x in xs], color=dg.INK, lw=1.4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(0.01, 1000)
    ax.set_ylim(10, 1e5)
    ax.axvline(d["intensity"], color=dg.GREY, lw=0.8, ls="--")
    ax.text(d["intensity"] * 1.15, 14, f"a float sum:\n{d['intensity']} FLOP/byte", fontsize=8, color=dg.INK)
    ax.text(ridge * 1.2, peak_gflops * 0.55, f"ridge: {ridge:.1f} FLOP/byte", fontsize=8)
    # The label runs along the memory roof, just above it (the angle of a slope of one decade per decade here).
    ax.text(0.011, 0.011 * bw * 1.7, f"memory roof: {bw:,.0f} GB/s", fontsize=8, rotation=40.5,
            rotation_mode="anchor", color=dg.INK)
    ax.text(40, peak_gflops * 1.25, f"adds: {d['add_tflops']:.1f} TFLOP/s", fontsize=8, ha="center")
    for key, gbs in d["rows"]:
        colour = dg.ORANGE if key == "cub" else dg.BLUE
        ax.plot([d["intensity"]], [gbs * d["intensity"]], marker="o", ms=3.5, color=colour, mec=dg.INK, mew=0.3)
    ax.set_xlabel("arithmetic intensity (FLOP per byte read)", fontsize=8.5)
    ax.set_ylabel("GFLOP/s", fontsize=8.5)
    ax.tick_params(labelsize=7.5)
    ax.set_title(f"The roofline of the {d['device']}: the sum is far below the ridge", fontsize=9.5, loc="left")
    # Right: the line at 0.25 FLOP/byte, as bandwidth.
    bx = fig.add_axes([0.62, 0.14, 0.35, 0.70])
    keys = [k for k, _ in d["rows"]]
    vals = [g for _, g in d["rows"]]
    ys = list(range(len(keys)))
    bx.barh(ys, vals, color=[dg.ORANGE if k == "cub" else dg.BLUE for k in keys], edgecolor=dg.INK, linewidth=0.3,
            height=0.7)
    bx.axvline(bw, color=dg.VERMILLION, lw=1.2)
    bx.text(bw * 0.98, len(keys) - 0.2, f"peak {bw:,.0f} GB/s", fontsize=7.5, ha="right", color=dg.VERMILLION)
    bx.set_yticks(ys)
    bx.set_yticklabels([("CUB" if k == "cub" else k) for k in keys], fontsize=7)
    bx.invert_yaxis()
    bx.set_xlim(0, bw * 1.08)
    bx.set_xlabel("GB/s (4n bytes / median time), n = 2^24", fontsize=8.5)
    bx.tick_params(labelsize=7.5)
    for side in ("top", "right"):
        bx.spines[side].set_visible(False)
    bx.set_title("Each stage's height on that line, as bandwidth", fontsize=9.5, loc="left")
    fig.text(0.07, 0.015, f"Dots and bars: the stages (blue) and CUB (orange), measured ({d['file']}). "
             "Arithmetic roof: 128 FP32 lanes x 1.98 GHz per SM, one add each per cycle.", fontsize=7.5)
    return dg.FigureCanvas(fig)
