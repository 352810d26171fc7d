"""Stage 04's index expression (dg.BLOCK_TREES) at its first level over a warp (kWarpSize,
stage 08), into 32 four-byte banks, then padded by one word per 32."""

FIGURE = "bank_conflicts.png"
ABOUT = "stage 04's shared-memory access, with and without padding"


def inputs(dg, root, results):
    warp, warp_path = dg.warp_size(root)
    stage = dg.block_tree(root, "04")
    if not stage["index_expr"]:
        raise dg.DiagramError(f"{stage['source']}: stage 04's kernel has no `const unsigned index = ...;` line.")
    expr = dg.c_expression(stage["index_expr"], stage["source"])
    facts = dg.hardware_facts(root)
    banks = facts["banks"]
    words = [dg.c_eval(expr, {"tid": t, "stride": 1, "blockDim_x": 1024}, stage["source"]) for t in range(warp)]
    padded = [w + w // banks for w in words]

    def wavefronts(ws: list[int]) -> list[int]:
        """For each lane, the pass in which its bank serves it (distinct words of one bank queue up)."""
        seen: dict[int, list[int]] = {}
        out = []
        for w in ws:
            queue = seen.setdefault(w % banks, [])
            if w not in queue:
                queue.append(w)
            out.append(queue.index(w))
        return out

    return {"warp": warp, "warp_source": warp_path, "stage_source": stage["source"],
            "index_expr": stage["index_expr"], "banks": banks, "bank_bytes": facts["bank_bytes"],
            "words": words, "padded": padded, "passes": wavefronts(words), "padded_passes": wavefronts(padded)}


def draw(dg, plt, d):
    warp, banks = d["warp"], d["banks"]
    cell, left = 1.0, 4.2
    width = left + banks * cell + 1.0
    first = ", ".join(str(w) for w in d["words"][:3])
    panels = [
        (f"Stage 04 at its first level (stride = 1): lane tid reads partial[{d['index_expr']}], "
         f"words {first}, ..., {d['words'][-1]}", d["words"], d["passes"]),
        (f"The same words, padded with one spare word every {banks}: word w is stored at w + w / {banks}",
         d["padded"], d["padded_passes"]),
    ]
    panel_h = [2.0 + 1.0 + 3.2 + 0.9 + (max(p) + 1) * cell + 1.2 for _, _, p in panels]
    height = 2.2 + sum(panel_h) + 1.4
    c = dg.Canvas(plt, width, height, 0.27)
    c.text(0.4, 0.8, f"Shared-memory banks: {banks} banks of {d['bank_bytes']} bytes, address a in bank a mod {banks}",
           size=11, ha="left", weight="bold")
    y0 = 2.2
    for (title, words, passes), h in zip(panels, panel_h):
        degree = max(passes) + 1
        used = len({w % banks for w in words})
        verdict = (f"{used} banks in use, {degree} passes: a {degree}-way bank conflict" if degree > 1 else
                   f"{used} banks in use, 1 pass: no conflict")
        c.text(0.4, y0 + 0.5, title, size=9.5, ha="left", weight="bold")
        c.text(0.4, y0 + 1.35, verdict, size=8.5, ha="left", color=dg.VERMILLION if degree > 1 else dg.GREEN,
               weight="bold")
        ly = y0 + 2.0
        c.text(0.4, ly + 0.45, "lane", size=7.5, ha="left")
        for t in range(warp):
            colour = dg.BLUE if t < warp // 2 else dg.ORANGE
            c.box(left + t * cell, ly, cell * 0.9, 0.9, face=colour, edge=dg.INK, lw=0.4, text=str(t), size=6,
                  color="white" if colour == dg.BLUE else dg.INK)
        by = ly + 1.0 + 3.2
        c.text(0.4, by + 0.35, "bank", size=7.5, ha="left")
        for b in range(banks):
            c.text(left + b * cell + cell * 0.45, by + 0.35, str(b), size=6, color=dg.GREY)
        gy = by + 0.9
        for k in range(degree):
            c.text(0.4, gy + k * cell + 0.45, f"pass {k + 1}", size=7.5, ha="left")
            for b in range(banks):
                c.box(left + b * cell, gy + k * cell, cell * 0.9, cell * 0.9, face="white", edge=dg.PALE, lw=0.5)
        for t, (w, k) in enumerate(zip(words, passes)):
            colour = dg.BLUE if t < warp // 2 else dg.ORANGE
            b = w % banks
            c.line(left + t * cell + cell * 0.45, ly + 0.9, left + b * cell + cell * 0.45, by, color=colour, lw=0.7)
            c.box(left + b * cell, gy + k * cell, cell * 0.9, cell * 0.9, face=colour, edge=dg.INK, lw=0.4,
                  text=str(w), size=5.5, color="white" if colour == dg.BLUE else dg.INK)
        y0 += h
    c.text(0.4, height - 0.9, "A cell under a bank holds the address a lane reads. A bank delivers one address per "
           "pass, so lanes that need different addresses of one bank wait for each other.", size=7.5, ha="left")
    return c
