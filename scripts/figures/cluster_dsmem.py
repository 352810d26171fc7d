"""Stage 15's one-cluster sum: the cluster size (kMaxCluster) and the cluster's steps, each
with the code it stands for, required in order."""

FIGURE = "cluster_dsmem.png"
ABOUT = "a cluster adding through distributed shared memory"

CLUSTER_STEPS = [
    ("a shared array of one slot per block", "__shared__ float partials[kMaxCluster];"),
    ("the push into block 0", "cluster.map_shared_rank(partials, 0)[rank] = v;"),
    ("the cluster barrier", "cluster.sync();"),
    ("block 0 adds", "if (rank == 0"),
]


def inputs(dg, root, results):
    path, _, _ = dg.stage_source(root, "15")
    size = dg.code_constant(root, path, "kMaxCluster")
    dg.require_code(root, path, *(code for _, code in CLUSTER_STEPS))
    return {"source": path, "constant": "kMaxCluster", "cluster": size}


def draw(dg, plt, d):
    size = d["cluster"]
    pitch, left = 2.3, 1.0
    width = left + size * pitch + 1.0
    height = 18.0
    c = dg.Canvas(plt, width, height, 0.27)
    c.text(0.4, 0.8, f"One thread-block cluster of {size} blocks adds through distributed shared memory (sm_90)",
           size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, f"cluster.map_shared_rank(partials, 0)[rank] = v;  cluster.sync();   {d['source']}", size=7.5,
           color=dg.GREY)
    c.box(left - 0.5, 2.6, size * pitch + 0.5, 3.0, face="none", edge=dg.GREY, lw=0.8, dashed=True)
    c.text(left - 0.3, 3.05, f"the cluster: {size} blocks launched together on the SMs of one GPC; each sums its "
           "own chunk into v", size=7, ha="left", color=dg.GREY)
    for r in range(size):
        x = left + r * pitch
        c.box(x, 3.7, pitch - 0.4, 1.5, face=dg.BLUE if r == 0 else dg.SKY, edge=dg.INK, lw=0.5,
              text=f"block {r}\nv{r}", size=6.5, color="white" if r == 0 else dg.INK)
    # Block 0's shared memory: one slot per block of the cluster.
    sy = 8.4
    for r in range(size):
        x = left + r * pitch
        c.arrow(x + (pitch - 0.4) / 2, 5.2, x + (pitch - 0.4) / 2, sy - 0.05, color=dg.ORANGE if r else dg.BLUE, lw=0.9,
                head=5)
    c.text(left + size * pitch / 2, 6.3, "each block writes v into slot [rank] of block 0's shared memory, over "
           "the SM-to-SM network (DSMEM): no global memory, no atomic", size=7.5, color=dg.INK, bg="white")
    c.box(left - 0.5, sy - 0.5, size * pitch + 0.5, 2.6, face="none", edge=dg.BLUE, lw=1.0)
    c.text(left - 0.3, sy + 1.55, f"block 0's shared memory: partials[{size}]", size=7.5, ha="left", color=dg.BLUE,
           weight="bold", bg="white")
    for r in range(size):
        x = left + r * pitch
        c.box(x + 0.2, sy, pitch - 0.8, 1.0, face=dg.PALE, edge=dg.INK, lw=0.5, text=f"v{r}", size=6.5)
    by = 11.4
    c.line(left - 0.5, by, left + size * pitch, by, color=dg.VERMILLION, lw=1.6, dashed=True)
    c.text(left - 0.3, by + 0.6, "cluster.sync(): every push has landed before any block goes on", size=8,
           color=dg.VERMILLION, ha="left", weight="bold", bg="white")
    ry = 14.0
    rx = left + size * pitch / 2
    for r in range(size):
        x = left + r * pitch + (pitch - 0.4) / 2
        c.line(x, sy + 2.1, rx, ry, color=dg.GREY, lw=0.5)
    c.box(rx - 5.0, ry, 10.0, 1.4, face=dg.BLUE, edge=dg.INK, lw=0.6, text=f"block 0 adds the {size} values in rank order",
          size=7.5, color="white")
    c.arrow(rx, ry + 1.4, rx, ry + 2.7, color=dg.INK, lw=1.0, head=6)
    c.text(rx + 0.4, ry + 2.3, "*out", size=8, ha="left", family="DejaVu Sans Mono")
    return c
