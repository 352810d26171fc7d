"""Stages 02-05: each kernel's loop, index and `if` (dg.BLOCK_TREES, required verbatim in
the stage files), run on a block of 64 threads (two warps of kWarpSize, stage 08): which
thread adds which element at each level, the warps with a thread at work and the bank
passes of one warp's access."""

FIGURE = "index_maps.png"
ABOUT = "which thread adds which element in stages 02-05"


def inputs(dg, root, results):
    warp, warp_path = dg.warp_size(root)
    banks = dg.hardware_facts(root)["banks"]
    if dg.MAP_BLOCK % warp or dg.MAP_BLOCK // warp < 2:
        raise dg.DiagramError(f"a block of {dg.MAP_BLOCK} threads does not hold two whole warps of {warp}.")
    stages = [dg.block_tree(root, k) for k in ("02", "03", "04", "05")]
    for s in stages:
        s["warps"] = []  # per level: (warps with a lane at work, most bank passes of one warp access)
        for level in s["levels"]:
            at_work, worst = 0, 0
            for w0 in range(0, dg.MAP_BLOCK, warp):
                mine = [(w, r) for tid, w, r in level if w0 <= tid < w0 + warp]
                if mine:
                    at_work += 1
                    worst = max(worst, dg.bank_passes([w for w, _ in mine], banks),
                                dg.bank_passes([r for _, r in mine], banks))
            s["warps"].append((at_work, worst))
    return {"block": dg.MAP_BLOCK, "warp": warp, "warp_source": warp_path, "banks": banks, "stages": stages}


def draw(dg, plt, d):
    block, warp = d["block"], d["warp"]
    cell = 1.0
    left, right = 6.5, 14.0
    row, strip = 2.75, 0.5
    n_levels = max(len(s["levels"]) for s in d["stages"])
    # Stages whose loops build the same tree (02 and 03) share one panel.
    panels: list[list[dict]] = []
    for s in d["stages"]:
        if panels and panels[-1][0]["levels"] == s["levels"]:
            panels[-1].append(s)
        else:
            panels.append([s])
    head = 2.4
    panel_h = [head + (len(group) - 1) * 1.2 + 2.5 + row * (n_levels + 1) for group in panels]
    width, height = left + block * cell + right + 1.0, 3.0 + sum(panel_h) + 3.4
    c = dg.Canvas(plt, width, height, 0.14)
    c.text(1.0, 1.3, f"Which thread adds which element: stages 02-05, one block of {block} threads "
           f"({block // warp} warps of {warp})", size=11, ha="left", weight="bold")
    x0 = 1.0 + left
    xa, xb = x0 + block * cell + 1.5, x0 + block * cell + 8.0
    oy = 3.0
    for group, h in zip(panels, panel_h):
        for j, g in enumerate(group):
            c.text(1.0, oy + 0.8 + 1.2 * j, f"{g['key']} · {g['title']}", size=10, ha="left", weight="bold")
            c.code(x0 + 18.0, oy + 0.8 + 1.2 * j, g["code"], size=8, color=dg.INK)
        s = group[0]
        top = oy + head + 1.2 * (len(group) - 1)
        bottom = oy + h - 0.9
        oy += h
        # The warp boundary: threads 0-31 are warp 0; words 0-31 and 32-63 fall in banks 0-31 again.
        for w0 in range(0, block, warp):
            c.text(x0 + (w0 + warp / 2) * cell, top, f"warp {w0 // warp}: threads {w0}-{w0 + warp - 1}", size=7.5,
                   color=dg.GREY)
            if w0:
                c.line(x0 + w0 * cell, top + 0.5, x0 + w0 * cell, bottom, color=dg.VERMILLION, lw=1.2)
        c.text(xa + 2.5, top - 0.3, "warps with\na thread at work", size=7, color=dg.GREY)
        c.text(xb + 2.5, top - 0.3, "bank passes\nper access", size=7, color=dg.GREY)
        y = top + 0.9
        for i in range(block):
            c.box(x0 + i * cell, y, cell, cell, face=dg.PALE, edge=dg.GREY, lw=0.3)
        c.text(1.0, y + 0.5, "partial[]", size=7.5, ha="left")
        for k, (level, (at_work, worst)) in enumerate(zip(s["levels"], s["warps"]), start=1):
            y_prev, y = y, top + 0.9 + row * k
            for tid, w, r in level:
                xw = x0 + w * cell + cell / 2
                xr = x0 + r * cell + cell / 2
                c.line(xw, y_prev + cell, xw, y, color=dg.GREY, lw=0.5)
                c.line(xr, y_prev + cell, xw, y, color=dg.BLUE, lw=0.7)
            written = {w for _, w, _ in level}
            for i in range(block):
                c.box(x0 + i * cell, y, cell, cell, face=dg.BLUE if i in written else "white",
                      edge=dg.INK if i in written else dg.PALE, lw=0.3)
            active = {tid for tid, _, _ in level}
            for t in range(block):
                c.box(x0 + t * cell + 0.1, y + cell + 0.15, cell - 0.2, strip, face=dg.ORANGE if t in active else dg.PALE,
                      edge="none", lw=0)
            c.text(1.0, y + 0.5, f"level {k}", size=7.5, ha="left")
            c.text(1.0, y + cell + 0.45, "threads", size=6.5, ha="left", color=dg.GREY)
            c.text(xa + 2.5, y + 0.75, f"{at_work} of {block // warp}", size=8)
            c.text(xb + 2.5, y + 0.75, str(worst), size=8, color=dg.VERMILLION if worst > 1 else dg.INK,
                   weight="bold" if worst > 1 else "normal")
    c.text(1.0, height - 2.4, "Blue cell: the element a thread writes at that level; blue line: the element it adds "
           "in. Orange, below: the threads whose if is true (thread t under column t).", size=7.5, ha="left")
    c.text(1.0, height - 1.1, f"Red line: the warp boundary; words w and w + {d['banks']} fall in the same one of the "
           f"{d['banks']} shared-memory banks.", size=7.5, ha="left")
    return c
