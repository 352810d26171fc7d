"""Scan stage 06 (scan/06_prefetch_lookback.cu): as soon as a block has its ticket t, each
of its threads asks L2 for one 128-byte line of tile t + ahead, the tile a block about a
quarter of a wave later will take; when that block starts, its loads hit in L2. The
picture follows a small GPU (SMS SMs) so that every tile can be drawn; the numbers of the
real one are in the caption."""

FIGURE = "prefetch_ahead.png"
ABOUT = "scan stage 06: each block prefetches into L2 the tile a quarter of a wave later"

STAGE = "scan/06_prefetch_lookback.cu"
SMS = 8            # the small GPU of the picture
DONE = 6           # tiles already finished when the picture is taken
SHOWN = 30         # tiles drawn
H200_SMS = 132     # the H200's SMs (the sm_count its result files record)


def inputs(dg, root, results):
    block = dg.code_constant(root, STAGE, "kBlock")
    rows = dg.code_constant(root, STAGE, "kRows")
    dg.require_code(root, STAGE, "constexpr unsigned kTileLines = kTile * 4 / 128;",
                    'asm volatile("prefetch.global.L2 [%0];" ::"l"(vectors + vec));',
                    "p.prefetch_tiles = static_cast<unsigned>(std::max(1, device.sm_count / 2));")
    per_sm = 2  # the launch bounds' blocks per SM (kBlocksPerSm on sm_80 and sm_90)
    dg.require_line(root, STAGE, r"blocks_per_sm_bound\(kBlock, 2\)")
    tile = block * rows * 4
    return {"block": block, "rows": rows, "tile": tile, "tile_kib": tile * 4 // 1024,
            "lines_per_thread": tile * 4 // 128 // block, "per_sm": per_sm, "sms": SMS,
            "wave": per_sm * SMS, "ahead": SMS // 2, "h200_wave": per_sm * H200_SMS, "h200_ahead": H200_SMS // 2,
            "done": DONE, "shown": SHOWN}


def draw(dg, plt, d):
    c = dg.Canvas(plt, 46.0, 16.4, 0.27)
    c.text(0.4, 0.8, "Scan stage 06: each block sends a later tile on its way to L2", size=11, ha="left",
           weight="bold")
    wave, ahead, done, shown = d["wave"], d["ahead"], d["done"], d["shown"]
    running = range(done, done + wave)
    fetched = range(done + wave, done + wave + ahead)

    y = 2.4
    c.text(0.4, y, f"Tiles in ticket order on a GPU of {d['sms']} SMs: {d['per_sm']} blocks per SM, so "
           f"{wave} tiles run at once and ahead = {d['sms']} / 2 = {ahead}", size=8.5, ha="left", weight="bold")
    left, cell, yy = 1.6, 1.42, y + 1.8
    for i in range(shown):
        if i < done:
            face, text, color = dg.BLUE, "P", "white"
        elif i in running:
            face, text, color = dg.ORANGE, "run", dg.INK
        elif i in fetched:
            face, text, color = dg.SKY, "L2", dg.INK
        else:
            face, text, color = "white", "", dg.INK
        c.box(left + i * cell, yy, cell - 0.14, 1.2, face=face, text=text, size=6.5, color=color,
              dashed=i >= done + wave + ahead)
        c.text(left + i * cell + cell / 2, yy - 0.45, str(i), size=6, color=dg.GREY)
    # Arrows, under the strip, from the running tiles that have sent their prefetch.
    for t in range(done + wave - ahead, done + wave):
        x0 = left + t * cell + cell / 2
        x1 = left + (t + ahead) * cell + cell / 2
        c.arrow(x0, yy + 1.3, x1, yy + 1.3, color=dg.VERMILLION, rad=0.4)
    f = done + wave - 1
    c.text(left + (f + ahead / 2) * cell, yy + 3.2, f"block with ticket {f}: prefetch.global.L2 on tile {f} + "
           f"{ahead} = {f + ahead}", size=7.5, color=dg.VERMILLION)
    legend = [(dg.BLUE, "finished (P published)"), (dg.ORANGE, "running: loads, scan, look-back, store"),
              (dg.SKY, "in L2 before its block starts"), ("white", "not touched yet")]
    for k, (face, what) in enumerate(legend):
        x = 1.6 + k * 11.0
        c.box(x, yy + 4.2, 1.0, 0.6, face=face)
        c.text(x + 1.4, yy + 4.5, what, size=7.5, ha="left")

    y = 10.0
    c.text(0.4, y, "One block, start to end", size=8.5, ha="left", weight="bold")
    parts = [("ticket t", 4.2, dg.PALE), (f"prefetch tile t + {ahead}", 7.0, dg.VERMILLION),
             ("load tile t (hits L2)", 7.6, dg.SKY), ("scan, publish A", 6.2, dg.SKY),
             ("look back", 5.0, dg.ORANGE), ("publish P", 4.2, dg.BLUE), ("store", 4.2, dg.GREEN)]
    x = 1.0
    for name, w, face in parts:
        c.box(x, y + 0.8, w - 0.15, 1.2, face=face, text=name, size=7,
              color="white" if face in (dg.BLUE, dg.VERMILLION, dg.GREEN) else dg.INK)
        x += w
    c.text(0.4, y + 3.0, f"Each of the {d['block']} threads prefetches {d['lines_per_thread']} line of 128 bytes: "
           f"one tile of {d['tile']:,} values ({d['tile_kib']} KiB). The prefetch returns at once and no register "
           "waits for it.", size=7.5, ha="left")
    c.text(0.4, y + 4.0, "Nothing is read twice from DRAM: the later block's loads find the lines in L2, so "
           "more bytes are in flight while blocks wait for tickets and look-backs.", size=7.5, ha="left")
    c.text(0.4, y + 5.4, f"On the H200 ({H200_SMS} SMs): {d['h200_wave']} tiles run at once and ahead = "
           f"{d['h200_ahead']}, about {d['h200_ahead'] * d['tile_kib'] // 1024} MiB ahead of the loads.",
           size=7.5, ha="left", color=dg.GREY)
    return c
