"""multi_gpu/gpu_team.cpp's first two methods: every GPU sums its own shard with stage
15, then either one ncclAllReduce of that one float, or an ncclAllGather of the G
partials followed by add_in_rank_order (multi_gpu/kernels.cu) on every GPU."""

FIGURE = "multi_gpu_combine.png"
ABOUT = "chapter 26: shards, per-GPU sums and the two combines"

TEAM = "multi_gpu/gpu_team.cpp"
KERNELS = "multi_gpu/kernels.cu"
GPUS = 4  # GPUs drawn


def inputs(dg, root, results):
    reduce = dg.require_line(root, TEAM, r"ncclAllReduce\(p\.shard_sum->args\(\)\.out, p\.result\.get\(\), 1, ncclFloat, ncclSum,")
    gather = dg.require_line(root, TEAM, r"ncclAllGather\(p\.shard_sum->args\(\)\.out, p\.partials\.get\(\), 1, ncclFloat,")
    order = dg.require_line(root, KERNELS, r"for \(int r = 1; r < count; \+\+r\) sum \+= partials\[r\];")
    return {"gpus": GPUS, "reduce": reduce, "gather": gather, "order": order}


def draw(dg, plt, d):
    g = d["gpus"]
    col = 8.6
    left = 1.0
    c = dg.Canvas(plt, left + g * col + 0.5, 23.0, 0.27)
    c.text(0.5, 0.8, f"{g} GPUs, one shard each: the heavy work stays with the data, one float per GPU travels",
           size=10, ha="left", weight="bold")
    colours = [dg.BLUE, dg.ORANGE, dg.GREEN, dg.PURPLE]
    for k in range(g):
        x = left + k * col
        colour = colours[k % len(colours)]
        c.box(x, 2.2, col - 1.0, 1.0, face="white", edge=colour, lw=1.2, text=f"GPU {k}", size=8, color=colour)
        c.box(x, 3.6, col - 1.0, 1.5, face=colour, edge=colour, text=f"shard {k}: n floats", size=7.5,
              color="white")
        c.arrow(x + (col - 1.0) / 2, 5.1, x + (col - 1.0) / 2, 6.3, color=dg.INK, lw=0.8)
        c.text(x + (col - 1.0) / 2 + 0.3, 5.7, "stage 15", size=7, ha="left")
        c.box(x + (col - 1.0) / 2 - 1.0, 6.3, 2.0, 1.0, face="white", edge=colour, lw=1.2, text=f"p{k}", size=8)
    # Combine 1: all-reduce of one float.
    y = 9.0
    c.text(0.5, y, "shard_then_one_float: ncclAllReduce of one float (NCCL picks the order)", size=8.5, ha="left",
           weight="bold", bg="white")
    c.box(left, y + 0.8, g * col - 1.0, 1.2, face=dg.PALE, edge=dg.GREY,
          text="NCCL: p0 + p1 + ... in an order it chooses (ring or tree over the links)", size=7.5)
    for k in range(g):
        x = left + k * col + (col - 1.0) / 2
        c.arrow(x, 7.3, x, y + 0.8, color=dg.GREY, lw=0.6, head=4)
        c.arrow(x, y + 2.0, x, y + 2.9, color=dg.INK, lw=0.8, head=4)
        c.box(x - 1.6, y + 2.9, 3.2, 1.0, face="white", edge=dg.INK, text="sum", size=7.5)
    c.code(left, y + 4.6, d["reduce"], size=6.3, color=dg.GREY)
    # Combine 2: all-gather, then the rank order.
    y = 15.5
    c.text(0.5, y, "shard_then_fixed_order: ncclAllGather, then every GPU adds p0, p1, ... in rank order", size=8.5,
           ha="left", weight="bold")
    for k in range(g):
        x = left + k * col
        for j in range(g):
            c.box(x + j * 1.6, y + 1.0, 1.6, 1.0, face="white", edge=colours[j % len(colours)], lw=1.0,
                  text=f"p{j}", size=7)
        c.arrow(x + (col - 1.0) / 2, y + 2.0, x + (col - 1.0) / 2, y + 3.0, color=dg.INK, lw=0.8, head=4)
        c.box(x + (col - 1.0) / 2 - 1.6, y + 3.0, 3.2, 1.0, face="white", edge=dg.INK,
              text="same bits", size=7)
    c.code(left, y + 5.0, d["gather"] + "   " + d["order"], size=6.3, color=dg.GREY)
    c.text(left, y + 6.3, "an all-gather copies bits and adds nothing, so the order of the adds is the program's own",
           size=7.5, ha="left")
    return c
