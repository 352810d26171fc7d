"""Stage 18: how the grid reads and how it finishes. Top: stages 13 to 15 give each
block a chunk, so the blocks read at as many places at once; stage 18's T threads take
float4s t, t + T, t + 2T, ..., kUnroll at a time, so the loads of the whole grid fall in
one window that sweeps the array front to back. Bottom: each block draws a number as it
starts; the one that draws the last number waits for the others' slots, which belong to
blocks that have all started and never wait, so the sum finishes even when one block
fits on the GPU at a time. Had block 0 waited, it could hold the only free slot."""

FIGURE = "stream_order_finish.png"
ABOUT = "stage 18: the sweeping read window, and the last block to start as the one that waits"

SOURCE = "reduction/18_stream_order.cu"
BLOCKS = 6   # blocks drawn reading
VECTORS = 48  # float4s of the array drawn (two rounds of the grid drawn)
THREADS = 6   # threads of the grid drawn (one a block, for the picture)
FINISH = 5   # blocks drawn finishing


def inputs(dg, root, results):
    unroll = dg.code_constant(root, SOURCE, "kUnroll")
    lines = {
        "draw": dg.require_line(root, SOURCE, r'atom\.relaxed\.gpu\.global\.add\.u32 %0, \[%1\], 1;" : "=r"\(order\) '
                                              r': "l"\(started\)'),
        "last": dg.require_line(root, SOURCE, r"is_last = order == gridDim\.x - 1;"),
        "store": dg.require_line(root, SOURCE, r"if \(!is_last\) store_tagged\(slots \+ blockIdx\.x, block_total\);"),
        "await": dg.require_line(root, SOURCE, r"v \+= b == blockIdx\.x \? own : await_tagged\(slots \+ b\);"),
        "reset": dg.require_line(root, SOURCE, r"\*started = 0;"),
    }
    dg.require_line(root, SOURCE, r"p\[u\] = __ldg\(body \+ i \+ u \* threads\);")
    if VECTORS % (unroll * THREADS):
        raise dg.DiagramError(f"{VECTORS} vectors are not whole rounds of {unroll} x {THREADS}: change the figure.")
    return {"unroll": unroll, "blocks": BLOCKS, "finish": FINISH, "vectors": VECTORS, "threads": THREADS,
            "lines": {k: v.split("//")[0].strip() for k, v in lines.items()}, "source": SOURCE}


def draw(dg, plt, d):
    width = 54.0
    c = dg.Canvas(plt, width, 32.0, 0.25)
    c.text(0.4, 0.8, "Stage 18: read as the ceiling kernel does, and let the last block to start wait",
           size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, f"{d['lines']['last']}   ...   {d['lines']['reset']}      ({d['source']})", size=7,
           color=dg.GREY)

    # ---- the reading ----
    n, t_count, unroll, blocks = d["vectors"], d["threads"], d["unroll"], d["blocks"]
    window = unroll * t_count
    x0, w = 12.0, (width - 13.0) / n
    y = 3.4
    c.text(0.4, y, f"Where the loads are, at two moments ({n} float4s, {t_count} threads, {unroll} loads in flight each)",
           size=8.5, ha="left", weight="bold")
    chunk = n // blocks

    def array(yy, label, busy):
        c.text(x0 - 0.4, yy + 0.5, label, size=7.5, ha="right")
        for v in range(n):
            c.box(x0 + v * w, yy, w - 0.04, 1.0, face=dg.BLUE if v in busy else dg.PALE, lw=0.3)

    rows = []
    for moment, frac in (("early", 0), ("later", 1)):
        # Chunks: each block is at the same offset of its own chunk.
        per = window // blocks  # the same loads in flight as stage 18's grid
        off = frac * per
        rows.append((f"stages 13-15, {moment}", {b * chunk + off + k for b in range(blocks) for k in range(per)}))
    for moment, r in (("early", 0), ("later", 1)):
        rows.append((f"stage 18, {moment}", set(range(r * window, (r + 1) * window))))
    for k, (label, busy) in enumerate(rows):
        yy = y + 1.0 + k * 1.5 + (0.6 if k >= 2 else 0)
        array(yy, label, busy)
    for b in range(blocks + 1):
        c.line(x0 + b * chunk * w, y + 0.8, x0 + b * chunk * w, y + 4.2, color=dg.INK, lw=0.9)
    c.text(x0, y + 7.9, f"stages 13-15: {blocks} blocks, one chunk each, read at {blocks} places at once.",
           size=7, ha="left")
    c.text(x0, y + 8.7, f"stage 18: thread t takes float4s t, t + T, t + 2T, ... ({unroll} per round), so the "
           f"grid's loads fall in one window of {unroll}T float4s that moves from the front to the back.",
           size=7, ha="left")

    # ---- the finish, with one free block slot ----
    y = 14.0
    c.text(0.4, y, "The finish when the GPU has room for one block at a time (another kernel holds the rest)",
           size=8.5, ha="left", weight="bold")
    unit, xs, bar, row = 0.75, 12.0, 0.9, 1.25
    seg = [("draw", 1.8, dg.ORANGE), ("read its share", 4.4, dg.PALE), ("store slot", 3.0, dg.SKY)]
    blocks = d["finish"]
    t = 0.0
    yy = y + 1.0
    for b in range(blocks):
        yb = yy + b * row
        c.text(xs - 0.4, yb + bar / 2, f"block {b}: draws {b}", size=7.5, ha="right")
        x = xs + t * unit
        last = b == blocks - 1
        parts = seg[:2] + ([("read, empty, add the slots", 8.4, dg.GREEN), ("out, counter 0", 4.4, dg.VERMILLION)]
                           if last else seg[2:])
        for name, length, face in parts:
            c.box(x, yb, length * unit - 0.05, bar, face=face, text=name, size=6.5,
                  color="white" if face in (dg.GREEN, dg.VERMILLION) else dg.INK)
            x += length * unit
        t += sum(p[1] for p in seg)
    note = yy + blocks * row + 0.3
    c.text(xs, note, f"Block {blocks - 1} drew {blocks - 1} = grid - 1: it started last, and every slot it waits for "
           "belongs to a block that has started and never waits.", size=7, ha="left")
    c.text(xs, note + 0.8, "With room for the whole grid the blocks run side by side, and whichever starts last "
           "(any blockIdx.x) is the one that adds.", size=7, ha="left")

    # ---- had block 0 waited ----
    y = note + 2.4
    c.text(0.4, y, "Had block 0 waited (it usually starts first):", size=8.5, ha="left", weight="bold")
    yb = y + 1.0
    span = 28 * unit
    c.text(xs - 0.4, yb + bar / 2, "block 0", size=7.5, ha="right")
    c.box(xs, yb, 4.4 * unit - 0.05, bar, face=dg.PALE, text="read its share", size=6.5)
    c.box(xs + 4.4 * unit, yb, span, bar, face="white", edge=dg.VERMILLION, dashed=True,
          text="waits for slot 1 ... forever: it holds the only free block slot", size=6.8, color=dg.VERMILLION)
    for b in range(1, 3):
        yk = yb + b * row
        c.text(xs - 0.4, yk + bar / 2, f"block {b}", size=7.5, ha="right")
        c.box(xs + 4.4 * unit, yk, span, bar, face="white", edge=dg.GREY, dashed=True,
              text="cannot start", size=6.5, color=dg.GREY)
    c.text(xs - 0.4, yb + 3 * row + bar / 2, "...", size=7.5, ha="right")
    c.code(0.4, yb + 4 * row + 0.6, f"{d['lines']['store']}   {d['lines']['await']}", size=6.5, color=dg.GREY)
    return c
