"""Stage 08's block sum in two rounds: every warp adds its 32 values with shuffles, lane 0
of each warp stores one value in shared memory, one barrier, then the first warp adds
those values with the same shuffles. Beside it, the barriers of stage 07's tree at the
same block size, counted from stage 07's code."""

FIGURE = "block_sum_two_level.png"
ABOUT = "stage 08: warp sums by shuffle, one value per warp through shared memory, the first warp's shuffles"


TREE07 = ("s", "blockDim.x / 2", "s > 0", "/=", "2")  # stage 07's shared-memory tree loop (a dg.Loop)


def inputs(dg, root, results):
    path08, _, _ = dg.stage_source(root, "08")
    warp = dg.code_constant(root, path08, "kWarpSize")
    block_line = dg.require_line(root, path08, r"s\.blocks\.preferred\s*=\s*\d+;")
    block = int(block_line.split("=")[1].strip(" ;"))
    if block % warp:
        raise dg.DiagramError(f"{path08}: the preferred block {block} is not a whole number of warps.")
    # The warp's shuffle offsets, run from warp_sum's loop; the lines the picture draws, in
    # block_sum, with its one barrier between them.
    dg.require_code(root, path08, f"{dg.SHUFFLE.text} v += {dg.SHUFFLE_CALL};")
    offsets = dg.SHUFFLE.values({"kWarpSize": warp}, path08)
    store, _, gather = dg.require_code(root, path08, "if (lane == 0) warp_sums[warp] = v;", "__syncthreads();",
                                       "v = lane < blockDim.x / kWarpSize ? warp_sums[lane] : 0.0f;")
    # Stage 07's tree: one barrier after the store, then one per level of its loop.
    path07, _, _ = dg.stage_source(root, "07")
    tree = dg.Loop(*TREE07)
    dg.require_code(root, path07, "__syncthreads();", tree.text, "__syncthreads();")
    levels = tree.values({"blockDim_x": block}, path07)
    return {"source": path08, "warp": warp, "block": block, "offsets": offsets, "code": [store, gather],
            "barriers08": 1, "stage07": path07, "levels07": len(levels), "barriers07": 1 + len(levels)}


def draw(dg, plt, d):
    warp, block, offsets = d["warp"], d["block"], d["offsets"]
    warps = block // warp
    cell, left, row = 0.36, 3.2, 1.55
    top = 4.6
    strip = warp * cell
    width = left + strip + 27.0
    height = top + warps * row + 4.4
    c = dg.Canvas(plt, width, height, 0.25)
    c.text(0.4, 0.8, f"Stage 08: a block of {block} threads ({warps} warps of {warp}) adds its values in two rounds "
           f"of shuffles, with {d['barriers08']} barrier", size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, "   ".join(d["code"]) + "   " + d["source"], size=7, color=dg.GREY)
    c.text(left + strip / 2, top - 1.1, "round 1: every warp at once", size=8, weight="bold")
    sum_x = left + strip + 3.0
    smem_x = sum_x + 4.6
    c.text(smem_x + 1.1, top - 1.1, "warp_sums[ ] (shared)", size=8, weight="bold")
    for w in range(warps):
        y = top + w * row
        c.text(0.4, y + 0.5, f"warp {w}", size=7.5, ha="left")
        for lane in range(warp):
            c.box(left + lane * cell, y, cell * 0.9, 1.0, face=dg.PALE, edge=dg.GREY, lw=0.3)
        c.arrow(left + strip + 0.2, y + 0.5, sum_x - 0.2, y + 0.5, color=dg.BLUE, lw=0.8, head=5)
        c.box(sum_x, y, 3.4, 1.0, face=dg.BLUE, text=f"lane 0: sum {w}", size=6.5, color="white")
        c.arrow(sum_x + 3.5, y + 0.5, smem_x - 0.1, y + 0.5, color=dg.INK, lw=0.6, head=4)
        c.box(smem_x, y, 2.2, 1.0, face=dg.SKY, text=f"[{w}]", size=7)
    c.text(left + strip + 1.5, top - 0.35, f"{len(offsets)} shuffles", size=7, color=dg.BLUE)
    c.text(left + strip / 2, top + warps * row + 0.4, f"{warp} lanes: one value per thread", size=7, color=dg.GREY)
    # The barrier.
    bar_x = smem_x + 3.6
    c.line(bar_x, top - 0.6, bar_x, top + warps * row + 1.0, color=dg.VERMILLION, lw=1.6, dashed=True)
    c.text(bar_x, top + warps * row + 1.6, "__syncthreads()", size=7.5, color=dg.VERMILLION)
    # Round 2: the first warp, its first lanes holding the warp sums, the rest zeros.
    x2 = bar_x + 1.4
    c.text(x2 + 5.0, top - 1.1, "round 2: warp 0 alone", size=8, weight="bold")
    for w in range(warps):
        y = top + w * row
        c.arrow(smem_x + 2.3, y + 0.5, x2 - 0.1, y + 0.5, color=dg.INK, lw=0.6, head=4)
        c.box(x2, y, 2.8, 1.0, face=dg.SKY, text=f"lane {w}", size=6.5)
    c.box(x2, top + warps * row, 2.8, 1.0, face="white", edge=dg.GREY, lw=0.4, text=f"lanes {warps}-{warp - 1}: 0",
          size=6, color=dg.GREY)
    span_top, span_bottom = top, top + warps * row + 1.0
    c.line(x2 + 3.1, span_top, x2 + 3.1, span_bottom, color=dg.BLUE, lw=1.0)
    mid = (span_top + span_bottom) / 2
    c.arrow(x2 + 3.1, mid, x2 + 6.0, mid, color=dg.BLUE, lw=0.8, head=5)
    c.text(x2 + 4.5, mid - 0.6, f"{len(offsets)} shuffles", size=7, color=dg.BLUE)
    c.box(x2 + 6.1, mid - 1.0, width - 0.4 - (x2 + 6.1), 2.0, face=dg.VERMILLION, text="lane 0 of warp 0:\nthe block's sum",
          size=7.5, color="white")
    c.text(0.4, height - 1.5, f"Inside a warp the shuffles need no barrier; the one barrier waits until every warp has "
           f"stored its value. Shared memory passes {warps} floats, one per warp, instead of {block}.", size=7.5,
           ha="left")
    c.text(0.4, height - 0.6, f"Stage 07's tree over the same block ({d['stage07']}): one barrier after the store "
           f"and one per level, {d['levels07']} levels, {d['barriers07']} barriers.", size=7.5, ha="left")
    return c
