"""One warp's load in access_patterns/01_stride_offset.cu, mapped to 32-byte sectors:
lane l reads element l * s (element_of() for the stride rows); stride 1 touches 4 sectors,
stride 2 eight, stride 16 one sector per lane, which the DRAM then fetches in 64-byte
pairs (the measured DRAM column of chapter 24)."""

FIGURE = "warp_sectors.png"
ABOUT = "chapter 24: a warp's 32 addresses in 32-byte sectors at stride 1, 2 and 16"

INDEX = "access_patterns/access_index.hpp"
SOURCE = "access_patterns/01_stride_offset.cu"
FLOAT_BYTES = 4
STRIDES = (1, 2)   # drawn float by float
WIDE_STRIDE = 16   # drawn sector by sector
DRAM_FETCH_SECTORS = 2  # what the committed DRAM counters show at stride 16 and 32 (chapter 24)


def inputs(dg, root, results):
    warp = dg.code_constant(root, INDEX, "kWarp")
    sector = dg.code_constant(root, INDEX, "kSectorBytes")
    line = dg.code_constant(root, INDEX, "kLineBytes")
    code = dg.require_line(root, SOURCE, r"if \(map == kStride\) return j \* param;")
    return {"warp": warp, "sector": sector, "line": line, "code": code, "float": FLOAT_BYTES,
            "strides": list(STRIDES), "wide": WIDE_STRIDE, "fetch": DRAM_FETCH_SECTORS}


def draw(dg, plt, d):
    warp, per_sector = d["warp"], d["sector"] // d["float"]
    per_line = d["line"] // d["sector"]
    floats_drawn = warp * max(d["strides"])
    cell, left = 0.5, 6.5
    width = left + floats_drawn * cell + 1.0
    c = dg.Canvas(plt, width, 15.8, 0.3)
    c.text(0.4, 0.8, f"One warp's load: lane l reads element l x s  ({d['code']})", size=10, ha="left",
           weight="bold")
    c.text(0.4, 1.9, f"memory in {d['sector']}-byte sectors ({per_sector} floats), {per_line} to a "
           f"{d['line']}-byte line; a touched sector is moved whole", size=8, ha="left", color=dg.GREY)
    y = 3.6
    for s in d["strides"]:
        read = {l * s for l in range(warp)}
        sectors = {e // per_sector for e in read}
        c.text(0.4, y + 0.5, f"stride {s}", size=9, ha="left", weight="bold")
        c.text(0.4, y + 1.4, f"{len(sectors)} sectors,", size=8, ha="left")
        c.text(0.4, y + 2.1, f"{len(read)} of {len(sectors) * per_sector} floats used", size=8, ha="left")
        for e in range(floats_drawn):
            x = left + e * cell
            sec = e // per_sector
            face = (dg.SKY if sec % 2 == 0 else dg.BLUE) if e in read else (dg.PALE if sec in sectors else "white")
            c.box(x, y, cell, 1.0, face=face, edge=dg.GREY, lw=0.3)
        for k in range(floats_drawn // per_sector + 1):
            x = left + k * per_sector * cell
            top = 0.55 if k % per_line else 0.9
            c.line(x, y - top, x, y + 1.0 + top, color=dg.INK, lw=1.4 if k % per_line == 0 else 0.8)
        for l, ha in ((0, "left"), (warp - 1, "right")):
            e = l * s
            c.text(left + (e + (0.4 if ha == "left" else 1)) * cell, y + 1.55, f"lane {l}", size=6.5, ha=ha)
        y += 3.6
    c.text(left, y - 0.7, "dark and light: elements read (alternate sectors); grey: unread bytes of a touched "
           "sector; thick lines: 128-byte lines", size=7, ha="left", color=dg.GREY)
    # stride 16, drawn by sectors: one element per sector, fetched from DRAM in pairs.
    s = d["wide"]
    sectors_drawn = warp * s // per_sector
    scell = floats_drawn * cell / sectors_drawn
    y += 1.3
    read = {(l * s) // per_sector for l in range(warp)}
    c.text(0.4, y + 0.5, f"stride {s}", size=9, ha="left", weight="bold")
    c.text(0.4, y + 1.4, f"{len(read)} sectors,", size=8, ha="left")
    c.text(0.4, y + 2.1, f"{warp} of {len(read) * per_sector} floats used", size=8, ha="left")
    for k in range(sectors_drawn):
        c.box(left + k * scell, y, scell, 1.0, face=dg.BLUE if k in read else "white", edge=dg.GREY, lw=0.3)
    pair = d["fetch"]
    for k in range(0, sectors_drawn, pair):
        x0, x1 = left + k * scell, left + (k + pair) * scell
        c.line(x0 + 0.05, y + 1.35, x1 - 0.05, y + 1.35, color=dg.VERMILLION, lw=1.6)
    c.text(left, y + 2.2, f"one cell per sector: every {pair * d['sector']}-byte pair holds a read element, so "
           f"DRAM delivers all of them (red: the {pair * d['sector']}-byte fetches measured)", size=7.5,
           ha="left", color=dg.VERMILLION)
    return c
