"""access_patterns/06_histogram.cu's two homes for the counts: one global histogram
that every byte's atomicAdd reaches through the L2, against one histogram per block in
shared memory, added to the global one at the end (kBins counters per block)."""

FIGURE = "histogram_privatised.png"
ABOUT = "chapter 25: global atomics against a privatised shared-memory histogram"

SOURCE = "access_patterns/06_histogram.cu"
PROGRAMS = "access_patterns/programs.hpp"
BLOCKS_DRAWN = 3   # blocks in the picture (the grid is 8 per SM)
BINS_DRAWN = 8     # bins drawn of each histogram
THREADS_DRAWN = 6  # threads drawn per block


def inputs(dg, root, results):
    bins = dg.code_constant(root, PROGRAMS, "kBins")
    block = dg.code_constant(root, SOURCE, "kBlock")
    private = dg.require_line(root, SOURCE, r"__shared__ unsigned private_hist\[kBins\];")
    flush = dg.require_line(root, SOURCE, r"if \(private_hist\[b\] != 0\) atomicAdd\(&hist\[b\], private_hist\[b\]\);")
    import re

    grid = dg.require_line(root, SOURCE, r"\d+ull \* device\.sm_count")
    per_sm = int(re.search(r"(\d+)ull \* device\.sm_count", grid).group(1))
    return {"bins": bins, "block": block, "private": private, "flush": flush, "per_sm": per_sm,
            "blocks": BLOCKS_DRAWN, "bins_drawn": BINS_DRAWN, "threads": THREADS_DRAWN}


def draw(dg, plt, d):
    c = dg.Canvas(plt, 36.0, 17.5, 0.27)
    c.text(0.5, 0.8, f"Counting n bytes into {d['bins']} bins: where the atomics land", size=10, ha="left", weight="bold")
    nb, nt, nbin = d["blocks"], d["threads"], d["bins_drawn"]
    colours = [dg.BLUE, dg.ORANGE, dg.GREEN]

    def threads(x0, y, b):
        c.box(x0 - 0.3, y - 0.4, nt * 0.9 + 0.2, 1.5, face="white", edge=colours[b], lw=1.0)
        c.text(x0 + nt * 0.45 - 0.2, y - 1.0, f"block {b}", size=7, color=colours[b])
        for t in range(nt):
            c.box(x0 + t * 0.9, y, 0.6, 0.7, face=colours[b], edge=colours[b])
        return [(x0 + t * 0.9 + 0.3, y + 0.7) for t in range(nt)]

    def hist(x0, y, label, face, size=7):
        for k in range(nbin):
            c.box(x0 + k * 0.9, y, 0.9, 1.0, face=face, edge=dg.INK, lw=0.5)
        c.text(x0 + nbin * 0.45, y + 1.6, label, size=size)
        return [(x0 + k * 0.9 + 0.45, y) for k in range(nbin)]

    # Left: every byte's atomic goes to the global histogram.
    c.text(1.0, 2.3, "global: one atomicAdd per byte, executed at the L2", size=9, ha="left", weight="bold")
    tops = []
    for b in range(nb):
        tops += threads(1.0 + b * 5.8, 4.0, b)
    g = hist(4.5, 12.0, f"global histogram ({d['bins']} counters, in the L2)", dg.PALE)
    for i, (x, y) in enumerate(tops):
        tx, ty = g[(i * 5) % nbin]
        c.arrow(x, y, tx, ty, color=dg.GREY, lw=0.5, head=4)
    c.text(1.0, 14.8, f"n atomics queue at {d['bins']} addresses; skewed data", size=8, ha="left")
    c.text(1.0, 15.7, "sends half of them to one counter", size=8, ha="left")

    # Right: each block counts in shared memory, then adds its counters once.
    x0 = 19.0
    c.line(x0 - 1.0, 2.0, x0 - 1.0, 16.5, color=dg.GREY, lw=0.6, dashed=True)
    c.text(x0, 2.3, "shared: each block counts on its SM, then adds once", size=9, ha="left", weight="bold")
    finals = hist(x0 + 4.0, 12.0, f"global histogram: {d['bins']} atomics per block", dg.PALE)
    for b in range(nb):
        bx = x0 + b * 5.8
        tops = threads(bx, 4.0, b)
        h = [(bx + k * 0.6 + 0.3, 7.6) for k in range(nbin)]
        for k in range(nbin):
            c.box(bx - 0.3 + k * 0.6, 7.6, 0.6, 0.8, face="white", edge=colours[b], lw=0.6)
        for i, (x, y) in enumerate(tops):
            tx, ty = h[(i * 5) % nbin]
            c.arrow(x, y, tx, ty, color=colours[b], lw=0.5, head=3)
        c.text(bx + nt * 0.45 - 0.2, 9.0, "shared bins", size=6.5, color=colours[b])
        for k in (1, 6):
            c.arrow(h[k][0], 8.4, finals[(k + 2 * b) % nbin][0], 12.0, color=colours[b], lw=0.6, head=4)
    c.text(x0, 14.8, "the n atomics are served by each SM's shared memory;", size=8, ha="left")
    c.text(x0, 15.7, f"the L2 sees {d['bins']} per block ({d['per_sm']} blocks per SM)", size=8, ha="left")
    c.code(0.5, 17.0, d["private"] + "   ...   " + d["flush"], size=6.5, color=dg.GREY)
    return c
