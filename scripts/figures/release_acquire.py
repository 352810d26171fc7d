"""The fenced ticket as message passing (stages 13, 16 and 17): in a block that
publishes, its threads store, a __syncthreads() orders those stores before thread 0's
__threadfence() (release), which orders them before the ticket; the block that draws the
last ticket fences after it (acquire), and a __syncthreads() carries that to the threads
that read. Every step is a step of the PTX memory model's causality order."""

FIGURE = "release_acquire.png"
ABOUT = "stages 13, 16, 17: store, barrier, fence, ticket; ticket, fence, barrier, read"

STAGE13 = "reduction/13_last_block.cu"
STAGE16 = "reduction/16_reproducible.cu"
THREADS = (0, 128, 256)  # the threads drawn in each block (thread r of team r / 128 in stage 16)


def inputs(dg, root, results):
    # Stage 13: one thread stores, fences, takes the ticket; the last block fences again.
    release = dg.require_line(root, STAGE13, r"__threadfence\(\);\s*// release")
    acquire = dg.require_line(root, STAGE13, r"if \(is_last\) __threadfence\(\);")
    dg.require_code(root, STAGE13, "partials[blockIdx.x] = block_total;", "__threadfence();",
                    "is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;", "if (is_last) __threadfence();",
                    "__syncthreads();", "if (!is_last) return;")
    # Stage 16: several threads store, a barrier, thread 0 fences and takes the ticket.
    dg.require_code(root, STAGE16, "scratch.tile_sums[tile_slot(t, groups)] = ", "__syncthreads();",
                    "if (threadIdx.x == 0) {", "__threadfence();",
                    "is_last = atomicAdd(scratch.ticket, 1u) == gridDim.x - 1;", "if (is_last) __threadfence();",
                    "__syncthreads();", "if (!is_last) return;")
    team = dg.code_constant(root, "reduction/16_reproducible_order.hpp", "kTeam")
    if any(t % team for t in THREADS):
        raise dg.DiagramError(f"the threads drawn, {THREADS}, are not first threads of stage 16's teams of {team}.")
    return {"release": release, "acquire": acquire, "threads": list(THREADS), "team": team,
            "sources": [STAGE13, STAGE16]}


def draw(dg, plt, d):
    threads = d["threads"]
    lane_w, gap = 4.2, 0.6
    left_x = 1.0
    right_x = left_x + len(threads) * (lane_w + gap) + 6.0
    width = right_x + len(threads) * (lane_w + gap) + 0.6
    c = dg.Canvas(plt, width, 27.0, 0.3)
    c.text(0.4, 0.8, "The fenced ticket as message passing: a release in the block that publishes, an acquire in the "
           "block that finishes", size=11, ha="left", weight="bold")
    code = [s.split("//")[0].strip() for s in (d["release"], d["acquire"])]
    c.code(0.4, 1.8, f"{code[0]}  ...  {code[1]}      ({', '.join(d['sources'])})", size=7, color=dg.GREY)

    box_h, step = 1.3, 2.5
    top = 4.6

    def lane_x(base, i):
        return base + i * (lane_w + gap)

    def lanes(base, title, first, last):
        c.text(base, top - 1.3, title, size=9, ha="left", weight="bold")
        for i, t in enumerate(threads):
            x = lane_x(base, i)
            c.text(x + lane_w / 2, top - 0.3, f"thread {t}", size=7.5)
            c.line(x + lane_w / 2, top + 0.4 + first * step, x + lane_w / 2, top + 0.4 + last * step + box_h, color=dg.PALE,
                   lw=2.0)
            c.ax.lines[-1].set_zorder(0.5)  # behind the boxes

    def cell(base, i, row, text, face, color=None):
        x = lane_x(base, i)
        y = top + 0.4 + row * step
        c.box(x, y, lane_w, box_h, face=face, text=text, size=7,
              color=color or ("white" if face in (dg.BLUE, dg.VERMILLION) else dg.INK))
        return x, y

    def barrier(base, row, text):
        y = top + 0.4 + row * step + box_h / 2
        x0 = lane_x(base, 0) - 0.3
        x1 = lane_x(base, len(threads) - 1) + lane_w + 0.3
        c.line(x0, y, x1, y, color=dg.INK, lw=2.2)
        c.text((x0 + x1) / 2, y - 0.45, text, size=7, bg="white")

    # The block that publishes.
    lanes(left_x, "a block that publishes (block b)", 0, 3)
    for i, t in enumerate(threads):
        cell(left_x, i, 0, "store its tile sum" if t else "store its partial", dg.SKY)
    barrier(left_x, 1, "__syncthreads()  (bar.sync)")
    cell(left_x, 0, 2, "__threadfence()\nrelease", dg.ORANGE)
    ax, ay = cell(left_x, 0, 3, "atomicAdd(ticket)\ndraws k < grid - 1", dg.BLUE)
    c.text(ax + lane_w / 2, ay + box_h + 0.5, "not last: returns", size=7, color=dg.GREY)

    # The block that draws the last ticket.
    lanes(right_x, "the block that draws the last ticket", 3, 6)
    bx, by = cell(right_x, 0, 3, "atomicAdd(ticket)\ndraws grid - 1", dg.BLUE)
    cell(right_x, 0, 4, "__threadfence()\nacquire", dg.ORANGE)
    barrier(right_x, 5, "__syncthreads()  (bar.sync)")
    for i in range(len(threads)):
        cell(right_x, i, 6, "read the sums\n(__ldcg, from L2)", dg.GREEN, color="white")

    # The ticket: the atomics follow one another at L2.
    c.arrow(ax + lane_w + 0.1, ay + box_h / 2, bx - 0.1, by + box_h / 2, color=dg.VERMILLION, lw=1.4, head=7)
    mid = (ax + lane_w + bx) / 2
    c.text(mid, ay - 0.55, "the ticket's atomics, one after another in L2:", size=7, color=dg.VERMILLION)
    c.text(mid, ay + box_h + 0.6, "the release synchronizes with the acquire", size=7, color=dg.VERMILLION)

    # Program order in thread 0 on each side.
    for base, rows in ((left_x, (0, 1, 2, 3)), (right_x, (3, 4, 5, 6))):
        x = lane_x(base, 0) - 0.35
        c.arrow(x, top + 0.4 + rows[0] * step, x, top + 0.4 + rows[-1] * step + box_h, color=dg.GREY, lw=0.8,
                head=4)

    y = top + 7 * step + 1.0
    lines = [
        "Each step orders what comes before it before what comes after it (PTX ISA, Memory Consistency Model, "
        "8.9.4 and 8.9.5):",
        "program order inside a thread; bar.sync between the threads of one block; a release pattern (fence, then "
        "the atomic) with an acquire pattern (the atomic, then fence) between blocks.",
        "Causality order is transitive, so every store on the left comes before every read on the right. Stage 13 "
        "stores from thread 0 only; stage 16's teams store from several threads.",
    ]
    for k, s in enumerate(lines):
        c.text(0.4, y + k * 0.9, s, size=7.5, ha="left")
    return c
