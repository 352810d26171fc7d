"""Stage 08's warp_sum loop (dg.SHUFFLE, required verbatim): its offsets over kWarpSize lanes."""

FIGURE = "warp_shuffle_down.png"
ABOUT = "stage 08's shuffle-down rounds"


def inputs(dg, root, results):
    warp, path = dg.warp_size(root)
    dg.require_code(root, path, f"{dg.SHUFFLE.text} v += {dg.SHUFFLE_CALL};")
    offsets = dg.SHUFFLE.values({"kWarpSize": warp}, path)
    held = [{i} for i in range(warp)]
    for off in offsets:
        held = [held[i] | held[i + off] if i + off < warp else held[i] for i in range(warp)]
    if held[0] != set(range(warp)):
        raise dg.DiagramError(f"{path}: the offsets {offsets} do not leave the warp's sum in lane 0.")
    return {"source": path, "warp": warp, "offsets": offsets, "call": dg.SHUFFLE_CALL, "loop": dg.SHUFFLE.text}


def draw(dg, plt, d):
    warp, offsets = d["warp"], d["offsets"]
    cell, left = 1.0, 4.6
    row = 2.3
    width = left + warp * cell + 1.0
    height = 3.6 + row * len(offsets) + 1.0 + 1.4
    c = dg.Canvas(plt, width, height, 0.27)
    c.text(0.4, 0.8, f"Stage 08: a warp of {warp} lanes adds its values with "
           f"{len(offsets)} shuffles, offsets {', '.join(map(str, offsets))}", size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, f"v += {d['call']};   {d['source']}", size=8, color=dg.GREY)
    y = 3.0
    c.text(0.4, y + 0.45, "lane", size=7.5, ha="left")
    counts = [1] * warp
    for t in range(warp):
        c.box(left + t * cell, y, cell * 0.9, 0.9, face=dg.PALE, edge=dg.INK, lw=0.4, text=str(t), size=6)
    for k, off in enumerate(offsets):
        y_prev, y = y, 3.0 + row * (k + 1)
        c.text(0.4, y + 0.45, f"offset {off}", size=7.5, ha="left", weight="bold")
        new = [counts[i] + counts[i + off] if i + off < warp else counts[i] for i in range(warp)]
        for i in range(off):
            c.arrow(left + (i + off) * cell + 0.45, y_prev + 0.95, left + i * cell + 0.45, y - 0.05, color=dg.BLUE,
                    lw=0.6, head=4)
        for i in range(warp):
            useful = i < off
            face = (dg.VERMILLION if i == 0 and k == len(offsets) - 1 else dg.BLUE) if useful else "white"
            c.box(left + i * cell, y, cell * 0.9, 0.9, face=face, edge=dg.INK if useful else dg.PALE, lw=0.4,
                  text=str(new[i]) if useful else None, size=6, color="white")
        counts = new
    c.text(0.4, height - 1.4, f"A number is how many of the {warp} values the lane holds. Lane i adds the value of "
           "lane i + offset; only lanes below the offset (blue) hold values that are still needed.", size=7.5,
           ha="left")
    c.text(0.4, height - 0.6, f"After the last shuffle lane 0 (vermillion) holds the sum of all {warp}: no shared "
           "memory and no barrier.", size=7.5, ha="left")
    return c
