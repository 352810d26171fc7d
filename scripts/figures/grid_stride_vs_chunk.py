"""Stage 06's grid-stride loop against single_pass.cuh's contiguous chunk per block
(kDefaultUnroll loads per thread), 4 blocks of 4 threads; the lines each stands for are
required verbatim."""

FIGURE = "grid_stride_vs_chunk.png"
ABOUT = "a grid-stride loop against one chunk per block"
DEMO_BLOCKS = 4  # blocks in the picture
DEMO_THREADS = 4  # threads per block in the picture

GRID_STRIDE = ("const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;",
               "i += stride) sum += in[i];")  # stage 06's grid_stride_sum

CHUNK = ("const std::size_t begin = blockIdx.x * chunk;", "load_pack(body + i + u * kBlock)")  # single_pass.cuh


def inputs(dg, root, results):
    path06, _, _ = dg.stage_source(root, "06")
    sp = "single_pass/single_pass.cuh"
    code = dg.require_code(root, path06, *GRID_STRIDE) + dg.require_code(root, sp, *CHUNK)
    return {"grid_stride_source": path06, "chunk_source": sp, "blocks": DEMO_BLOCKS, "threads": DEMO_THREADS,
            "loads": dg.code_constant(root, sp, "kDefaultUnroll"), "code": code}


def draw(dg, plt, d):
    blocks, threads, loads = d["blocks"], d["threads"], d["loads"]
    n = blocks * threads * loads
    cell, left = 0.62, 0.4
    width = left + n * cell + 0.6
    height = 14.6
    c = dg.Canvas(plt, width, height, 0.25)
    c.text(left, 0.8, f"Who reads what: {blocks} blocks of {threads} threads, {loads} loads per thread, "
           f"{n} elements", size=11, ha="left", weight="bold")
    total = blocks * threads

    def strip(y, owner, title, note, source):
        c.text(left, y, title, size=9.5, ha="left", weight="bold")
        c.code(left, y + 0.85, source, size=7, color=dg.GREY)
        for i in range(n):
            b, t = owner(i)
            colour = dg.BLOCK_COLOURS[b]
            c.box(left + i * cell, y + 1.5, cell * 0.92, 1.0, face=colour, edge=dg.INK, lw=0.3, text=str(t), size=5.5,
                  color="white" if colour in (dg.BLUE, dg.GREEN) else dg.INK)
            if (b, t) == (0, 1):
                x = left + i * cell + cell * 0.46
                c.ax.plot([x], [y + 2.85], marker="^", markersize=5, color=dg.INK)
        c.text(left, y + 3.6, note, size=7.5, ha="left")

    strip(2.1, lambda i: ((i % total) // threads, i % threads),
          "Grid-stride loop (stages 06-12): element i goes to thread i mod (grid x block)",
          f"One sweep of the grid covers {total} neighbouring elements, every block side by side; "
          f"thread 1 of block 0 (triangles) reads elements {', '.join(str(1 + k * total) for k in range(loads))}.",
          f"for (i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x)   {d['grid_stride_source']}")
    chunk = n // blocks
    strip(7.4, lambda i: (i // chunk, i % threads),
          "One contiguous chunk per block (the single-pass kernels): block b reads elements b x chunk onwards",
          f"Each block streams its own {chunk} elements, its threads side by side; thread 1 of block 0 reads "
          f"elements {', '.join(str(1 + k * threads) for k in range(loads))}.",
          f"i = blockIdx.x * chunk + threadIdx.x; loads i + u * kBlock for u < kUnroll   {d['chunk_source']}")
    legend_y = 13.6
    for b in range(blocks):
        c.box(left + b * 6.0, legend_y - 0.35, 0.7, 0.7, face=dg.BLOCK_COLOURS[b], edge=dg.INK, lw=0.3)
        c.text(left + b * 6.0 + 1.0, legend_y, f"block {b}", size=8, ha="left")
    c.text(left + blocks * 6.0, legend_y, "the number in a cell: the thread of its block that reads it", size=8,
           ha="left")
    return c
