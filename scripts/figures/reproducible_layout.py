"""Stage 16's order, a function of n alone (reduction/16_reproducible_order.hpp): the
array cut into stripes of 512 floats, the stripes into runs (one stripe, or eight from
4096-float tiles up), tile t owning runs t, t + M, t + 2M, ...; inside a tile, lanes,
warps and four warps joined in a fixed tree; tile sums added in groups of 32, left to
right, and the group sums by a pairwise tree."""

FIGURE = "reproducible_layout.png"
ABOUT = "stage 16: tiles, stripes and runs, and the fixed tree that adds them"

ORDER = "reduction/16_reproducible_order.hpp"
SMALL = (4, 4)    # (tiles M, steps per tile S) drawn with one-stripe runs
LARGE = (3, 16)   # the same with eight-stripe runs
GROUPS = 5        # group sums drawn in the tree


def inputs(dg, root, results):
    import re

    team = dg.code_constant(root, ORDER, "kTeam")
    stripe = dg.code_constant(root, ORDER, "kStripe", {"kTeam": team})
    shift = dg.code_constant(root, ORDER, "kRunShift")
    group = dg.code_constant(root, ORDER, "kGroup")
    min_tile = dg.code_constant(root, ORDER, "kMinTile")
    max_tile = dg.code_constant(root, ORDER, "kMaxTile")
    run = 1 << shift
    dg.require_line(root, ORDER, r"return \(\(t \+ \(k >> s\) \* tiles\) << s\) \+ \(k & \(\(std::size_t\{1\} << s\) - 1\)\);")
    dg.require_line(root, ORDER, r"return steps >= kRun \? kRunShift : 0;")
    dg.require_line(root, ORDER, r"REPRODUCIBLE_HD inline float join4\(float a, float b, float c, float d\) "
                                 r"\{ return \(a \+ b\) \+ \(c \+ d\); \}")

    def stripe_of(t, k, tiles, steps):
        s = shift if steps >= run else 0
        return ((t + (k >> s) * tiles) << s) + (k & ((1 << s) - 1))

    # The header's own checks of stripe_of must hold for this copy of it.
    asserts = [line for line in dg.read_source(root, ORDER).splitlines() if "static_assert(stripe_of" in line]
    if not asserts:
        raise dg.DiagramError(f"{ORDER} no longer checks stripe_of with static_assert: update the figure's module.")
    for line in asserts:
        for a, b in re.findall(r"stripe_of\(([^)]*)\) == ([^&,]+?)(?= &&|,)", line):
            args = [int(x) for x in a.split(",")]
            if stripe_of(*args) != eval(b, {}):  # a small integer expression from the header
                raise dg.DiagramError(f"stripe_of({a}) in the figure disagrees with {ORDER}.")

    def layout(tiles, steps):
        owner = {}
        for t in range(tiles):
            for k in range(steps):
                owner[stripe_of(t, k, tiles, steps)] = (t, k)
        return [owner[s] for s in range(tiles * steps)]

    return {"team": team, "stripe": stripe, "run": run, "group": group, "min_tile": min_tile, "max_tile": max_tile,
            "small": {"tiles": SMALL[0], "steps": SMALL[1], "cells": layout(*SMALL)},
            "large": {"tiles": LARGE[0], "steps": LARGE[1], "cells": layout(*LARGE)}, "groups": GROUPS,
            "source": ORDER}


def draw(dg, plt, d):
    colours = [dg.BLUE, dg.ORANGE, dg.GREEN, dg.PURPLE]
    width = 52.0
    c = dg.Canvas(plt, width, 25.0, 0.25)
    c.text(0.4, 0.8, "Stage 16: the order of the additions depends on n alone", size=11, ha="left", weight="bold")
    c.text(0.4, 1.9, f"{d['source']}: tiles of T floats (T a power of two from {d['min_tile']} to {d['max_tile']}, "
           f"chosen from n), stripes of {d['stripe']} floats (one float4 for each of a tile's {d['team']} lanes)",
           size=7.5, ha="left")

    def strip(y, title, spec, run):
        cells = spec["cells"]
        tiles, steps = spec["tiles"], spec["steps"]
        c.text(0.4, y, title, size=8.5, ha="left", weight="bold")
        x0 = 1.0
        w = min(3.0, (width - 2.0) / len(cells))
        yy = y + (2.2 if run > 1 else 0.8)
        for s, (t, k) in enumerate(cells):
            face = colours[t % len(colours)]
            c.box(x0 + s * w, yy, w - 0.05, 1.3, face=face, text=str(k), size=6.5,
                  color="white" if face in (dg.BLUE, dg.GREEN) else dg.INK)
        for s in range(0, len(cells) + 1, run):
            c.line(x0 + s * w, yy - 0.3, x0 + s * w, yy + 1.6, color=dg.INK, lw=1.1)
        if run > 1:
            span = tiles * run
            for j in range(len(cells) // span):
                a, b = x0 + j * span * w, x0 + (j + 1) * span * w
                c.line(a + 0.1, yy - 0.6, b - 0.1, yy - 0.6, color=dg.INK, lw=1.0)
                c.text((a + b) / 2, yy - 1.0, f"steps {j * run} to {(j + 1) * run - 1} of every tile: one stretch",
                       size=7, bg="white")
        c.text(x0, yy + 2.1, f"stripes 0 to {len(cells) - 1}, each labelled with the step at which its tile reads it; "
               f"{tiles} tiles of {steps} steps, runs of {run} stripe{'s' if run > 1 else ''} (black lines)",
               size=7, ha="left")
        for t in range(tiles):
            c.box(x0 + t * 5.2, yy + 2.8, 0.9, 0.7, face=colours[t % len(colours)])
            c.text(x0 + t * 5.2 + 1.1, yy + 3.15, f"tile {t}", size=7, ha="left")
        return yy + 4.2

    y = strip(3.4, "Small tiles (up to 2048 floats): tile t reads stripe t + kM at step k", d["small"], 1)
    y = strip(y + 0.6, f"From 4096-float tiles: runs of {d['run']} neighbouring stripes, tile t owns runs t, t + M, "
              "t + 2M, ...", d["large"], d["run"])
    c.text(1.0, y, "At every run the tiles together read one contiguous stretch of the array, as the threads of a "
           "grid-stride loop do; which block sums a tile, and when, does not change a bit.", size=7.5, ha="left")

    # The tree.
    y += 1.6
    c.text(0.4, y, "The fixed tree", size=8.5, ha="left", weight="bold")
    steps = [
        ("lane r", f"four accumulators x, y, z, w,\none float4 a step, then (x + y) + (z + w)"),
        ("warp", "32 lanes: the shuffle tree of\nwarp_sum (offsets 16, 8, 4, 2, 1)"),
        ("tile", f"{d['team'] // 32} warps: (w0 + w1) + (w2 + w3)"),
        ("group", f"{d['group']} tile sums added left to right"),
    ]
    bw, gap = 8.6, 1.5
    yy = y + 0.9
    for i, (name, text) in enumerate(steps):
        x = 1.0 + i * (bw + gap)
        c.box(x, yy, bw, 2.4, face=dg.PALE, text=f"{name}\n{text}", size=7)
        if i:
            c.arrow(x - gap + 0.1, yy + 1.2, x - 0.1, yy + 1.2, color=dg.INK, lw=0.8, head=4)
    # The pairwise tree over the group sums.
    tx = 1.0 + 4 * (bw + gap) - gap + 0.2
    c.arrow(tx, yy + 1.2, tx + 1.0, yy + 1.2, color=dg.INK, lw=0.8, head=4)
    x0, pitch, row = tx + 2.0, 2.0, 1.25
    xs = [x0 + i * pitch for i in range(d["groups"])]
    top = yy - 0.5
    level = 0
    while True:
        face = dg.SKY if len(xs) > 1 else dg.VERMILLION
        for i, x in enumerate(xs):
            label = f"g{i}" if level == 0 else ("sum" if len(xs) == 1 else "")
            c.box(x - 0.7, top + level * row, 1.4, 0.7, face=face, text=label, size=6.5,
                  color="white" if face == dg.VERMILLION else dg.INK)
        if len(xs) == 1:
            break
        parents = [(xs[2 * i] + xs[2 * i + 1]) / 2 if 2 * i + 1 < len(xs) else xs[2 * i]
                   for i in range((len(xs) + 1) // 2)]
        for i, x in enumerate(xs):
            px = parents[i // 2]
            c.line(x, top + level * row + 0.7, px, top + (level + 1) * row, color=dg.INK, lw=0.6)
        xs = parents
        level += 1
    c.text(x0 - 1.0, top + (level + 1) * row + 0.2, "the group sums: a pairwise tree\n(an odd one goes up alone)",
           size=7, ha="left")
    return c
