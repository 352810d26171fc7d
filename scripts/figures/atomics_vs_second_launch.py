"""Stage 10 against stage 11 on one stream: stage 10's blocks write one partial sum each
and a second, one-block launch adds them once every block has finished; stage 11 zeroes
the output, and each block adds its sum into it with one atomicAdd as it finishes. The
grid is the committed one at n = 2^24; the blocks' durations are drawn for illustration."""

FIGURE = "atomics_vs_second_launch.png"
ABOUT = "stages 10 and 11: a second launch over the partial sums against one atomicAdd per block"

WORK = [7.0, 9.2, 6.1, 8.4, 9.8]  # illustrative durations of the blocks drawn (the grid has more)


def inputs(dg, root, results):
    import result_files

    path10, _, _ = dg.stage_source(root, "10")
    path11, _, _ = dg.stage_source(root, "11")
    second = dg.require_line(root, path10, r"<<<1, kBlock, 0, a\.stream>>>\(partials, a\.grid, a\.out\);")
    store = dg.require_line(root, path10, r"block_sums\[blockIdx\.x\] = v;")
    memset = dg.require_line(root, path11, r"cudaMemsetAsync\(a\.out, 0, sizeof\(float\), a\.stream\)")
    atomic = dg.require_line(root, path11, r"if \(threadIdx\.x == 0\) atomicAdd\(out, v\);")
    table = result_files.load(results / "reduce_2p24.csv")
    grids = {}
    for key in ("10", "11"):
        rows = [r for r in table.rows if r["key"] == key]
        if len(rows) != 1:
            raise dg.DiagramError(f"{table.path} has no single row for stage {key}.")
        grids[key] = (int(float(rows[0]["grid"])), int(float(rows[0]["block"])))
    return {"path10": path10, "path11": path11, "second": second, "store": store, "memset": memset,
            "atomic": atomic, "grid10": grids["10"][0], "block10": grids["10"][1], "grid11": grids["11"][0],
            "block11": grids["11"][1], "file": f"results/h200/{table.path.name}", "work": WORK}


def draw(dg, plt, d):
    work = d["work"]
    shown = len(work)
    x0, unit = 8.0, 1.6
    longest = max(work)
    width = 46.0
    row, bar = 0.95, 0.7
    rows = shown + 1  # the drawn blocks and a row of dots before the last one
    c = dg.Canvas(plt, width, 25.2, 0.25)
    c.text(0.4, 0.8, "Adding the blocks' sums: a second launch (stage 10) against one atomicAdd per block (stage 11)",
           size=11, ha="left", weight="bold")
    c.text(0.4, 1.8, f"n = 2^24, {d['file']}: stage 10 {d['grid10']} blocks of {d['block10']}, stage 11 "
           f"{d['grid11']} blocks of {d['block11']}; {shown} blocks drawn, their durations for illustration only.",
           size=7.5, ha="left")

    def blocks(y, grid, start):
        labels = [f"block {b}" for b in range(shown - 1)] + [f"block {grid - 1}"]
        ends = []
        for j, (label, w) in enumerate(zip(labels, work)):
            yy = y + (j if j < shown - 1 else j + 1) * row
            c.text(x0 - 0.3, yy + bar / 2, label, size=7, ha="right")
            c.box(start, yy, w * unit, bar, face=dg.BLUE, lw=0.3)
            ends.append((start + w * unit, yy + bar / 2))
        c.text(x0 - 0.3, y + (shown - 1) * row + bar / 2, "...", size=7, ha="right")
        return ends

    # Stage 10.
    y = 3.4
    c.text(0.4, y, "Stage 10: two launches", size=9.5, ha="left", weight="bold")
    c.code(0.4, y + 0.9, f"{d['store']}   ...   {d['second']}   {d['path10']}", size=6.5, color=dg.GREY)
    y += 2.3
    ends = blocks(y, d["grid10"], x0)
    done = x0 + longest * unit
    cells_x = done + 1.4
    for ex, ey in ends:
        c.arrow(ex + 0.1, ey, cells_x - 0.1, ey, color=dg.GREY, lw=0.5, head=3)
        c.box(cells_x, ey - bar / 2, 1.6, bar, face=dg.SKY, lw=0.3)
    c.text(cells_x + 0.8, y - 0.5, "partials", size=7)
    c.line(done + 0.4, y - 1.0, done + 0.4, y + rows * row, color=dg.INK, lw=0.8, dashed=True)
    c.text(done + 0.2, y + rows * row + 0.4, "kernel 1 ends with its last block", size=7, ha="right")
    k2 = cells_x + 3.6
    c.box(k2, y, 8.0, rows * row - (row - bar), face=dg.ORANGE, lw=0.4,
          text=f"kernel 2: 1 block\nreads the {d['grid10']}\npartials and adds them", size=7)
    c.text(k2 + 4.0, y + rows * row + 0.4, "starts once kernel 1 has ended", size=7)
    c.arrow(cells_x + 1.7, y + rows * row / 2, k2 - 0.1, y + rows * row / 2, color=dg.INK, lw=0.6, head=4)
    c.box(k2 + 8.8, y + rows * row / 2 - 0.6, 2.6, 1.2, face=dg.VERMILLION, text="out", size=7.5, color="white")
    c.arrow(k2 + 8.0, y + rows * row / 2, k2 + 8.75, y + rows * row / 2, color=dg.INK, lw=0.6, head=4)

    # Stage 11.
    y = 13.4
    c.text(0.4, y, "Stage 11: a memset and one launch", size=9.5, ha="left", weight="bold")
    c.code(0.4, y + 0.9, f"{d['memset']}   ...   {d['atomic']}   {d['path11']}", size=6.5, color=dg.GREY)
    y += 2.3
    memset_w = 1.0
    c.box(x0, y - 0.1, memset_w, rows * row - (row - bar) + 0.2, face=dg.PALE, lw=0.3)
    c.text(x0 + memset_w / 2, y + rows * row + 0.4, "memset: out = 0", size=6.5, color=dg.GREY)
    ends = blocks(y, d["grid11"], x0 + memset_w + 0.2)
    end11 = max(ex for ex, _ in ends)
    out_x = end11 + 4.5
    out_y = y + (rows * row) / 2 - 0.8
    c.box(out_x, out_y, 4.4, 1.6, face=dg.VERMILLION, text="out\n(one word in L2)", size=7, color="white")
    for ex, ey in ends:
        c.arrow(ex + 0.1, ey, out_x - 0.1, out_y + 0.8, color=dg.VERMILLION, lw=0.6, head=4)
    c.text(out_x + 4.8, out_y + 0.8, "thread 0 of each block adds the block's\nsum as the block finishes; the L2 "
           "applies\nthe additions in the order they arrive", size=7, ha="left")
    c.line(end11 + 0.4, y - 1.0, end11 + 0.4, y + rows * row, color=dg.INK, lw=0.8, dashed=True)
    c.text(end11 + 0.2, y + rows * row + 0.4, "the sum is complete with the last block", size=7, ha="left")

    c.text(0.4, 23.5, "Stage 10's order is fixed: partial b goes to slot b, and one block adds the slots in the same "
           "order every run. Stage 11's order is the order in which the blocks finish,", size=7.5, ha="left")
    c.text(0.4, 24.4, "which changes from run to run, so the float result can differ in its last bits; it saves the "
           "second launch and the partials array.", size=7.5, ha="left")
    return c
