"""Why the book's V100 times and ours differ, at n = 2^24 floats: the book's timed loop
copies the input before it reduces (erratum 1 of chapter 23), so its fast stages sit on
the time of that copy; and the 64 MiB input against each GPU's L2. Times and the H200's
L2 and bandwidth from the committed results/h200/reduce_2p24.csv; the V100's figures
are NVIDIA's published ones."""

FIGURE = "book_vs_ours.png"
ABOUT = "chapter 23: the book's V100 times against ours, the copy in its timed loop, and the L2"

RESULT = "reduce_2p24.csv"
V100_GBS = 900.0          # Tesla V100 SXM2 HBM2, NVIDIA's datasheet figure
V100_L2_BYTES = 6 * 2**20  # 6 MB L2 (Volta whitepaper)
MIB = 2**20


def inputs(dg, root, results):
    import result_files

    try:
        f = result_files.load(results / RESULT)
    except result_files.MissingFile as e:
        raise dg.DiagramError(f"{e.path} does not exist; the figure plots it.") from None
    except result_files.ResultFileError as e:
        raise dg.DiagramError(str(e)) from None
    for key in ("n", "l2_bytes", "peak_gbs", "device"):
        if key not in f.meta:
            raise dg.DiagramError(f"{RESULT} has no '# {key}:' metadata line.")
    stages = []
    for r in f.rows:
        if r.get("kind") == "stage" and r.get("book_v100_ms", "").strip():
            stages.append({"key": r["key"], "book_us": 1000.0 * f.number(r, "book_v100_ms"),
                           "ours_us": f.number(r, "median_us")})
    if not stages:
        raise dg.DiagramError(f"{RESULT} has no stage with a book_v100_ms value.")
    return {"stages": stages, "n": int(f.meta["n"]), "l2": int(f.meta["l2_bytes"]),
            "peak": float(f.meta["peak_gbs"]), "device": f.meta["device"], "v100_gbs": V100_GBS,
            "v100_l2": V100_L2_BYTES, "file": f"results/h200/{RESULT}"}


def draw(dg, plt, d):
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.0, 4.2), dpi=dg.DPI,
                                      gridspec_kw={"width_ratios": [1.6, 1]})
    keys = [s["key"] for s in d["stages"]]
    x = range(len(keys))
    left.bar([i - 0.2 for i in x], [s["book_us"] for s in d["stages"]], width=0.4, color=dg.ORANGE,
             label="book, V100 (its timed loop)")
    left.bar([i + 0.2 for i in x], [s["ours_us"] for s in d["stages"]], width=0.4, color=dg.BLUE,
             label=f"ours, {d['device']} (the stage alone)")
    in_bytes = 4 * d["n"]
    copy_us = 2 * in_bytes / (d["v100_gbs"] * 1e9) * 1e6
    read_us = in_bytes / (d["v100_gbs"] * 1e9) * 1e6
    left.axhline(copy_us + read_us, color=dg.VERMILLION, linestyle="--", linewidth=1)
    left.text(len(keys) - 0.5, (copy_us + read_us) * 1.25,
              f"V100 at {d['v100_gbs']:.0f} GB/s: the copy ({2 * in_bytes // MIB} MiB moved) + one read "
              f"({in_bytes // MIB} MiB)", ha="right", fontsize=7.5, color=dg.VERMILLION,
              bbox=dict(facecolor="white", edgecolor="none", pad=1.0))
    left.set_yscale("log")
    left.set_xticks(list(x))
    left.set_xticklabels(keys)
    left.set_xlabel("stage")
    left.set_ylabel("time at n = 2^24 (us, log scale)")
    left.set_title("the book's fast stages sit on its copy")
    left.legend(fontsize=7.5, frameon=False, loc="upper right", bbox_to_anchor=(1.0, 0.93))
    left.grid(True, axis="y", color=dg.PALE, linewidth=0.8)

    names = ["input", "V100 L2", f"{d['device'].replace('NVIDIA ', '')} L2"]
    sizes = [in_bytes / MIB, d["v100_l2"] / MIB, d["l2"] / MIB]
    right.barh(names, sizes, color=[dg.GREY, dg.ORANGE, dg.BLUE])
    for i, s in enumerate(sizes):
        right.text(s + 1, i, f"{s:.0f} MiB", va="center", fontsize=8)
    right.set_xlim(0, max(sizes) * 1.3)
    right.invert_yaxis()
    right.set_xlabel("MiB")
    right.set_title(f"{in_bytes // MIB} MiB of input against the L2")
    fig.suptitle(f"The book's V100 numbers against ours ({d['file']})", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return dg.FigureCanvas(fig)
