"""Stage 02 as chapter 02 draws it: inside one block, the load into shared memory and the
tree's levels, each followed by the __syncthreads() that the next level waits at; beside
it, the passes that shrink n = 2^24 floats to one (one launch each, 256 values a block)."""

FIGURE = "barrier_tree.png"
ABOUT = "02: one block's levels with a barrier between them, and the passes 2^24 -> 65,536 -> 256 -> 1"

STAGE02 = "reduction/02_shared_memory.cu"
PASSES = "reduction/passes.hpp"
LOOP = r"for \(unsigned stride = 1; stride < blockDim\.x; stride \*= 2\) \{"
GUARD = r"if \(tid % \(2 \* stride\) == 0\) partial\[tid\] \+= partial\[tid \+ stride\];"
BARRIER = r"__syncthreads\(\);  // outside the if"
LOAD = r"partial\[tid\] = i < n \? in\[i\] : 0\.0f;"
WRITE = r"if \(tid == 0\) block_sums\[blockIdx\.x\] = partial\[0\];"
SHRINK = r"const std::size_t blocks = ceil_div\(m_, owner_->per_block_\);"


def inputs(dg, root, results):
    code = [dg.require_line(root, STAGE02, pattern) for pattern in (LOAD, LOOP, GUARD, BARRIER, WRITE)]
    dg.require_line(root, PASSES, SHRINK)
    block_line = dg.require_line(root, STAGE02, r"s\.blocks\.preferred = \d+;")
    block = int(block_line.split("=")[1].strip(" ;"))
    warp = dg.code_constant(root, "reduction/08_warp_shuffle.cu", "kWarpSize")
    f = dg.result_files.load(results / "reduce_2p24.csv")
    n = int(f.meta["n"])
    levels = []
    stride = 1
    while stride < block:  # the kernel's loop, run for the block the stage prefers
        levels.append((stride, [tid for tid in range(block) if tid % (2 * stride) == 0]))
        stride *= 2
    passes = []
    m = n
    while True:  # Passes: each pass leaves ceil(m / block) values, the last one writes the result
        blocks = -(-m // block)
        passes.append((m, blocks))
        if blocks == 1:
            break
        m = blocks
    return {"block": block, "warp": warp, "n": n, "levels": levels, "passes": passes, "code": code,
            "source": STAGE02, "file": f"results/h200/{f.path.name}"}


def pow2(v):
    k = v.bit_length() - 1
    return f"2^{k}" if v == 1 << k and k >= 20 else f"{v:,}"


def draw(dg, plt, d):
    block, warp = d["block"], d["warp"]
    cw = 0.15  # one thread's column: 3 pixels at this scale, so the stripes stay even
    left = 8.0
    row = 1.55
    n_rows = len(d["levels"]) + 2
    width = left + block * cw + 12.0
    height = 3.6 + n_rows * row + 8.6
    c = dg.Canvas(plt, width, height, 0.2)
    c.text(0.4, 0.8, f"Stage 02: one block of {block} threads sums its slice in shared memory, a barrier after "
           "every level", size=11, ha="left", weight="bold")
    c.code(0.4, 1.9, d["code"][2], size=7.5, color=dg.GREY)
    x0 = left
    top = 3.6
    for w0 in range(0, block + 1, warp):
        c.line(x0 + w0 * cw, top - 0.3, x0 + w0 * cw, top + n_rows * row - 0.5, color=dg.PALE, lw=0.6)
        if w0 < block:
            c.text(x0 + (w0 + warp / 2) * cw, top - 0.6, f"warp {w0 // warp}", size=6.5, color=dg.GREY)

    def strip(y, threads, label, note):
        c.text(0.4, y + 0.35, label, size=7.5, ha="left")
        for t in range(block):
            on = t in threads
            c.box(x0 + t * cw, y, cw, 0.7, face=dg.ORANGE if on else "white", edge="none", lw=0)
        c.box(x0, y, block * cw, 0.7, face="none", edge=dg.GREY, lw=0.5)
        c.text(x0 + block * cw + 0.4, y + 0.35, note, size=7.5, ha="left")

    def barrier(y):
        c.line(x0 - 0.3, y, x0 + block * cw + 0.3, y, color=dg.VERMILLION, lw=1.2, dashed=True)
        c.text(x0 - 0.5, y, "__syncthreads()", size=6.5, ha="right", color=dg.VERMILLION, family="DejaVu Sans Mono")

    y = top + 0.2
    strip(y, set(range(block)), "load", f"all {block} threads store one float")
    barrier(y + 1.12)
    for k, (stride, threads) in enumerate(d["levels"], start=1):
        y = top + 0.2 + k * row
        strip(y, set(threads), f"level {k}", f"stride {stride}: {len(threads)} thread{'s' if len(threads) > 1 else ''}"
              " add")
        barrier(y + 1.12)
    y = top + 0.2 + (len(d["levels"]) + 1) * row
    strip(y, {0}, "write", "thread 0 writes the block's sum")
    # The passes, left to right under the block.
    py = top + n_rows * row + 0.6
    c.text(0.4, py + 0.4, f"the passes at n = {pow2(d['n'])}: one launch each, {block} values a block", size=9.5,
           ha="left", weight="bold")
    py += 1.3
    bw, gap = 14.0, 2.2
    for k, (m, blocks) in enumerate(d["passes"]):
        px = 0.4 + k * (bw + gap)
        out = "the sum" if blocks == 1 else f"{pow2(blocks)} block sums"
        c.box(px, py, bw, 2.3, face=dg.SKY if blocks > 1 else dg.BLUE, edge=dg.INK, lw=0.6)
        colour = "white" if blocks == 1 else dg.INK
        c.text(px + 0.4, py + 0.65, f"launch {k + 1}: {blocks:,} block{'s' if blocks > 1 else ''}", size=8,
               ha="left", weight="bold", color=colour)
        c.text(px + 0.4, py + 1.65, f"{pow2(m)} values -> {out}", size=8, ha="left", color=colour)
        if blocks > 1:
            c.arrow(px + bw + 0.2, py + 1.15, px + bw + gap - 0.2, py + 1.15, color=dg.INK, lw=0.9)
    c.text(0.4, height - 1.9, f"Orange: the threads that add at that level (tid % (2 * stride) == 0). Every thread "
           "waits at each barrier, so the next level reads only finished sums.", size=7.5, ha="left")
    c.text(0.4, height - 0.9, f"Each launch runs this tree in every block; {len(d['passes'])} launches in all, "
           f"where stage 01 needs {d['n'].bit_length() - 1}.", size=7.5, ha="left")
    return c
