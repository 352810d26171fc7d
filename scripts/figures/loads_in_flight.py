"""Little's law: kNumLoad (stage 07), kUnroll and float4 (stage 12); the SM count and peak
bandwidth from results/h200/reduce_2p24.csv, the threads per SM at full occupancy from
results/h200/occupancy_03_sweep.csv."""

FIGURE = "loads_in_flight.png"
ABOUT = "Little's law, 1 against 4 loads in flight"


def inputs(dg, root, results):
    path07, _, _ = dg.stage_source(root, "07")
    path12, _, _ = dg.stage_source(root, "12")
    num_load = dg.code_constant(root, path07, "kNumLoad")
    unroll = dg.code_constant(root, path12, "kUnroll")
    dg.require_code(root, path12, "float4")
    warp, _ = dg.warp_size(root)
    reduce = dg.result_files.load(results / "reduce_2p24.csv")
    sweep = dg.result_files.load(results / "occupancy_03_sweep.csv")
    meta = reduce.meta
    for key in ("peak_gbs", "sm_count", "device"):
        if key not in meta:
            raise dg.DiagramError(f"{reduce.path} has no '# {key}:' metadata line.")
    full = [int(float(r["warps_per_sm"])) for r in sweep.rows if float(r["occupancy_pct"]) == 100.0]
    if not full:
        raise dg.DiagramError(f"{sweep.path} has no row at 100 % occupancy to read the warps per SM from.")
    return {"stage07": path07, "stage12": path12, "num_load": num_load, "unroll": unroll, "float4_bytes": 16,
            "float_bytes": 4, "warp": warp, "threads_per_sm": max(full) * warp, "sm_count": int(meta["sm_count"]),
            "peak_gbs": float(meta["peak_gbs"]), "device": meta["device"],
            "files": [f"results/h200/{reduce.path.name}", f"results/h200/{sweep.path.name}"]}


def draw(dg, plt, d):
    from matplotlib.patches import Rectangle

    k = d["num_load"]
    c = dg.Canvas(plt, 40.0, 17.0, 0.26)
    c.text(0.4, 0.8, "Little's law: bytes in flight = bandwidth x latency", size=11, ha="left", weight="bold")
    need_mb = d["peak_gbs"] * 1e9 * 1e-6 / 1e6
    c.text(0.4, 1.9, f"To stream at the {d['device']}'s {d['peak_gbs']:.0f} GB/s, the GPU must keep "
           f"{need_mb:.1f} MB of loads in flight for every microsecond of DRAM latency.", size=8.5, ha="left")
    # One thread's timeline, time in units of one DRAM latency.
    ax = c.fig.add_axes([0.17, 0.2, 0.45, 0.58])
    span, issue, add, bar = 4.6, 0.02, 0.02, 0.7
    lanes = [("stage 06\n1 load in flight", 1, 0.0), (f"stage 07\n{k} loads in flight", k, 1.7)]
    for label, per, base in lanes:
        t, count = 0.0, 0
        while t + (per - 1) * issue + 1.0 + add * per <= span:
            for j in range(per):
                ax.add_patch(Rectangle((t + j * issue, base + j * 0.85), 1.0, bar, facecolor=dg.SKY if j % 2 else dg.BLUE,
                                       edgecolor=dg.INK, linewidth=0.4))
            arrive = t + (per - 1) * issue + 1.0
            ax.add_patch(Rectangle((arrive, base), add * per, (per - 1) * 0.85 + bar, facecolor=dg.ORANGE,
                                   edgecolor=dg.INK, linewidth=0.4))
            count += per
            t = arrive + add * per
        middle = base + ((per - 1) * 0.85 + bar) / 2
        ax.text(-0.08, middle, label, ha="right", va="center", fontsize=8)
        ax.text(span + 0.06, middle, f"{count} loads\ndone", ha="left", va="center", fontsize=8, fontweight="bold")
    ax.set_xlim(0, span)
    ax.set_ylim(1.7 + (k - 1) * 0.85 + bar + 0.3, -0.4)
    ax.set_yticks([])
    ax.set_xlabel("time, in DRAM latencies (one thread)", fontsize=8)
    ax.tick_params(labelsize=7)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title("blue: a load on its way from DRAM; orange: the additions once the data is in", fontsize=8,
                 loc="left")
    # Bytes in flight across the GPU at full occupancy.
    bx = c.fig.add_axes([0.75, 0.2, 0.23, 0.58])
    threads = d["sm_count"] * d["threads_per_sm"]
    bars = [("06", d["float_bytes"], dg.SKY), ("07", k * d["float_bytes"], dg.BLUE),
            ("12", d["unroll"] * d["float4_bytes"], dg.GREEN)]
    values = [threads * b / 1e6 for _, b, _ in bars]
    bx.bar(range(len(bars)), values, color=[col for _, _, col in bars], edgecolor=dg.INK, linewidth=0.5)
    for i, ((key, b, _), v) in enumerate(zip(bars, values)):
        bx.text(i, v, f"{v:.1f} MB\n{b} B/thread", ha="center", va="bottom", fontsize=7)
    bx.set_xticks(range(len(bars)))
    bx.set_xticklabels([f"stage {key}" for key, _, _ in bars], fontsize=8)
    bx.set_ylim(0, max(values) * 1.3)
    bx.set_ylabel("MB in flight, whole GPU", fontsize=8)
    bx.tick_params(labelsize=7)
    for side in ("top", "right"):
        bx.spines[side].set_visible(False)
    bx.set_title(f"{d['sm_count']} SMs x {d['threads_per_sm']} threads,\nevery thread's loads outstanding",
                 fontsize=8)
    c.text(0.4, 16.3, f"Stage 07 keeps {k} loads of 4 bytes per thread in flight, stage 12 {d['unroll']} of 16 bytes "
           "(float4); full occupancy is read from the occupancy sweep. Bandwidth is at most bytes in flight / latency.",
           size=7.5, ha="left")
    return c
