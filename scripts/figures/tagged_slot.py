"""Stage 14's tagged slot against stage 13's fenced ticket. A slot is one 64-bit word:
0 when empty, {kFull, the partial's bits} when full. On a timeline of trips to L2, stage
13's blocks wait for a fence before the ticket and the last block fences again before
it reads; stage 14's blocks send the slot and the ticket together, and the last block
reads each slot until it is full, then empties it for the next launch."""

FIGURE = "tagged_slot.png"
ABOUT = "stage 14: the 64-bit tagged slot, and its finish against stage 13's fences on a timeline"

PRIMITIVES = "reduction/primitives.cuh"
STAGE13 = "reduction/13_last_block.cu"
STAGE14 = "reduction/14_tagged_slots.cu"
PARTIAL = 1.5  # the partial drawn in the full word


def inputs(dg, root, results):
    import struct

    full = dg.code_constant(root, PRIMITIVES, "kFull")
    word = dg.require_line(root, PRIMITIVES, r"return \(static_cast<unsigned long long>\(kFull\) << 32\) \| "
                                             r"__float_as_uint\(v\);")
    dg.require_line(root, PRIMITIVES, r"\} while \(static_cast<unsigned>\(word >> 32\) != kFull\);")
    empty = dg.require_line(root, PRIMITIVES, r'st\.relaxed\.gpu\.global\.u64 \[%0\], %1;" ::"l"\(slot\), "l"\(0ull\)')
    store = dg.require_line(root, STAGE14, r"store_tagged\(slots \+ blockIdx\.x, block_total\);")
    ticket = dg.require_line(root, STAGE14, r"atom\.relaxed\.gpu\.global\.add\.u32")
    dg.require_line(root, STAGE14, r"v \+= await_tagged\(slots \+ b\);")
    dg.require_line(root, STAGE13, r"__threadfence\(\);\s*// release")
    dg.require_line(root, STAGE13, r"if \(is_last\) __threadfence\(\);")
    bits = struct.unpack("<I", struct.pack("<f", PARTIAL))[0]
    import re

    ticket = re.search(r"atom\.relaxed\.gpu\.global\.add\.u32", ticket).group(0)
    return {"full": full, "partial": PARTIAL, "bits": bits, "word": word, "empty": empty.split("//")[0].strip(),
            "store": store, "ticket": ticket, "sources": [PRIMITIVES, STAGE13, STAGE14]}


def draw(dg, plt, d):
    width = 44.0
    c = dg.Canvas(plt, width, 27.5, 0.27)
    c.text(0.4, 0.8, "Stage 14: a tagged slot instead of a fence", size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, d["word"], size=7, color=dg.GREY)

    # The word.
    y = 3.4
    c.text(0.4, y, "One slot, one 64-bit word, stored and loaded whole:", size=8.5, ha="left", weight="bold")
    x0, half = 15.0, 9.0
    rows = [("empty", 0, 0, dg.PALE), (f"full (partial {d['partial']:g})", d["full"], d["bits"], dg.SKY)]
    for k, (label, tag, low, face) in enumerate(rows):
        yy = y + 1.1 + k * 1.7
        c.text(x0 - 0.4, yy + 0.6, label, size=8, ha="right")
        c.box(x0, yy, half, 1.2, face=face, text=f"high 32 bits: {tag}", size=7.5)
        c.box(x0 + half, yy, half, 1.2, face=face, text=f"low 32 bits: 0x{low:08X}", size=7.5)
    c.text(x0 + 2 * half + 0.6, y + 1.7, "every slot, before and after a launch", size=7.5, ha="left")
    c.text(x0 + 2 * half + 0.6, y + 3.4, f"tag {d['full']} (\"full\") and the float's bits", size=7.5, ha="left")

    # The timelines, in trips to L2.
    y = 9.8
    c.text(0.4, y, "Thread 0 of a block, from the moment its block sum is ready (one unit: a trip to L2 and back)",
           size=8.5, ha="left", weight="bold")
    unit, xs = 6.0, 11.0
    for k in range(5):
        x = xs + k * unit
        c.line(x, y + 0.7, x, y + 13.6, color=dg.PALE, lw=0.8)
        c.text(x, y + 13.9, str(k), size=7, color=dg.GREY)
    bar = 1.1

    def row(yy, label, segments):
        c.text(xs - 0.4, yy + bar / 2, label, size=7.5, ha="right")
        for start, length, text, face in segments:
            c.box(xs + start * unit, yy, length * unit - 0.08, bar, face=face, text=text, size=6.8,
                  color="white" if face in (dg.BLUE, dg.VERMILLION, dg.GREEN) else dg.INK)

    yy = y + 1.3
    c.text(0.4, yy + 0.4, "stage 13", size=8, ha="left", weight="bold")
    row(yy + 1.2, "any block", [(0, 1, "store; fence waits", dg.ORANGE), (1, 1, "atomicAdd: ticket", dg.BLUE)])
    row(yy + 2.7, "the last block", [(0, 1, "store; fence waits", dg.ORANGE), (1, 1, "atomicAdd: last", dg.BLUE),
                                     (2, 0.25, "", dg.ORANGE), (2.25, 1, "read partials", dg.GREEN),
                                     (3.25, 0.6, "add", dg.PALE)])
    c.text(xs + 2.12 * unit, yy + 4.3, "fence", size=6.5, color=dg.GREY)
    yy = y + 7.0
    c.text(0.4, yy + 0.4, "stage 14", size=8, ha="left", weight="bold")
    row(yy + 1.2, "any block", [(0, 1, "slot and ticket together", dg.BLUE)])
    row(yy + 2.7, "the last block", [(0, 1, "slot and ticket: last", dg.BLUE),
                                     (1, 1, "read slots until full", dg.GREEN), (2, 0.6, "add", dg.PALE)])
    c.text(xs + 1.5 * unit, yy + 2.7 + bar + 0.5, "then store 0 in each slot read (nothing waits for it)", size=6.8,
           color=dg.GREY)
    c.text(xs + 2.8 * unit, yy + 1.2 + bar / 2, "no fence, and one trip less for the last block", size=7.5,
           ha="left", color=dg.GREY)

    y = 24.6
    notes = [
        f"{d['store']} and {d['ticket']} are both relaxed: the ticket may come back before a slot has "
        "landed, so the last block reads each slot until it is full.",
        "It then stores 0 in it: every launch leaves every slot it used empty, whatever its grid, so a full slot can "
        "only be this launch's. Schematic: the trips' lengths vary.",
    ]
    for k, s in enumerate(notes):
        c.text(0.4, y + k * 0.95, s, size=7.5, ha="left")
    return c
