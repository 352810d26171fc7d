"""What one 16-byte load (a uint4 of four 32-bit words) of x and of y holds in the
mixed-precision dot products, and the instruction that folds each word: fmaf on one
float, __hfma2 on a half2 (two products), __dp4a on a char4 (four products summed into
an int). The elements per load are each variant's DotShape."""

FIGURE = "dot_packing.png"
ABOUT = "chapter 20: one 16-byte load of x and y in FP32, FP16 (half2) and INT8 (dp4a)"

VARIANTS = [  # file, the fold line the picture names, label, instruction, what one instruction does
    ("mixed_precision/01_fp32.cu", r"acc = fmaf\(__uint_as_float\(x\.x\), __uint_as_float\(y\.x\), acc\);",
     "FP32 (01)", "fmaf", "1 product added to a float"),
    ("mixed_precision/02_fp16_half_accumulate.cu",
     r"acc = __hfma2\(bits_as<__half2>\(x\.x\), bits_as<__half2>\(y\.x\), acc\);",
     "FP16 as half2 (02)", "__hfma2", "2 products, each added to its half of a half2"),
    ("mixed_precision/05_int8_dp4a.cu", r"acc = __dp4a\(static_cast<int>\(x\.x\), static_cast<int>\(y\.x\), acc\);",
     "INT8 as char4 (05)", "__dp4a", "4 products summed into one int"),
]
LOAD_BYTES = 16
WORD_BYTES = 4


def inputs(dg, root, results):
    import re

    rows = []
    for path, fold, label, instr, what in VARIANTS:
        shape = dg.require_line(root, path, r"static constexpr DotShape kShape\{\d+, \d+\};")
        per_chunk, lanes = (int(v) for v in re.search(r"\{(\d+), (\d+)\}", shape).groups())
        rows.append({"path": path, "fold": dg.require_line(root, path, fold), "label": label, "instr": instr,
                     "what": what, "per_chunk": per_chunk, "acc_lanes": lanes})
    return {"rows": rows, "load": LOAD_BYTES, "word": WORD_BYTES}


def draw(dg, plt, d):
    cell, left = 1.25, 7.5
    nbytes, words = d["load"], d["load"] // d["word"]
    width = left + nbytes * cell + 10.5
    c = dg.Canvas(plt, width, 3.4 + 6.2 * len(d["rows"]), 0.3)
    c.text(0.4, 0.8, f"One {nbytes}-byte load of x and of y (uint4: four {d['word']}-byte words)", size=10,
           ha="left", weight="bold")
    c.text(0.4, 1.9, "each word is folded by one instruction; narrower types put more elements in the same load",
           size=8, ha="left", color=dg.GREY)
    y = 3.5
    for r in d["rows"]:
        per = r["per_chunk"]
        ebytes = nbytes // per
        c.text(0.4, y + 0.9, r["label"], size=9, ha="left", weight="bold")
        c.text(0.4, y + 1.9, f"{per} elements of {ebytes} B", size=8, ha="left")
        for row, name in ((0, "x"), (1, "y")):
            yy = y + row * 1.4
            c.text(left - 0.5, yy + 0.6, name, size=8, ha="right")
            for e in range(per):
                word = e * ebytes // d["word"]
                face = dg.SKY if word % 2 == 0 else dg.BLUE
                c.box(left + e * ebytes * cell, yy, ebytes * cell, 1.1, face=face, edge="white", lw=1.0,
                      text=f"{name}{e}", size=6.5, color="white" if face == dg.BLUE else dg.INK)
        for w in range(words + 1):
            x = left + w * d["word"] * cell
            c.line(x, y - 0.3, x, y + 2.9, color=dg.INK, lw=1.3)
        for w in range(words):
            x = left + (w + 0.5) * d["word"] * cell
            c.text(x, y + 3.4, r["instr"], size=7.5, family="DejaVu Sans Mono")
        c.text(left + nbytes * cell + 0.6, y + 0.7, f"{words} x {r['instr']}:", size=8, ha="left",
               family="DejaVu Sans Mono")
        c.text(left + nbytes * cell + 0.6, y + 1.7, r["what"], size=7.5, ha="left")
        c.text(left + nbytes * cell + 0.6, y + 2.6, f"{per} products per load", size=7.5, ha="left",
               weight="bold")
        c.code(left, y + 4.5, r["fold"], size=6.5, color=dg.GREY)
        y += 6.2
    return c
