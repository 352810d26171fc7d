"""One thread's loads and additions over time in stage 10 at n = 2^24: full rounds of
kLoads loads issued together, then the fewer than kLoads elements left over, loaded one
after another (a loop that adds each before loading the next) or all together (one
guarded round). Time is counted in trips to memory: a warp issues in order and waits at
the first addition whose load has not arrived, so each round costs one trip."""

FIGURE = "batched_tail.png"
ABOUT = "stage 10: the leftover elements loaded one after another against loaded together"

N = 1 << 24
ALT_LOADS = 8  # the footnote's other round size (chapter 10, exercise 1)


def per_thread(n, threads, loads):
    """Elements, full rounds and leftovers of the threads with the fewest elements."""
    elements = n // threads
    return elements, elements // loads, elements % loads


def inputs(dg, root, results):
    import result_files

    path, text, _ = dg.stage_source(root, "10")
    loads = dg.code_constant(root, path, "kLoads")
    main = dg.require_line(root, path, r"for \(; i \+ \(kLoads - 1\) \* stride < n; i \+= kLoads \* stride\)")
    tail = dg.require_line(root, path, r"last\[k\] = i \+ k \* stride < n \? in\[i \+ k \* stride\] : 0\.0f;")
    dg.require_line(root, path, r"sum\[k\] \+= last\[k\];")
    table = result_files.load(results / "reduce_2p24.csv")
    row = [r for r in table.rows if r["key"] == "10"]
    if len(row) != 1 or int(float(row[0]["n"])) != N:
        raise dg.DiagramError(f"{table.path} has no single row for stage 10 at n = 2^24.")
    grid, block = int(float(row[0]["grid"])), int(float(row[0]["block"]))
    threads = grid * block
    elements, rounds, left = per_thread(N, threads, loads)
    _, alt_rounds, alt_left = per_thread(N, threads, ALT_LOADS)
    return {"source": path, "loads": loads, "code": [main, tail], "grid": grid, "block": block, "threads": threads,
            "elements": elements, "more": N % threads, "rounds": rounds, "left": left,
            "alt_loads": ALT_LOADS, "alt_rounds": alt_rounds, "alt_left": alt_left,
            "file": f"results/h200/{table.path.name}"}


def draw(dg, plt, d):
    k, rounds, left = d["loads"], d["rounds"], d["left"]
    trip = 2.4          # one trip to memory, in picture units
    add = 0.5           # the additions once the data is in
    stagger = 0.03      # loads issued one after another, a few cycles apart
    step = trip + (k - 1) * stagger + add + 0.15
    bar, gap = 0.42, 0.12
    x0 = 7.6
    shown = [0, 1, None, rounds - 1] if rounds > 3 else list(range(rounds))  # None: the rounds not drawn
    gap_w = 3.4
    width = x0 + 3 * step + gap_w + max(left, 1) * (trip + add + 0.1) + 7.0
    row_h = k * (bar + gap)
    height = 11.0 + 2 * row_h + (2.0 if d["alt_loads"] != k else 1.2)
    c = dg.Canvas(plt, width, height, 0.27)
    c.text(0.4, 0.8, f"Stage 10 at n = 2^24: one thread's {d['elements']} elements, {rounds} rounds of {k} loads and "
           f"{left} left over", size=11, ha="left", weight="bold")
    c.code(0.4, 1.7, f"{d['code'][0]}  (the rounds)", size=7, color=dg.GREY)
    c.code(0.4, 2.5, f"{d['code'][1]}  (the last round)", size=7, color=dg.GREY)
    c.text(0.4, 3.4, f"{d['source']}: grid {d['grid']} x block {d['block']} = {d['threads']} threads "
           f"({d['file']}); 2^24 / {d['threads']} = {d['elements']} elements a thread ({d['more']} threads have one "
           "more).", size=7.5, ha="left")

    def rounds_row(y):
        x = x0
        for r in shown:
            if r is None:
                c.text(x + gap_w / 2, y + row_h / 2, f"... {rounds - 3} more\nrounds ...", size=7, color=dg.GREY)
                x += gap_w
                continue
            for j in range(k):
                c.box(x + j * stagger, y + j * (bar + gap), trip, bar, face=dg.BLUE if j % 2 == 0 else dg.SKY, lw=0.3)
            c.box(x + trip + (k - 1) * stagger, y, add, row_h - gap, face=dg.ORANGE, lw=0.3)
            c.text(x + trip / 2, y - 0.45, f"round {r + 1}", size=6.5, color=dg.GREY)
            x += step
        return x

    def lane(y, label, serial):
        c.text(0.4, y + row_h / 2, label, size=8, ha="left", weight="bold")
        x = rounds_row(y)
        x_tail = x
        if serial:
            for j in range(left):
                c.box(x, y + j * (bar + gap), trip, bar, face=dg.VERMILLION, lw=0.3)
                c.box(x + trip, y + j * (bar + gap), add, bar, face=dg.ORANGE, lw=0.3)
                x += trip + add + 0.1
            trips = rounds + left
        else:
            for j in range(k):
                if j < left:
                    c.box(x + j * stagger, y + j * (bar + gap), trip, bar, face=dg.GREEN, lw=0.3)
                else:
                    c.box(x + j * stagger, y + j * (bar + gap), trip, bar, face="white", edge=dg.GREY, lw=0.4,
                          dashed=True, text="0.0f", size=6, color=dg.GREY)
            c.box(x + trip + (k - 1) * stagger, y, add, row_h - gap, face=dg.ORANGE, lw=0.3)
            x += step
            if left < k:
                c.text(x + 0.1, y + (left + (k - left) / 2) * (bar + gap), "out of range:\nno load", size=6,
                       color=dg.GREY, ha="left")
            trips = rounds + 1
        c.line(x_tail - 0.07, y - 0.9, x_tail - 0.07, y + row_h + 0.2, color=dg.INK, lw=0.6, dashed=True)
        c.text(width - 0.4, y + row_h / 2, f"{trips} trips\nto memory", size=8.5, ha="right", weight="bold")
        return x_tail

    y1 = 5.6
    xt = lane(y1, "leftovers one\nafter another", True)
    c.text(xt + 0.1, y1 - 0.45, f"{left} loads, each after the add before it", size=6.5, color=dg.VERMILLION,
           ha="left")
    y2 = y1 + row_h + 2.2
    xt = lane(y2, "leftovers\ntogether", False)
    c.text(xt + 0.1, y2 - 0.45, "one guarded round: all issued, then added", size=6.5, color=dg.GREEN, ha="left")
    # The unit of time.
    y3 = y2 + row_h + 0.8
    c.arrow(x0, y3, x0 + trip, y3, color=dg.INK, lw=0.7, head=4)
    c.arrow(x0 + trip, y3, x0, y3, color=dg.INK, lw=0.7, head=4)
    c.text(x0 + trip + 0.3, y3, "one trip to memory: the latency of a load under load", size=7, ha="left")
    c.text(0.4, y3 + 1.2, "blue: the loads of a full round on their way; orange: the additions. A warp issues in order "
           "and stops at the first addition whose load has not arrived, so each round costs one trip.", size=7,
           ha="left")
    if d["alt_loads"] != k:
        c.text(0.4, y3 + 2.0, f"With {d['alt_loads']} loads a round the same thread has {d['alt_rounds']} rounds and "
               f"{d['alt_left']} left over: {d['alt_rounds'] + d['alt_left']} trips one after another, "
               f"{d['alt_rounds'] + 1} together.", size=7, ha="left")
    return c
