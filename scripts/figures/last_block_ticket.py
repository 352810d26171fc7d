"""The steps of stage 13's last-block ticket (store, __threadfence(), atomicAdd on the
ticket, the last ticket adds), each with the code it stands for, required in order."""

FIGURE = "last_block_ticket.png"
ABOUT = "the last-block ticket"
TICKET_BLOCKS = 6  # blocks in the picture

TICKET_STEPS = [
    ("store the partial", "partials[blockIdx.x] = block_total;"),
    ("__threadfence()", "__threadfence();"),
    ("take a ticket", "atomicAdd(ticket, 1u)"),
    ("compare with the last ticket", "== gridDim.x - 1"),
    ("read every partial", "for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock)"),
    ("reset the ticket", "*ticket = 0;"),
]


def inputs(dg, root, results):
    path, _, _ = dg.stage_source(root, "13")
    dg.require_code(root, path, *(code for _, code in TICKET_STEPS))
    return {"source": path, "blocks": TICKET_BLOCKS, "steps": [name for name, _ in TICKET_STEPS]}


def draw(dg, plt, d):
    blocks = d["blocks"]
    # Made-up durations for the picture: the blocks finish their chunks in an order of their own.
    work = [6.2, 9.4, 3.8, 10.8, 8.0, 5.0, 7.1, 4.4][:blocks]
    store, fence, atomic = 0.5, 1.3, 1.0
    took = sorted(range(blocks), key=lambda b: work[b])
    ticket = {b: i for i, b in enumerate(took)}
    last = took[-1]
    left, row = 4.5, 1.6
    read, write = 6.5, 4.8
    width = 40.0
    top = 3.4
    height = top + row * (blocks + 1) + 4.6
    c = dg.Canvas(plt, width, height, 0.26)
    c.text(0.4, 0.8, f"A single pass over {blocks} blocks: store the partial, fence, take a ticket; the last ticket "
           "adds the partials", size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, f"the steps, in this order, are read from {d['source']}", size=7.5, color=dg.GREY)
    events = []
    for b in range(blocks):
        y = top + row * b
        c.text(0.4, y + 0.5, f"block {b}", size=8, ha="left", weight="bold")
        x = left
        c.box(x, y, work[b], 1.0, face=dg.PALE, edge=dg.INK, lw=0.4, text="sum its chunk", size=6.5)
        x += work[b]
        c.box(x, y, store, 1.0, face=dg.SKY, edge=dg.INK, lw=0.4)
        x += store
        c.box(x, y, fence, 1.0, face=dg.ORANGE, edge=dg.INK, lw=0.4, text="fence", size=6.5)
        x += fence
        c.box(x, y, atomic, 1.0, face=dg.BLUE, edge=dg.INK, lw=0.4, text=str(ticket[b]), size=7, color="white")
        x += atomic
        events.append((x, b))
        if b == last:
            c.box(x, y, read, 1.0, face=dg.GREEN, edge=dg.INK, lw=0.4, text=f"read partials 0-{blocks - 1}, add",
                  size=6.5, color="white")
            c.box(x + read, y, write, 1.0, face=dg.VERMILLION, edge=dg.INK, lw=0.4, text="write sum, ticket = 0",
                  size=6.5, color="white")
            end = x + read + write
        else:
            c.text(x + 0.4, y + 0.5, f"drew {ticket[b]}, not {blocks - 1}: done", size=7, ha="left", color=dg.GREY)
    # The ticket in memory: the value each atomicAdd leaves behind.
    y = top + row * blocks + 0.3
    c.text(0.4, y + 0.5, "ticket", size=8, ha="left", weight="bold")
    x, value = left, 0
    for t, _ in sorted(events) + [(end, None)]:
        c.box(x, y, t - x, 1.0, face="white", edge=dg.GREY, lw=0.5, text=str(value), size=7)
        x, value = t, (value + 1 if _ is not None else 0)
    c.box(x, y, 2.0, 1.0, face="white", edge=dg.GREY, lw=0.5, text="0", size=7)
    ly = height - 3.5
    items = [(dg.PALE, "sum the block's chunk"), (dg.SKY, "store partials[block]"), (dg.ORANGE, "__threadfence()"),
             (dg.BLUE, "atomicAdd(&ticket, 1): the old value"), (dg.GREEN, "only the last: read every partial"),
             (dg.VERMILLION, "write the sum, reset the ticket")]
    for i, (colour, label) in enumerate(items):
        x = 0.4 + (i % 3) * 13.2
        yy = ly + (i // 3) * 1.0
        c.box(x, yy - 0.35, 0.7, 0.7, face=colour, edge=dg.INK, lw=0.4)
        c.text(x + 1.0, yy, label, size=7.5, ha="left")
    c.text(0.4, height - 0.9, "Store, then fence, then ticket: a block's partial is visible before its ticket is. "
           "The last block's reads must in turn not be served from before it saw the last ticket (acquire).",
           size=7.5, ha="left")
    return c
