"""The multi-GPU sum's scaling as a plot: efficiency (the one-GPU time of
shard_then_one_float at the same n per GPU over the row's time, the CSVs' `efficiency`
column) against n per GPU, one line per combine, from the committed four-GPU results:
results/h200x4/multi_gpu.csv (one process drives every GPU), multi_gpu_mpi.csv (one
process per GPU) and multi_gpu_mpi_net.csv (the same through NCCL's network transport).
Four GPUs solid, two GPUs dashed."""

FIGURE = "multi_gpu_efficiency.png"
ABOUT = "chapter 26: efficiency against n per GPU at 2 and 4 GPUs, one line per combine"

FOLDER = "h200x4"
# (file, method key, label, colour name, marker); every line is drawn at each GPU count
# of COUNTS that the file holds.
LINES = [
    ("multi_gpu.csv", "shard_then_peer_store", "peer stores over NVLink (one kernel)", "GREEN", "o"),
    ("multi_gpu.csv", "shard_then_one_float", "NCCL all-reduce of 1 float", "BLUE", "s"),
    ("multi_gpu.csv", "shard_then_fixed_order", "NCCL all-gather, rank order", "ORANGE", "^"),
    ("multi_gpu_mpi.csv", "shard_then_one_float", "one process per GPU: NCCL all-reduce of 1 float", "PURPLE", "D"),
    ("multi_gpu_mpi_net.csv", "shard_then_one_float", "the same, NCCL's network transport (sockets)", "VERMILLION",
     "v"),
]
COUNTS = (4, 2)  # the first solid, the second dashed


def inputs(dg, root, results):
    import result_files

    files = {}
    for name in sorted({line[0] for line in LINES}):
        try:
            files[name] = result_files.load(results.parent / FOLDER / name)
        except result_files.MissingFile as e:
            raise dg.DiagramError(f"{e.path} does not exist; the figure plots it.") from None
        except result_files.ResultFileError as e:
            raise dg.DiagramError(str(e)) from None
        for column in ("n", "gpus", "key", "efficiency"):
            if column not in files[name].columns:
                raise dg.DiagramError(f"results/{FOLDER}/{name} has no '{column}' column.")
    base = files["multi_gpu.csv"]
    for key in ("device", "commit"):
        if key not in base.meta:
            raise dg.DiagramError(f"results/{FOLDER}/multi_gpu.csv has no '# {key}:' metadata line.")
    lines = []
    for name, key, label, colour, marker in LINES:
        f = files[name]
        for gpus in COUNTS:
            rows = [r for r in f.rows if r["key"] == key and int(f.number(r, "gpus")) == gpus]
            if not rows:
                if gpus == COUNTS[0]:
                    raise dg.DiagramError(f"results/{FOLDER}/{name} has no {key} row at {gpus} GPUs.")
                continue
            pts = sorted((int(f.number(r, "n")), f.number(r, "efficiency")) for r in rows)
            lines.append({"label": label, "gpus": gpus, "colour": colour, "marker": marker,
                          "n": [p[0] for p in pts], "eff": [p[1] for p in pts]})
    return {"lines": lines, "device": base.meta["device"], "commit": base.meta["commit"],
            "folder": f"results/{FOLDER}", "counts": list(COUNTS)}


def draw(dg, plt, d):
    fig, ax = plt.subplots(figsize=(8.6, 4.8), dpi=dg.DPI)
    for line in d["lines"]:
        four = line["gpus"] == d["counts"][0]
        ax.plot(line["n"], line["eff"], color=getattr(dg, line["colour"]), marker=line["marker"],
                markersize=6 if four else 4, markerfacecolor="none" if four else getattr(dg, line["colour"]),
                linewidth=1.6 if four else 0.9, linestyle="-" if four else "--",
                label=f"{line['label']}" if four else None)
    ax.axhline(1.0, color=dg.GREY, linewidth=0.8, linestyle=":")
    ax.set_xscale("log", base=2)
    ns = sorted({n for line in d["lines"] for n in line["n"]})
    ax.set_xticks(ns)
    ax.set_xticklabels([f"2^{n.bit_length() - 1}" for n in ns])
    ax.set_xlabel("floats per GPU (n)")
    ax.set_ylabel("efficiency (1-GPU time / time)")
    ax.set_ylim(0, 1.12)
    ax.grid(True, color=dg.PALE, linewidth=0.8)
    handles, labels = ax.get_legend_handles_labels()
    solid = plt.Line2D([], [], color=dg.INK, linewidth=1.6, label=f"{d['counts'][0]} GPUs")
    dashed = plt.Line2D([], [], color=dg.INK, linewidth=0.9, linestyle="--", label=f"{d['counts'][1]} GPUs")
    ax.legend(handles + [solid, dashed], labels + [solid.get_label(), dashed.get_label()], fontsize=8,
              loc="lower right", frameon=True, framealpha=0.95, edgecolor=dg.PALE)
    ax.set_title(f"The sum over {d['counts'][0]} {d['device']}s (solid) and {d['counts'][1]} (dashed): "
                 "what each combine costs", fontsize=10)
    fig.text(0.01, 0.01, f"{d['folder']}/multi_gpu*.csv, commit {d['commit']}", fontsize=7, color=dg.GREY)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return dg.FigureCanvas(fig)
