"""Stage 01's tree of pairwise additions: the pairing dst[i] = src[A] + src[B], written out
here (PAIR) and required verbatim in the stage's file, run on 16 elements and checked to
sum every element once before anything is drawn."""

FIGURE = "reduction_tree.png"
ABOUT = "the reduction tree of stage 01"
TREE_ELEMENTS = 16  # elements in the picture

PAIR = ("2 * i", "2 * i + 1")  # stage 01: dst[i] = src[A] + src[B], run by dg's expression evaluator


def inputs(dg, root, results):
    path, _, title = dg.stage_source(root, "01")
    code = f"dst[i] = src[{PAIR[0]}] + src[{PAIR[1]}]"
    dg.require_code(root, path, code + ";")
    left, right = (dg.c_expression(e, path) for e in PAIR)
    levels = []
    m_size = TREE_ELEMENTS
    while m_size > 1:
        level = []
        for i in range(m_size // 2):
            level.append((i, dg.c_eval(left, {"i": i}, path), dg.c_eval(right, {"i": i}, path)))
        levels.append(level)
        m_size = (m_size + 1) // 2
    # Stage 01 writes each level to a new buffer; replay it as a tree over the leaves.
    held = [{i} for i in range(TREE_ELEMENTS)]
    for level in levels:
        nxt = [held[a] | held[b] for _, a, b in level]
        if any(held[a] & held[b] for _, a, b in level):
            raise dg.DiagramError(f"{path}: a level of add_neighbour_pairs adds an element to itself.")
        held = nxt
    if held != [set(range(TREE_ELEMENTS))]:
        raise dg.DiagramError(f"{path}: add_neighbour_pairs does not sum {TREE_ELEMENTS} elements into one.")
    return {"source": path, "title": title, "code": code, "elements": TREE_ELEMENTS, "levels": levels}


def draw(dg, plt, d):
    n = d["elements"]
    pitch, left = 1.3, 5.5
    levels = d["levels"]
    row = 2.2
    width = left + n * pitch + 6.5
    height = 3.4 + row * (len(levels) + 1) + 1.6
    c = dg.Canvas(plt, width, height, 0.36)
    c.text(0.4, 0.8, f"Stage 01: a tree of pairwise additions, one kernel launch per level ({n} elements)",
           size=11, ha="left", weight="bold")
    c.code(0.4, 1.9, d["code"] + ";   " + d["source"], size=8, color=dg.GREY)
    # Leaves at the bottom, the sum at the top.
    y_of = [3.4 + row * (len(levels) - k) for k in range(len(levels) + 1)]
    xs = [left + i * pitch + pitch / 2 for i in range(n)]
    spans = [(i, i) for i in range(n)]
    bw, bh = 1.05, 0.9
    for i, x in enumerate(xs):
        c.box(x - bw / 2, y_of[0], bw, bh, face=dg.PALE, text=f"x{i}", size=7)
    c.text(0.4, y_of[0] + bh / 2, "input", ha="left", size=8)
    for k, level in enumerate(levels, start=1):
        new_xs, new_spans = [], []
        y = y_of[k]
        for i, a, b in level:
            x = (xs[a] + xs[b]) / 2
            span = (spans[a][0], spans[b][1])
            colour = dg.BLUE if k == len(levels) else dg.SKY
            for src in (a, b):
                c.line(xs[src], y_of[k - 1], x, y + bh, color=dg.GREY, lw=0.8)
            label = f"{span[0]}–{span[1]}"
            c.box(x - bw / 2, y, bw, bh, face=colour, edge=dg.INK, text=label, size=6.5,
                  color="white" if colour == dg.BLUE else dg.INK)
            new_xs.append(x)
            new_spans.append(span)
        xs, spans = new_xs, new_spans
        c.text(0.4, y + bh / 2, f"launch {k}", ha="left", size=8, weight="bold")
        c.text(left + n * pitch + 0.6, y + bh / 2, f"{len(level)} thread{'s' if len(level) > 1 else ''}, "
               f"{len(level)} addition{'s' if len(level) > 1 else ''}", ha="left", size=8)
    total = sum(len(level) for level in levels)
    c.text(0.4, height - 0.8, f"{len(levels)} launches (log2 {n}), {total} additions (n - 1); "
           "a box a–b holds the sum of elements a to b; each level is written to a new buffer in global memory.",
           ha="left", size=8)
    return c
