"""A coalesced against a scattered warp load, as chapter 00a explains them: 32 lanes that
read 32 neighbouring floats touch four 32-byte sectors; 32 lanes that read floats far
apart touch 32. (Chapter 00a quotes what the H200 measured for both, from the
access-pattern program 01_stride_offset, next to the figure.)"""

FIGURE = "coalescing.png"
ABOUT = "00a: one warp's load, coalesced (4 sectors) against scattered (32 sectors)"

WARP_SOURCE = "reduction/08_warp_shuffle.cu"
FLOAT_BYTES = 4
SECTOR_BYTES = 32  # the unit the L1, L2 and DRAM move (NVIDIA's Nsight Compute documentation)
LINE_BYTES = 128
MEMORY_SECTORS = 48  # sectors drawn in the scattered panel's strip of memory
SEED = 7  # the picture's scatter, a fixed permutation (the program's own is in its source)


def inputs(dg, root, results):
    warp = dg.code_constant(root, WARP_SOURCE, "kWarpSize")
    # A fixed scatter: every lane in a sector of its own, spread over the strip.
    import random
    rng = random.Random(SEED)
    scatter = rng.sample(range(MEMORY_SECTORS), warp)
    return {"warp": warp, "float_bytes": FLOAT_BYTES, "sector_bytes": SECTOR_BYTES, "line_bytes": LINE_BYTES,
            "memory_sectors": MEMORY_SECTORS, "scatter": scatter, "warp_source": WARP_SOURCE}


def draw(dg, plt, d):
    warp, fb, sb = d["warp"], d["float_bytes"], d["sector_bytes"]
    per_sector = sb // fb
    lane_w = 1.2
    left = 1.0
    width = left + d["memory_sectors"] * 0.92 + 2.0
    width = max(width, left + warp * lane_w + 14.5)
    c = dg.Canvas(plt, width, 24.0, 0.2)
    c.text(0.5, 0.9, f"One warp's load of {warp} floats: coalesced or scattered", size=12, ha="left", weight="bold")

    def lanes(y):
        c.text(0.5, y - 0.7, "lanes", size=7.5, ha="left", color=dg.GREY)
        for lane in range(warp):
            c.box(left + lane * lane_w, y, lane_w * 0.9, 1.0, face=dg.BLUE, edge=dg.INK, lw=0.4,
                  text=str(lane) if lane % 4 == 0 else None, size=5.5, color="white")

    # Coalesced: lane i reads float i; 32 x 4 bytes = 128 bytes = four sectors.
    c.text(0.5, 2.5, f"coalesced: lane i reads float i, {warp * fb} neighbouring bytes", size=10, ha="left",
           weight="bold", color=dg.GREEN)
    lanes(4.0)
    y_mem = 8.0
    sectors = warp * fb // sb
    for s in range(sectors):
        x = left + s * per_sector * lane_w
        c.box(x, y_mem, per_sector * lane_w - 0.1, 1.3, face=dg.ORANGE, edge=dg.INK, lw=0.6,
              text=f"sector {s}: {sb} B", size=7)
    for lane in range(warp):
        x = left + lane * lane_w + lane_w * 0.45
        c.line(x, 5.0, x, y_mem, color=dg.GREY, lw=0.5)
    c.text(left + warp * lane_w + 1.0, 5.2, f"1 request, {sectors} sectors", size=9, ha="left", weight="bold")
    c.text(left + warp * lane_w + 1.0, 6.3, f"{sectors * sb} bytes moved, all used", size=8, ha="left")

    # Scattered: every lane in a sector of its own.
    y0 = 12.2
    c.text(0.5, y0, "scattered: each lane reads a float far from the others' (a random permutation)", size=10, ha="left", weight="bold",
           color=dg.VERMILLION)
    lanes(y0 + 1.5)
    y_mem = y0 + 8.5
    cell = 0.92
    used = set(d["scatter"])
    for s in range(d["memory_sectors"]):
        c.box(left + s * cell, y_mem, cell - 0.08, 1.3, face=dg.ORANGE if s in used else dg.PALE,
              edge=dg.INK if s in used else dg.GREY, lw=0.4)
    for lane, s in enumerate(d["scatter"]):
        c.line(left + lane * lane_w + lane_w * 0.45, y0 + 2.5, left + s * cell + cell / 2, y_mem, color=dg.GREY,
               lw=0.5)
    c.text(left + warp * lane_w + 1.0, y0 + 2.7, f"1 request, {warp} sectors", size=9, ha="left", weight="bold")
    c.text(left + warp * lane_w + 1.0, y0 + 3.8, f"{warp * sb:,} bytes moved, {warp * fb} used", size=8, ha="left")
    c.text(0.5, y_mem + 2.4, f"Orange: a {sb}-byte sector the load brings in; the caches and DRAM move whole sectors, so the "
           f"scattered load moves {warp * sb // (warp * fb)} times the bytes it uses.", size=7.5, ha="left")
    return c
