"""Stage 12's float4 split: a scalar head up to the first 16-byte boundary, whole
float4s, a scalar tail (Float4Split in reduction/primitives.cuh), for an input that
starts one float past a boundary."""

FIGURE = "float4_split.png"
ABOUT = "stage 12: a scalar head, float4 body and scalar tail for a misaligned input"

SOURCE = "reduction/primitives.cuh"
N = 25             # floats in the picture
OFFSET_FLOATS = 1  # the input starts this many floats past a 16-byte boundary
FLOAT_BYTES = 4
VECTOR_BYTES = 16


def inputs(dg, root, results):
    # The split the picture shows is the one the code computes: check its lines.
    dg.require_line(root, SOURCE, r"struct Float4Split")
    head_line = dg.require_line(root, SOURCE, r"head = misalign == 0 \? 0 : \(4 - misalign < n \? 4 - misalign : n\);")
    vectors_line = dg.require_line(root, SOURCE, r"vectors = \(n - head\) / 4;")
    per = VECTOR_BYTES // FLOAT_BYTES
    misalign = OFFSET_FLOATS % per
    head = 0 if misalign == 0 else min(per - misalign, N)
    vectors = (N - head) // per
    return {"n": N, "offset": OFFSET_FLOATS, "head": head, "vectors": vectors, "per": per,
            "code": [head_line, vectors_line], "source": SOURCE}


def draw(dg, plt, d):
    n, head, vectors, per, off = d["n"], d["head"], d["vectors"], d["per"], d["offset"]
    tail_begin = head + vectors * per
    cell = 1.0
    left = 1.0
    width = left + (n + off) * cell + 1.0
    c = dg.Canvas(plt, width, 8.2, 0.42)
    c.text(0.4, 0.7, f"Stage 12: {n} floats starting {off} float past a 16-byte boundary", size=11, ha="left",
           weight="bold")
    c.code(0.4, 1.6, "  ".join(d["code"]), size=7, color=dg.GREY)
    y = 3.0
    # 16-byte boundaries of memory, starting before the input.
    for k in range(0, n + off + 1):
        x = left + k * cell
        if k % per == 0:
            c.line(x, y - 0.5, x, y + 1.5, color=dg.INK, lw=1.2)
            c.text(x, y - 0.8, f"{k * 4}B" if k else "0B (16-byte boundary)", size=6, color=dg.GREY,
                   ha="left" if k == 0 else "center")
    for i in range(n):
        x = left + (i + off) * cell
        if i < head:
            face = dg.ORANGE
        elif i < tail_begin:
            face = dg.SKY if ((i - head) // per) % 2 == 0 else dg.BLUE
        else:
            face = dg.GREEN
        c.box(x + 0.05, y, cell - 0.1, 1.0, face=face, text=str(i), size=6, color="white" if face == dg.BLUE else dg.INK)
    def brace(i0, i1, label, colour):
        x0 = left + (i0 + off) * cell
        x1 = left + (i1 + off) * cell
        c.line(x0 + 0.05, y + 1.5, x1 - 0.05, y + 1.5, color=colour, lw=1.5)
        c.text((x0 + x1) / 2, y + 2.1, label, size=7, color=colour)
    if head:
        brace(0, head, f"head: {head} scalar loads", dg.VERMILLION)
    brace(head, tail_begin, f"body: {vectors} float4 loads (one 16-byte load each)", dg.BLUE)
    if tail_begin < n:
        brace(tail_begin, n, f"tail: {n - tail_begin}", dg.GREEN)
    c.text(0.4, y + 3.4, "The first threads of the grid add the head and the tail; every thread reads "
           "float4s of the body.", size=8, ha="left")
    return c
