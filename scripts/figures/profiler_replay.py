"""What the L2 holds when a kernel runs: in a timed repetition of the runner (flushed by
reading a buffer of twice the L2, common/timing.hpp), and in Nsight Compute's replay
passes with --cache-control all (its default, the one scripts/profile.sh uses) and with
--cache-control none."""

FIGURE = "profiler_replay.png"
ABOUT = "chapter 22: the L2 state a kernel meets in the runner and in ncu's replays"

TIMING = "common/timing.hpp"
PROFILE = "scripts/profile.sh"
PASSES = 3  # replay passes drawn (ncu needs as many as the metrics ask for)


def inputs(dg, root, results):
    flush = dg.require_line(root, TIMING, r"read:\s+a kernel reads a buffer of twice the L2 size")
    ncu = dg.require_line(root, PROFILE, r'"\$ncu" --clock-control none --metrics')
    if "--cache-control" in ncu:
        raise dg.DiagramError(f"{PROFILE} now sets --cache-control; the figure assumes ncu's default (all).")
    return {"flush": flush, "ncu": ncu, "passes": PASSES}


def draw(dg, plt, d):
    c = dg.Canvas(plt, 40.0, 21.0, 0.26)
    c.text(0.5, 0.8, "What the L2 holds when the kernel starts", size=10, ha="left", weight="bold")
    left = 10.5

    def seg(x, y, w, label, face, color=dg.INK):
        c.box(x, y, w, 1.4, face=face, edge=dg.INK, lw=0.6, text=label, size=7, color=color)
        return x + w

    def l2(x, y, w, fill, text):
        c.box(x, y + 1.7, w, 0.7, face="white", edge=dg.GREY, lw=0.5)
        if fill:
            c.box(x, y + 1.7, w * fill, 0.7, face=dg.GREEN, edge=dg.GREY, lw=0.5)
        c.text(x + w / 2, y + 2.95, text, size=6.5, color=dg.GREEN if fill else dg.GREY)

    # The runner.
    y = 2.6
    c.text(0.5, y + 0.4, "runner, each", size=8.5, ha="left", weight="bold")
    c.text(0.5, y + 1.4, "timed repetition", size=8.5, ha="left", weight="bold")
    x = left
    for rep in range(2):
        x = seg(x, y, 4.8, "flush: read 2 x L2", dg.PALE)
        x = seg(x, y, 0.5, "", dg.YELLOW) + 0.1
        k0 = x
        x = seg(x, y, 5.2, "stage's kernel(s)", dg.BLUE, "white")
        l2(k0, y, 5.2, 0.0, "input not in L2")
        x = seg(x, y, 0.5, "", dg.YELLOW) + 0.8
    c.text(x, y + 0.7, "...", size=9, ha="left")
    c.text(left, y + 4.1, "yellow: the CUDA events; the flush leaves clean lines of its own buffer; a second kernel "
           "of the stage finds what the first left", size=7, ha="left", color=dg.GREY)

    # ncu with --cache-control all.
    for row, (name, flushes) in enumerate((("--cache-control all", True), ("--cache-control none", False))):
        y = 8.6 + row * 6.0
        c.text(0.5, y + 0.4, "ncu, one kernel", size=8.5, ha="left", weight="bold")
        c.code(0.5, y + 1.4, name, size=8)
        x = left
        x = seg(x, y, 2.4, "save", dg.ORANGE) + 0.1
        for p in range(d["passes"]):
            if p:
                x = seg(x, y, 2.4, "restore", dg.ORANGE) + 0.1
            if flushes:
                x = seg(x, y, 2.6, "flush all", dg.PALE) + 0.1
            k0 = x
            x = seg(x, y, 4.0, f"pass {p + 1}", dg.BLUE, "white") + 0.3
            if flushes or p == 0:
                l2(k0, y, 4.0, 0.0, "input not in L2" if flushes else "as the app left it")
            else:
                l2(k0, y, 4.0, 0.7, "what earlier passes left")
        c.text(x, y + 0.7, "...", size=9, ha="left")
    c.text(left, 19.0, "all: every pass starts with empty caches, every kernel of a stage reads from DRAM (a timed run "
           "finds a later kernel's input in L2)", size=7.5, ha="left")
    c.text(left, 20.1, "none: passes after the first find what the earlier passes loaded (the H200's L2 is 60 MiB): "
           "the counters of a warm L2, not of a timed run", size=7.5, ha="left")
    return c
