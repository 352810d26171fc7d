"""Scan stages 04 and 05: decoupled look-back (scan/lookback.cuh). Each tile's descriptor
is one 64-bit word, epoch << 2 | status in the high half and a value in the low half. A
block takes a ticket, publishes its tile's aggregate (A), and one warp reads the 32
descriptors before its tile at once: it waits while any is X, then adds the values from
the nearest inclusive prefix (P) up to its tile, and publishes its own P."""

FIGURE = "decoupled_lookback.png"
ABOUT = "scan stages 04-05: tile descriptors (X/A/P) and one warp's look-back over 32 of them"

LAYOUT = "scan/lookback_layout.hpp"
LOOKBACK = "scan/lookback.cuh"
WINDOW = 32        # lanes of the look-back warp: descriptors read at once
TILE = 36          # the tile the picture follows
NEAREST_P = 20     # the nearest predecessor that has published P
LATE = 28          # a predecessor still at X when the warp first reads
SHOWN = 40         # tiles drawn


def inputs(dg, root, results):
    x = dg.code_constant(root, LAYOUT, "kStatusX")
    a = dg.code_constant(root, LAYOUT, "kStatusA")
    p = dg.code_constant(root, LAYOUT, "kStatusP")
    window = dg.require_line(root, LOOKBACK, r"const long long mine = nearest - \(31 - lane\);")
    dg.require_line(root, LOOKBACK, r"while \(__any_sync\(kFullMask, status == kStatusX\)\);")
    first = dg.require_line(root, LOOKBACK, r"const unsigned first = with_p \? 31 - __clz\(with_p\) : 0;")
    word = dg.require_line(root, LOOKBACK, r"return \(static_cast<unsigned long long>\(epoch << 2 \| status\) << 32\)")
    return {"x": x, "a": a, "p": p, "window": window.split("//")[0].strip(), "first": first, "word": word,
            "lanes": WINDOW, "tile": TILE, "nearest": NEAREST_P, "late": LATE, "shown": SHOWN}


def draw(dg, plt, d):
    width = 46.0
    c = dg.Canvas(plt, width, 22.6, 0.27)
    c.text(0.4, 0.8, "Scan stages 04 and 05: one pass, with decoupled look-back", size=11, ha="left", weight="bold")

    # The descriptor word.
    y = 2.4
    c.text(0.4, y, "A tile's descriptor: one 64-bit word, stored and read whole", size=8.5, ha="left",
           weight="bold")
    c.box(1.0, y + 0.8, 14.0, 1.3, face=dg.PALE, text="high 32 bits: epoch << 2 | status", size=7.5)
    c.box(15.0, y + 0.8, 14.0, 1.3, face=dg.PALE, text="low 32 bits: the value (int or float bits)", size=7.5)
    legend = [(f"X = {d['x']}", "nothing yet", "white"), (f"A = {d['a']}", "the tile's aggregate", dg.SKY),
              (f"P = {d['p']}", "its inclusive prefix", dg.BLUE)]
    for k, (name, what, face) in enumerate(legend):
        yy = y + 0.6 + k * 0.75
        c.box(30.5, yy, 1.0, 0.6, face=face)
        c.text(31.9, yy + 0.3, f"{name}: {what}", size=7.5, ha="left")
    c.text(0.4, y + 2.9, "A descriptor counts only when its epoch is this launch's: the last block of each launch "
           "advances the epoch, so nothing is cleared between launches.", size=7.5, ha="left", color=dg.GREY)

    # The tiles at one moment.
    y = 7.6
    t, lanes, nearest, late, shown = d["tile"], d["lanes"], d["nearest"], d["late"], d["shown"]
    c.text(0.4, y, f"Tiles in ticket order, as the warp of tile {t} first reads them", size=8.5, ha="left",
           weight="bold")
    left, cell = 2.0, 1.05
    yy = y + 2.6
    for i in range(shown):
        if i == t:
            face, text = dg.ORANGE, "A"
        elif i > t:
            face, text = "white", ""
        elif i <= nearest:
            face, text = dg.BLUE, "P"
        elif i == late:
            face, text = "white", "X"
        else:
            face, text = dg.SKY, "A"
        c.box(left + i * cell, yy, cell - 0.12, 1.1, face=face, text=text, size=6.5,
              color="white" if face == dg.BLUE else dg.INK, dashed=i > t)
        if (i % 4 == 0 and i < t) or i == t:
            c.text(left + i * cell + cell / 2, yy + 1.55, str(i), size=6, color=dg.GREY)
    first = t - lanes
    x0, x1 = left + first * cell, left + t * cell - 0.12
    c.line(x0, yy - 0.45, x1, yy - 0.45, color=dg.VERMILLION, lw=1.4)
    c.text((x0 + x1) / 2, yy - 1.0, f"one warp: lane l reads tile {t} - {lanes} + l  ({d['window']})", size=7,
           color=dg.VERMILLION)
    c.text(left + (t + 1) * cell, yy + 1.55, "no block yet", size=6.5, ha="left", color=dg.GREY)

    # What the warp does.
    y = 13.4
    steps = [
        f"1. Tile {late} is still X: the whole warp reads its 32 descriptors again, until none is X (tile {late}'s "
        "block has a smaller ticket, so it is running and publishes A without waiting for anyone).",
        f"2. The nearest P is tile {nearest} (the highest lane whose status is P: {d['first']}).",
        f"3. The lanes from it on add their values: prefix of tile {t} = P({nearest}) + A({nearest + 1}) + ... + "
        f"A({t - 1}), one warp sum of five shuffles.",
        f"4. Tile {t} publishes P = prefix + its aggregate; with no P in the window it would add all 32 aggregates "
        f"and read the {lanes} tiles before them.",
    ]
    for k, s in enumerate(steps):
        c.text(0.4, y + k * 1.0, s, size=7.5, ha="left")
    # Tile t's block on a line.
    y = 18.6
    c.text(0.4, y, f"Tile {t}'s block, start to end", size=8.5, ha="left", weight="bold")
    parts = [("ticket", 4.0, dg.PALE), ("load its tile", 7.0, dg.SKY), ("scan in registers", 7.0, dg.SKY),
             ("publish A", 4.0, dg.ORANGE), ("look back (warp 0)", 7.5, dg.VERMILLION), ("publish P", 4.0, dg.BLUE),
             ("add prefix, store", 7.5, dg.GREEN)]
    x = 1.0
    for name, w, face in parts:
        c.box(x, y + 0.8, w - 0.15, 1.2, face=face, text=name, size=7,
              color="white" if face in (dg.BLUE, dg.VERMILLION, dg.GREEN) else dg.INK)
        x += w
    c.text(0.4, y + 3.0, "The aggregate goes out before the look-back starts, so later tiles never wait for this "
           "one's look-back; the last block to finish resets the ticket and advances the epoch.", size=7.5,
           ha="left", color=dg.GREY)
    return c
