"""Histogram stage 05's layout (histogram/lane_banks.cuh): with one histogram in shared
memory, the lanes of one atomicAdd that need different words of one bank take turns;
with a copy per lane, copy c of bin b at word b x 32 + c, lane l only ever touches
bank l, so any 32 bins take one pass."""

FIGURE = "histogram_lane_banks.png"
ABOUT = "chapter 91: one shared histogram's bank conflicts against a copy of the bins per lane"

LAYOUT = "histogram/lane_banks.cuh"
VALUES = "histogram/values.cuh"
BANKS = 32  # shared memory: 32 banks of 4-byte words (CUDA C++ Programming Guide, shared memory)
# Eight lanes of one warp-wide atomicAdd and the bins they count (an example).
LANE_BINS = [3, 35, 67, 12, 44, 200, 3, 255]


def inputs(dg, root, results):
    copies_line = dg.require_line(root, LAYOUT, r"kCopies = V::kCount == 256 \? 32 : 1;")
    count_line = dg.require_line(root, LAYOUT, r"atomicAdd\(static_cast<unsigned\*>\(__cvta_shared_to_generic\(mine \+ bin \* \(kCopies \* 4\)\)\), 1u\);")
    dg.require_line(root, VALUES, r"static constexpr unsigned kCount = 256;")
    return {"bins": 256, "copies": 32, "banks": BANKS, "lane_bins": LANE_BINS,
            "code": [copies_line, count_line]}


def draw(dg, plt, d):
    banks, bins, lane_bins = d["banks"], d["bins"], d["lane_bins"]
    cell, left = 1.0, 6.0
    width = left + banks * cell + 1.0
    c = dg.Canvas(plt, width, 27.5, 0.3)
    colours = [dg.BLUE, dg.ORANGE, dg.GREEN, dg.VERMILLION, dg.PURPLE, dg.SKY, dg.BLUE, dg.YELLOW]

    def bank_header(y):
        for b in range(banks):
            if b % 4 == 0 or b == banks - 1:
                c.text(left + b * cell + 0.5, y, str(b), size=7, color=dg.GREY)
        c.text(left - 0.4, y, "bank", size=7, color=dg.GREY, ha="right")

    # Top: one histogram, bin b at word b (bank b % 32, row b / 32).
    c.text(0.4, 0.8, f"One shared histogram ({bins} bins): bin b is word b, in bank b % {banks}", size=10,
           ha="left", weight="bold")
    bank_header(2.0)
    rows = bins // banks
    y0 = 2.6
    for r in range(rows):
        c.text(left - 0.4, y0 + r * cell + 0.5, f"bins {r * banks}-{r * banks + banks - 1}", size=7, ha="right")
        for b in range(banks):
            c.box(left + b * cell, y0 + r * cell, cell, cell, face=dg.PALE, edge="white", lw=0.5)
    words = {}
    lanes_at = {}
    for lane, b in enumerate(lane_bins):
        words.setdefault(b % banks, set()).add(b // banks)
        lanes_at.setdefault(b, []).append(lane)
    for b, lanes in lanes_at.items():
        x, y = left + (b % banks) * cell, y0 + (b // banks) * cell
        face = colours[lanes[0]]
        c.box(x, y, cell, cell, face=face, edge=dg.INK, lw=0.6)
        c.text(x + 0.5, y + 0.5, ",".join(map(str, lanes)), size=7 if len(lanes) == 1 else 5.5,
               color="white" if face in (dg.BLUE, dg.VERMILLION) else dg.INK)
    passes = max(len(w) for w in words.values())
    worst = max(words, key=lambda k: len(words[k]))
    shared = [lane for lane, b in enumerate(lane_bins) if b % banks == worst]
    c.text(0.4, y0 + rows * cell + 1.0,
           f"Lanes {', '.join(map(str, shared))} want bank {worst}: lanes on the same word are served together "
           f"(lanes 0 and 6, bin 3), different words of one bank are not, so this atomicAdd takes {passes} passes.",
           size=8, ha="left")

    # Bottom: a copy per lane, copy c of bin b at word b x 32 + c (bank c).
    top = y0 + rows * cell + 3.2
    c.text(0.4, top, f"A copy per lane (stages 05, 06): copy c of bin b is word b x {banks} + c, in bank c",
           size=10, ha="left", weight="bold")
    bank_header(top + 1.2)
    shown = sorted(set(lane_bins))
    yb = top + 1.8
    for i, b in enumerate(shown):
        c.text(left - 0.4, yb + i * cell + 0.5, f"bin {b}", size=7, ha="right")
        for k in range(banks):
            c.box(left + k * cell, yb + i * cell, cell, cell, face=dg.PALE, edge="white", lw=0.5)
    for lane, b in enumerate(lane_bins):
        x, y = left + lane * cell, yb + shown.index(b) * cell
        c.box(x, y, cell, cell, face=colours[lane], edge=dg.INK, lw=0.6)
        c.text(x + 0.5, y + 0.5, str(lane), size=7, color="white" if colours[lane] in (dg.BLUE, dg.VERMILLION) else dg.INK)
    end = yb + len(shown) * cell
    c.text(0.4, end + 1.0, f"(only the rows of bins these lanes count; {bins} rows x {banks} words = "
           f"{bins * banks * 4 // 1024} KiB in all). Lane l always lands in bank l: one pass, whatever the bins.",
           size=8, ha="left")
    c.code(0.4, end + 2.3, d["code"][0], size=7.5, color=dg.GREY)
    c.code(0.4, end + 3.3, d["code"][1], size=7.5, color=dg.GREY)
    return c
