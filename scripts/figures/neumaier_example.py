"""Stage 17's Neumaier step on five floats, computed here in float32 exactly as
neumaier_add in reduction/17_compensated.cu does: the plain float sum loses a 1 to
rounding near 2^24, and the compensation c keeps it, so s + c is the exact sum."""

FIGURE = "neumaier_example.png"
ABOUT = "stage 17: a worked Neumaier sum in float32, where the plain sum loses and s + c keeps the bits"

SOURCE = "reduction/17_compensated.cu"
VALUES = [1.5, 16777216.0, 0.75, 0.75, -16777216.0]  # 2^24: the spacing of floats there is 2


def inputs(dg, root, results):
    import numpy as np

    lines = [
        dg.require_line(root, SOURCE, r"const float t = p\.s \+ x;"),
        dg.require_line(root, SOURCE, r"const bool s_larger = fabsf\(p\.s\) >= fabsf\(x\);"),
        dg.require_line(root, SOURCE, r"p\.c \+= \(larger - t\) \+ smaller;"),
        dg.require_line(root, SOURCE, r"p\.s = t;"),
    ]
    f = np.float32
    s, c, plain = f(0.0), f(0.0), f(0.0)
    steps = []
    for v in VALUES:
        x = f(v)
        t = f(s + x)
        larger, smaller = (s, x) if abs(s) >= abs(x) else (x, s)
        e = f(f(larger - t) + smaller)
        c = f(c + e)
        s = t
        plain = f(plain + x)
        steps.append({"x": float(x), "t": float(t), "e": float(e), "c": float(c), "plain": float(plain)})
    exact = sum(VALUES)  # every value is a small multiple of 2^-2: exact in a double
    result = float(f(s + c))
    if float(plain) == exact or result != exact:
        raise dg.DiagramError(f"the example no longer shows the point: plain {float(plain)}, compensated {result}, "
                              f"exact {exact}.")
    return {"lines": lines, "steps": steps, "exact": exact, "result": result, "plain": float(plain),
            "s": float(s), "c": float(c), "source": SOURCE}


def draw(dg, plt, d):
    def num(v):
        return f"{v:,.2f}".rstrip("0").rstrip(".") if v != int(v) else f"{int(v):,}"

    width = 40.0
    steps = d["steps"]
    c = dg.Canvas(plt, width, 8.4 + 1.15 * len(steps), 0.3)
    c.text(0.4, 0.8, "Stage 17: Neumaier's step on five floats (float32, computed as the kernel does)", size=11,
           ha="left", weight="bold")
    c.code(0.4, 1.8, "   ".join(line.split("//")[0].strip() for line in d["lines"]), size=7, color=dg.GREY)
    cols = [("step", 2.2), ("x", 7.0), ("t = fl(s + x)", 13.5), ("error: (larger - t) + smaller", 22.0),
            ("c", 28.5), ("plain float sum", 35.0)]
    y = 3.4
    for name, x in cols:
        c.text(x, y, name, size=8, weight="bold")
    c.line(0.6, y + 0.6, width - 0.6, y + 0.6, color=dg.INK, lw=0.8)
    for k, st in enumerate(steps):
        yy = y + 1.3 + k * 1.15
        lost = st["e"] != 0.0
        values = [str(k + 1), num(st["x"]), num(st["t"]), num(st["e"]), num(st["c"]), num(st["plain"])]
        for (name, x), v in zip(cols, values):
            colour = dg.VERMILLION if (name.startswith("error") and lost) else dg.INK
            c.text(x, yy, v, size=8, color=colour, family="DejaVu Sans Mono")
    y = y + 1.3 + len(steps) * 1.15 + 0.2
    c.line(0.6, y - 0.5, width - 0.6, y - 0.5, color=dg.INK, lw=0.8)
    c.box(1.0, y, 11.5, 1.3, face=dg.PALE, text=f"plain sum: {num(d['plain'])}", size=8.5)
    c.box(13.5, y, 13.0, 1.3, face=dg.SKY, text=f"s + c = {num(d['s'])} + {num(d['c'])} = {num(d['result'])}",
          size=8.5)
    c.box(27.5, y, 11.5, 1.3, face=dg.GREEN, text=f"exact sum: {num(d['exact'])}", size=8.5, color="white")
    c.text(0.6, y + 2.3, "Near 2^24 floats are 2 apart: 1.5 + 16,777,216 rounds up by 0.5, and each + 0.75 rounds "
           "down by 0.75. The plain sum forgets those errors; c adds them up exactly.", size=7.5, ha="left")
    return c
