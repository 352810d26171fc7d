"""The execution and memory hierarchy chapter 00a describes: a grid of blocks spread over
the SMs, a block cut into warps, a warp's 32 lanes; beside it the memory levels from
registers to DRAM, with the sizes the result files record and the DRAM latency under
load that Little's law gives from the occupancy sweep."""

FIGURE = "gpu_hierarchy.png"
ABOUT = "00a: grid, blocks, SMs, warps and lanes, and the memory levels with their sizes"

STAGE02 = "reduction/02_shared_memory.cu"
WARP_SOURCE = "reduction/08_warp_shuffle.cu"
FLOAT_BYTES = 4
# Hardware facts of compute capability 9.0, from NVIDIA's CUDA C++ Programming Guide
# (table "Technical Specifications per Compute Capability"): 64 K 32-bit registers and up
# to 228 KB of shared memory per SM.
REGISTERS_PER_SM = 65536
REGISTER_BYTES = 4
SHARED_KB_PER_SM = 228


def inputs(dg, root, results):
    block_line = dg.require_line(root, STAGE02, r"s\.blocks\.preferred = \d+;")
    block = int(block_line.split("=")[1].strip(" ;"))
    warp = dg.code_constant(root, WARP_SOURCE, "kWarpSize")
    reduce = dg.result_files.load(results / "reduce_2p24.csv")
    sweep = dg.result_files.load(results / "occupancy_03_sweep.csv")
    for key in ("sm_count", "l2_bytes", "peak_gbs", "device", "n"):
        if key not in reduce.meta:
            raise dg.DiagramError(f"{reduce.path} has no '# {key}:' metadata line.")
    full = [r for r in sweep.rows if float(r["occupancy_pct"]) == 100.0]
    fastest = [r for r in full if "fastest" in r.get("mark", "")]
    if not fastest:
        raise dg.DiagramError(f"{sweep.path} has no fastest row at 100 % occupancy.")
    warps_per_sm = int(float(fastest[0]["warps_per_sm"]))
    sm_count = int(reduce.meta["sm_count"])
    # Little's law: the sweep's kernel keeps one 4-byte load per thread in flight.
    in_flight = sm_count * warps_per_sm * warp * FLOAT_BYTES
    latency_ns = in_flight / (float(fastest[0]["gbs"]) * 1e9) * 1e9
    return {"block": block, "warp": warp, "n": int(reduce.meta["n"]), "sm_count": sm_count,
            "l2_bytes": int(reduce.meta["l2_bytes"]), "peak_gbs": float(reduce.meta["peak_gbs"]),
            "device": reduce.meta["device"], "warps_per_sm": warps_per_sm,
            "blocks_per_sm": max(int(float(r["api_max_per_sm"])) for r in sweep.rows),
            "latency_ns": round(latency_ns, -1), "register_kb": REGISTERS_PER_SM * REGISTER_BYTES // 1024,
            "shared_kb": SHARED_KB_PER_SM,
            "files": [f"results/h200/{reduce.path.name}", f"results/h200/{sweep.path.name}", STAGE02, WARP_SOURCE]}


def draw(dg, plt, d):
    c = dg.Canvas(plt, 52.0, 23.2, 0.2)
    c.text(0.5, 0.9, f"How a kernel runs on the {d['device']}, and the memory it reads", size=12, ha="left",
           weight="bold")
    # Left: grid -> SMs -> block -> warps -> lanes.
    blocks = d["n"] // d["block"]
    c.text(0.5, 2.6, f"grid: n / {d['block']} = {blocks:,} blocks of {d['block']} threads (at n = 2^24)", size=9,
           ha="left", weight="bold")
    for i in range(10):
        label = f"b{i}" if i < 9 else "…"
        c.box(0.5 + i * 2.4, 3.4, 2.0, 1.2, face=dg.SKY if i < 9 else "white", edge=dg.INK if i < 9 else "white",
              text=label, size=7)
    c.text(25.0, 4.0, f"b{blocks - 1:,}", size=7, ha="left")
    sms = [0, 1, 2, 3, None, d["sm_count"] - 1]
    for j, sm in enumerate(sms):
        x = 0.5 + j * 4.0
        if sm is None:
            c.text(x + 1.7, 7.6, "…", size=10)
            continue
        c.box(x, 6.8, 3.4, 1.6, face=dg.PALE, text=f"SM {sm}", size=8)
    for i in range(9):  # an illustration: which SM a block lands on is the hardware's choice
        x = 0.5 + (i % 4) * 4.0
        c.arrow(0.5 + i * 2.4 + 1.0, 4.6, x + 1.7, 6.8, color=dg.GREY, lw=0.6, head=4)
    c.text(0.5, 9.4, f"{d['sm_count']} SMs. Each block runs on one SM from start to finish; an SM holds up to "
           f"{d['blocks_per_sm']} blocks", size=8, ha="left")
    c.text(0.5, 10.3, f"or {d['warps_per_sm']} warps ({d['warps_per_sm'] * d['warp']:,} threads) at once, as its "
           "registers and shared memory allow.", size=8, ha="left")
    warps = d["block"] // d["warp"]
    c.text(0.5, 12.4, f"one block: {d['block']} threads = {warps} warps of {d['warp']}", size=9, ha="left",
           weight="bold")
    for w in range(warps):
        c.box(0.5 + w * 3.0, 13.2, 2.7, 1.3, face=dg.BLUE if w == 0 else dg.SKY, text=f"warp {w}", size=7,
              color="white" if w == 0 else dg.INK)
    c.text(0.5, 16.2, f"one warp: {d['warp']} lanes (threads 0-{d['warp'] - 1} of the block)", size=9, ha="left",
           weight="bold")
    lane_w = 23.6 / d["warp"]
    for lane in range(d["warp"]):
        c.box(0.5 + lane * lane_w, 17.0, lane_w * 0.9, 1.2, face=dg.BLUE, edge=dg.INK, lw=0.4)
        if lane % 8 == 0 or lane == d["warp"] - 1:
            c.text(0.5 + lane * lane_w + lane_w * 0.45, 18.7, str(lane), size=6.5, color=dg.GREY)
    c.line(0.5, 14.5, 0.5, 15.6, color=dg.BLUE, lw=0.8, dashed=True)
    c.line(3.2, 14.5, 6.0, 15.6, color=dg.BLUE, lw=0.8, dashed=True)
    c.text(0.5, 19.9, "A scheduler issues one instruction for all the lanes of a warp at once. Blocks start in no",
           size=8, ha="left")
    c.text(0.5, 20.8, "fixed order and cannot wait for one another; the threads of one block share its shared",
           size=8, ha="left")
    c.text(0.5, 21.7, "memory and meet at __syncthreads().", size=8, ha="left")
    # Right: the memory levels.
    x0 = 28.0
    c.text(x0, 2.6, "the memory levels, fast and small to slow and large", size=9, ha="left", weight="bold")
    l2_mib = d["l2_bytes"] / 2**20
    levels = [
        ("registers", f"{d['register_kb']} KB per SM, split among its threads;", "each thread its own", dg.GREEN),
        ("shared memory", f"up to {d['shared_kb']} KB per SM, beside the L1 cache;", "one block's, 32 banks",
         dg.GREEN),
        ("L2 cache", f"{l2_mib:.0f} MiB ({d['l2_bytes']:,} bytes)", f"shared by all {d['sm_count']} SMs", dg.SKY),
        ("DRAM (HBM3e)", f"{d['peak_gbs']:,.0f} GB/s peak; latency about {d['latency_ns']:.0f} ns under load",
         "the whole GPU; the input lives here", dg.ORANGE),
    ]
    y = 3.6
    for k, (name, size, who, colour) in enumerate(levels):
        w = 12.0 + k * 3.2
        h = 3.4
        c.box(x0, y, w, h, face="white", edge=dg.INK, lw=0.6)
        c.box(x0, y, 0.9, h, face=colour, edge=dg.INK, lw=0.6)
        c.text(x0 + 1.4, y + 0.8, name, size=9, ha="left", weight="bold")
        c.text(x0 + 1.4, y + 1.8, size, size=7.5, ha="left")
        c.text(x0 + 1.4, y + 2.7, who, size=7.5, ha="left")
        y += h + 0.8
    c.text(x0, y + 0.2, "green: inside each SM; blue: on the chip; orange: off the chip.", size=7.5, ha="left",
           color=dg.GREY)
    c.text(x0, y + 1.2, f"Latency: {d['warps_per_sm']} warps x {d['warp']} lanes x 4 B on {d['sm_count']} SMs in "
           "flight,", size=7.5, ha="left", color=dg.GREY)
    c.text(x0, y + 2.1, "divided by the bandwidth they reach (the occupancy sweep): Little's law.", size=7.5,
           ha="left", color=dg.GREY)
    return c
