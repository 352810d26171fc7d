#!/usr/bin/env python3
"""Every PNG the docs show, from one registry (REGISTRY below): the concept diagrams,
drawn from the code's own parameters, and the data plots, drawn from the committed CSVs.

    scripts/diagrams.py              draw every PNG into its home (chapters/figures/, results/GPU/)
    scripts/diagrams.py --check      write nothing; exit 1 naming every missing or stale PNG,
                                     and every PNG the docs link that the registry does not list
    scripts/diagrams.py --list       print the registry: each PNG, what draws it, what it read

Options: --root DIR (the repository, default this script's parent folder), --out DIR
(put the PNGs under DIR, each at its path in the repository, instead of in their homes),
--only NAME,... (some of the PNGs, by path or file name). scripts/plot.py and scripts/plot_access.py draw the data plots from other
CSVs through the same registry.

Each PNG is drawn by a module of scripts/figures/ from explicit parameters: the picture's
sizes, the code's named constants (code_constant) and the code lines it draws, each
required verbatim in its file (require_code), whose expressions the small evaluator below
runs on the picture's sizes; a tree is checked to sum every element exactly once before
anything is drawn. The few hardware facts kept here (32 banks of 4 bytes) are checked
against any source that defines them too. A data plot's parameters are its CSVs' rows.

Staleness, one rule for every PNG. Each carries two text chunks: "Fingerprint", a
SHA-256 over this script, its drawing module, its parameters (the values read from the
sources) and the bytes of every CSV it was drawn from, and "Renderer", the matplotlib,
FreeType and Pillow versions that drew it. --check recomputes each fingerprint (no
drawing needed) and, where this machine's renderer is the one recorded, also redraws
the PNG and requires the same bytes. PNGs carry no date or software stamp, so the same
inputs give the same file.

Exit codes: 0 done (with --check: every PNG current and registered); 1 --check found a
missing, stale or unregistered PNG; 2 bad usage, a source or result file the script
cannot read a parameter from, or no matplotlib for drawing (one sentence on stderr;
nothing is written).
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import re
import struct
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import output_files  # noqa: E402  output checks and whole-file writes, shared by the scripts
import result_files  # noqa: E402  the result-file reader
import update_docs  # noqa: E402  the registry reader

PROGRAM = "diagrams.py"

# The block the index and bank figures run stages 02-05 on: two warps, the smallest block
# that shows what a warp does (a picture size, not a code constant).
MAP_BLOCK = 64

# Hardware facts with no home in a stage file: shared memory has 32 banks, each 4 bytes
# wide, on every NVIDIA GPU since Maxwell. Any source that names them must agree.
SHARED_BANKS = 32
BANK_BYTES = 4
HARDWARE_NAMES = {"banks": ("kBanks", "kNumBanks", "kSharedBanks"), "bank_bytes": ("kBankBytes", "kBankWidth")}

# Okabe-Ito colours: told apart by readers with every common colour-vision deficiency.
BLUE = "#0072B2"
SKY = "#56B4E9"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
YELLOW = "#F0E442"
INK = "#222222"
GREY = "#8C8C8C"
PALE = "#EDEDED"
BLOCK_COLOURS = [BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILLION]
DPI = 100


class DiagramError(Exception):
    """A source or result file the script cannot read a parameter from: one sentence."""


# ---- reading the code ----------------------------------------------------------------


def read_source(root: Path, rel: str) -> str:
    path = root / rel
    if not path.is_file():
        raise DiagramError(f"{rel} does not exist, so its parameters cannot be read.")
    for reads in READS:
        reads.append(rel)
    return path.read_text(encoding="utf-8")


def stage_source(root: Path, key: str) -> tuple[str, str, str]:
    """(path, text, title) of a registered stage, found through the one stage list."""
    try:
        stages = update_docs.read_registry(root)
    except update_docs.DocsError as e:
        raise DiagramError(str(e)) from None
    for s in stages:
        if s.key == key:
            return s.source, read_source(root, s.source), s.title
    raise DiagramError(f"the registry (reduction/stages.cpp) has no stage {key}.")


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a // b,  # C integer division (every operand here is unsigned)
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
}
_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


def c_expression(expr: str, where: str) -> ast.Expression:
    """An integer C expression (names, literals, + - * / % & | << >>, comparisons, && ||)
    as a Python syntax tree, refused if it holds anything else."""
    text = expr.strip()
    text = re.sub(r"\b(\d+)[uU][lL]*\b", r"\1", text)
    text = re.sub(r"\b0x([0-9a-fA-F]+)[uU][lL]*\b", r"0x\1", text)
    text = re.sub(r"static_cast<(?:std::size_t|size_t|unsigned|int|long long|unsigned long long)>", "", text)
    text = text.replace("blockDim.x", "blockDim_x").replace("gridDim.x", "gridDim_x")
    text = text.replace("&&", " and ").replace("||", " or ")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise DiagramError(f"{where}: {expr.strip()!r} is not an integer expression this script can evaluate.") \
            from None
    for node in ast.walk(tree):
        allowed = (ast.Expression, ast.BinOp, ast.Compare, ast.BoolOp, ast.Name, ast.Constant, ast.Load, ast.And,
                   ast.Or, ast.UnaryOp, ast.USub)
        if not isinstance(node, allowed) and type(node) not in _BINARY and type(node) not in _COMPARE:
            raise DiagramError(
                f"{where}: {expr.strip()!r} holds {type(node).__name__}, which this script cannot evaluate.")
        if isinstance(node, ast.Constant) and not isinstance(node.value, int):
            raise DiagramError(f"{where}: {expr.strip()!r} holds a non-integer literal.")
    return tree


def c_eval(tree: ast.Expression, env: dict[str, int], where: str) -> int:
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise DiagramError(f"{where}: the expression uses {node.id!r}, which this script has no value for.")
            return env[node.id]
        if isinstance(node, ast.UnaryOp):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.BoolOp):
            values = [ev(v) for v in node.values]
            return int(all(values)) if isinstance(node.op, ast.And) else int(any(values))
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = ev(right_node)
                if not _COMPARE[type(op)](left, right):
                    return 0
                left = right
            return 1
        raise DiagramError(f"{where}: cannot evaluate {ast.dump(node)}.")

    return int(ev(tree))


def constant(text: str, name: str, where: str, env: dict[str, int] | None = None) -> int:
    """The value of `constexpr TYPE name = EXPR;` in a source."""
    found = re.findall(rf"constexpr\s+[\w:]+(?:\s+[\w:]+)?\s+{name}\s*=\s*([^;]+);", strip_comments(text))
    if not found:
        raise DiagramError(f"{where} defines no constant {name}.")
    values = {c_eval(c_expression(e, where), env or {}, where) for e in found}
    if len(values) != 1:
        raise DiagramError(f"{where} defines {name} more than once, with different values {sorted(values)}.")
    return values.pop()


@dataclass
class Loop:
    """A counted loop as the code writes it, `for (unsigned VAR = FIRST; TEST; VAR OP STEP)`."""
    var: str
    first: str
    test: str
    op: str
    step: str

    @property
    def text(self) -> str:
        return f"for (unsigned {self.var} = {self.first}; {self.test}; {self.var} {self.op} {self.step})"

    def values(self, env: dict[str, int], where: str, limit: int = 64) -> list[int]:
        out = []
        v = c_eval(c_expression(self.first, where), env, where)
        while c_eval(c_expression(self.test, where), {**env, self.var: v}, where):
            out.append(v)
            step = c_eval(c_expression(self.step, where), env, where)
            v = {"*=": v * step, "/=": v // step, "+=": v + step, "-=": v - step}[self.op]
            if len(out) > limit:
                raise DiagramError(f"{where}: the loop {self.text!r} does not end for these sizes.")
        return out


def require_code(root: Path, rel: str, *pieces: str) -> list[str]:
    """The lines of `rel` (comments left out) that hold each piece of code verbatim, the
    pieces in the order given; a DiagramError naming the first one missing (the figure
    draws code that is no longer there)."""
    text, pos, lines = strip_comments(read_source(root, rel)), 0, []
    for piece in pieces:
        at = text.find(piece, pos)
        if at < 0:
            raise DiagramError(f"{rel} no longer holds `{piece}`" + (" after the previous step" if pos else "")
                               + ", which a figure draws: update the figure's parameters in scripts/diagrams.py.")
        pos = at + len(piece)
        end = text.find("\n", at)
        lines.append(text[text.rfind("\n", 0, at) + 1 : end if end >= 0 else None].strip())
    return lines


def check_sum_tree(levels: list[list[tuple[int, int, int]]], size: int, where: str) -> None:
    """Every level's (thread, write, read) additions, replayed on sets of element
    numbers: element 0 must end with each element exactly once, and no addition of a
    level may read what another addition of that level writes."""
    held = [{i} for i in range(size)]
    for level in levels:
        writes = [w for _, w, _ in level]
        if len(set(writes)) != len(writes):
            raise DiagramError(f"{where}: two threads write one element in the same level.")
        if set(writes) & {r for _, _, r in level}:
            raise DiagramError(f"{where}: a level reads an element that the same level writes.")
        for _, w, r in level:
            if not (0 <= w < size and 0 <= r < size):
                raise DiagramError(f"{where}: an addition reaches outside the {size} elements.")
            if held[w] & held[r]:
                raise DiagramError(f"{where}: an element would be added twice.")
            held[w] = held[w] | held[r]
            held[r] = set()
    if held[0] != set(range(size)):
        raise DiagramError(f"{where}: the additions do not leave the sum of all {size} elements in element 0.")


# ---- the parameters of each figure -----------------------------------------------------


# Code that several figures draw, written out: each line is required verbatim in its file
# (require_code), and its expressions are run on the pictures' sizes by the evaluator above.
DOUBLING = Loop("stride", "1", "stride < blockDim.x", "*=", "2")
BLOCK_TREES = {  # stages 02-05: (loop, index or None, the if's test, element written, element added in)
    "02": (DOUBLING, None, "tid % (2 * stride) == 0", "tid", "tid + stride"),
    "03": (DOUBLING, None, "(tid & (2 * stride - 1)) == 0", "tid", "tid + stride"),
    "04": (DOUBLING, "2 * stride * tid", "index < blockDim.x", "index", "index + stride"),
    "05": (Loop("stride", "blockDim.x / 2", "stride > 0", "/=", "2"), None, "tid < stride", "tid", "tid + stride"),
}
SHUFFLE = Loop("offset", "kWarpSize / 2", "offset > 0", "/=", "2")  # stage 08's warp_sum
SHUFFLE_CALL = "__shfl_down_sync(kFullMask, v, offset)"




def block_tree(root: Path, key: str) -> dict:
    """A shared-memory block tree (stages 02-05, BLOCK_TREES), run for a block of MAP_BLOCK threads."""
    path, _, title = stage_source(root, key)
    loop, index, test, write, read = BLOCK_TREES[key]
    guard = f"if ({test}) partial[{write}] += partial[{read}];"
    require_code(root, path, loop.text, *([f"const unsigned index = {index};"] if index else []), guard)
    env0 = {"blockDim_x": MAP_BLOCK}
    cond, write_at, read_at = (c_expression(e, path) for e in (test, write, read))
    levels = []
    for stride in loop.values(env0, path):
        level = []
        for tid in range(MAP_BLOCK):
            env = {**env0, "tid": tid, "stride": stride}
            if index:
                env["index"] = c_eval(c_expression(index, path), env, path)
            if c_eval(cond, env, path):
                level.append((tid, c_eval(write_at, env, path), c_eval(read_at, env, path)))
        levels.append(level)
    check_sum_tree(levels, MAP_BLOCK, path)
    code = (f"index = {index}; " if index else "") + f"if ({test})"
    return {"key": key, "title": title, "source": path, "loop": loop.text, "code": code, "index_expr": index,
            "levels": levels}


def bank_passes(words: list[int], banks: int) -> int:
    """The passes one warp access takes through the banks: the most distinct words that
    fall in one bank (lanes reading the same word share it); 0 for no lane at work."""
    per_bank: dict[int, set[int]] = {}
    for w in words:
        per_bank.setdefault(w % banks, set()).add(w)
    return max((len(ws) for ws in per_bank.values()), default=0)




def warp_size(root: Path) -> tuple[int, str]:
    path, text, _ = stage_source(root, "08")
    return constant(text, "kWarpSize", path), path


def hardware_facts(root: Path) -> dict:
    """The bank facts, checked against every source file that names them."""
    facts = {"banks": SHARED_BANKS, "bank_bytes": BANK_BYTES}
    for folder in ("reduction", "single_pass", "access_patterns", "common", "experiments", "lab"):
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(p for p in base.rglob("*") if p.suffix in (".cu", ".cuh", ".hpp", ".h", ".cpp")):
            text = path.read_text(encoding="utf-8")
            rel = path.relative_to(root).as_posix()
            for fact, names in HARDWARE_NAMES.items():
                for name in names:
                    if re.search(rf"constexpr\s+[\w:]+(?:\s+[\w:]+)?\s+{name}\s*=", text):
                        value = constant(text, name, rel)
                        if value != facts[fact]:
                            raise DiagramError(f"{rel} sets {name} = {value}, but the figures draw {facts[fact]}.")
    return facts


















# ---- drawing -------------------------------------------------------------------------


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise DiagramError("matplotlib is not installed (apt-get install python3-matplotlib, or pip install "
                           "matplotlib), so no figure can be drawn.") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def renderer_version() -> str | None:
    """What turns a figure into pixels here: the same inputs give the same bytes only
    with the same versions."""
    try:
        import matplotlib
        import PIL
        from matplotlib import ft2font
    except ImportError:
        return None
    return f"matplotlib {matplotlib.__version__}, FreeType {ft2font.__freetype_version__}, Pillow {PIL.__version__}"


STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "svg.hashsalt": "diagrams",
    "path.simplify": False,
}


class Canvas:
    """A figure with one axes in plain units: x to the right, y downwards, 1 unit = `scale` inches."""

    def __init__(self, plt, width: float, height: float, scale: float):
        self.fig = plt.figure(figsize=(width * scale, height * scale), dpi=DPI)
        self.ax = self.fig.add_axes([0, 0, 1, 1])
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(height, 0)
        self.ax.axis("off")
        self.scale = scale

    def box(self, x, y, w, h, face="white", edge=INK, lw=0.8, text=None, size=7, color=INK, weight="normal",
            dashed=False):
        from matplotlib.patches import Rectangle

        self.ax.add_patch(Rectangle((x, y), w, h, facecolor=face, edgecolor=edge, linewidth=lw,
                                    linestyle="--" if dashed else "-"))
        if text is not None:
            self.text(x + w / 2, y + h / 2, text, size=size, color=color, weight=weight)

    def text(self, x, y, s, size=8, color=INK, ha="center", va="center", weight="normal", style="normal",
             family=None, bg=None):
        box = dict(facecolor=bg, edgecolor="none", pad=1.5) if bg else None
        self.ax.text(x, y, s, fontsize=size, color=color, ha=ha, va=va, fontweight=weight, fontstyle=style,
                     family=family or "DejaVu Sans", bbox=box)

    def code(self, x, y, s, size=8, color=INK, ha="left"):
        self.text(x, y, s, size=size, color=color, ha=ha, family="DejaVu Sans Mono")

    def line(self, x0, y0, x1, y1, color=INK, lw=0.8, dashed=False):
        self.ax.plot([x0, x1], [y0, y1], color=color, linewidth=lw, linestyle="--" if dashed else "-",
                     solid_capstyle="butt")

    def arrow(self, x0, y0, x1, y1, color=INK, lw=0.9, head=6, rad=0.0):
        self.ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                         arrowprops=dict(arrowstyle=f"-|>,head_length={head / 12:.2f},head_width={head / 24:.2f}",
                                         color=color, linewidth=lw, shrinkA=0, shrinkB=0,
                                         connectionstyle=f"arc3,rad={rad}"))

    COLOURS, METHOD = 128, "MEDIANCUT"

    def save(self, plt, fingerprint: str, renderer: str) -> bytes:
        """PNG bytes: the drawing reduced to a palette of at most COLOURS colours (flat
        diagrams lose nothing visible, and the file shrinks to a fraction), with the
        two text chunks and nothing else (no date, no software stamp)."""
        import numpy
        from PIL import Image, PngImagePlugin

        self.fig.canvas.draw()
        pixels = numpy.asarray(self.fig.canvas.buffer_rgba())
        plt.close(self.fig)
        quantize = getattr(Image, "Quantize", Image)
        dither = getattr(Image, "Dither", Image)
        image = Image.fromarray(pixels, "RGBA").convert("RGB").quantize(
            colors=self.COLOURS, method=getattr(quantize, self.METHOD), dither=dither.NONE)
        info = PngImagePlugin.PngInfo()
        info.add_text("Fingerprint", fingerprint)
        info.add_text("Renderer", renderer)
        buf = io.BytesIO()
        image.save(buf, format="PNG", pnginfo=info, optimize=True)
        return buf.getvalue()


















# ---- the registry: every PNG the docs show -----------------------------------------------
#
# One line per PNG: where it lives in the repository and the module of scripts/figures/
# that draws it (see the comment above FIGURE_DIR). --check fails, naming the
# file, when a PNG is missing or stale, when a Markdown file of the docs (DOC_GLOBS) links
# a PNG this list does not name, when chapters/ or results/ hold a PNG it does not name,
# and when a module of scripts/figures/ is not named here. --list prints every PNG with
# the files its parameters came from.
#
# The one staleness rule: a PNG's fingerprint is a SHA-256 over this script, its module's
# text, its parameters (the values read from the code) and the bytes of every result CSV
# its parameters were read from (result_files.load, however called; see collect()). A
# concept figure and a data plot differ only in what they read.

REGISTRY = [
    ("chapters/figures/atomics_vs_second_launch.png", "figures/atomics_vs_second_launch.py"),
    ("chapters/figures/bank_conflicts.png", "figures/bank_conflicts.py"),
    ("chapters/figures/barrier_tree.png", "figures/barrier_tree.py"),
    ("chapters/figures/batched_tail.png", "figures/batched_tail.py"),
    ("chapters/figures/block_sum_two_level.png", "figures/block_sum_two_level.py"),
    ("chapters/figures/book_vs_ours.png", "figures/book_vs_ours.py"),
    ("chapters/figures/cluster_dsmem.png", "figures/cluster_dsmem.py"),
    ("chapters/figures/coalescing.png", "figures/coalescing.py"),
    ("chapters/figures/decoupled_lookback.png", "figures/decoupled_lookback.py"),
    ("chapters/figures/dot_packing.png", "figures/dot_packing.py"),
    ("chapters/figures/float4_split.png", "figures/float4_split.py"),
    ("chapters/figures/gpu_hierarchy.png", "figures/gpu_hierarchy.py"),
    ("chapters/figures/grid_stride_vs_chunk.png", "figures/grid_stride_vs_chunk.py"),
    ("chapters/figures/histogram_lane_banks.png", "figures/histogram_lane_banks.py"),
    ("chapters/figures/histogram_privatised.png", "figures/histogram_privatised.py"),
    ("chapters/figures/index_maps.png", "figures/index_maps.py"),
    ("chapters/figures/last_block_ticket.png", "figures/last_block_ticket.py"),
    ("chapters/figures/loads_in_flight.png", "figures/loads_in_flight.py"),
    ("chapters/figures/multi_gpu_combine.png", "figures/multi_gpu_combine.py"),
    ("chapters/figures/multi_gpu_efficiency.png", "figures/multi_gpu_efficiency.py"),
    ("chapters/figures/neumaier_example.png", "figures/neumaier_example.py"),
    ("chapters/figures/occupancy_sweep.png", "figures/occupancy_sweep.py"),
    ("chapters/figures/peer_store_exchange.png", "figures/peer_store_exchange.py"),
    ("chapters/figures/prefetch_ahead.png", "figures/prefetch_ahead.py"),
    ("chapters/figures/profiler_replay.png", "figures/profiler_replay.py"),
    ("chapters/figures/reduction_tree.png", "figures/reduction_tree.py"),
    ("chapters/figures/release_acquire.png", "figures/release_acquire.py"),
    ("chapters/figures/reproducible_layout.png", "figures/reproducible_layout.py"),
    ("chapters/figures/roofline.png", "figures/roofline.py"),
    ("chapters/figures/scan_bandwidth.png", "figures/scan_bandwidth.py"),
    ("chapters/figures/stream_order_finish.png", "figures/stream_order_finish.py"),
    ("chapters/figures/tagged_slot.png", "figures/tagged_slot.py"),
    ("chapters/figures/tile_partition.png", "figures/tile_partition.py"),
    ("chapters/figures/warp_sectors.png", "figures/warp_sectors.py"),
    ("chapters/figures/warp_shuffle_down.png", "figures/warp_shuffle_down.py"),
    ("results/h200/ladder.png", "figures/ladder.py"),  # data plots: scripts/plot.py draws these too
    ("results/h100/ladder.png", "figures/ladder.py"),
    ("results/h200/sweep.png", "figures/sweep.py"),
    ("results/h100/sweep.png", "figures/sweep.py"),
    ("results/h200/mixed_precision.png", "figures/mixed_precision.py"),
    ("results/h200/access_stride.png", "figures/access_stride.py"),  # and scripts/plot_access.py these
    ("results/h200/access_banks.png", "figures/access_banks.py"),
]
# The Markdown files of the docs, whose PNG links must all be in the registry (the lab's
# notes and READMEs wherever its folder is).
DOC_GLOBS = ("README.md", "REFERENCE.md", "chapters/*.md", "*/README.md", "*/notes/*.md")
PNG_HOMES = ("chapters", "results")  # every PNG under these must be in the registry

# ---- figures in scripts/figures/ ---------------------------------------------------------
#
# Each module scripts/figures/NAME.py draws one figure from explicit parameters:
#
#   FIGURE = "name.png"             the file's name (its folder is the registry's)
#   ABOUT = "one line"              what it shows (--list)
#   def inputs(dg, root, results)   the parameters as a dict; every one that mirrors the
#                                   code is read through dg.code_constant (a named
#                                   constant) or written out and required verbatim with
#                                   dg.require_code, so a renamed or changed constant or
#                                   line fails with one sentence instead of drawing a stale
#                                   picture (dg.require_line, a regular expression, is the
#                                   older form); results is results/h200, or for a data
#                                   plot (a PNG under results/) its own folder
#   def draw(dg, plt, d)            returns a dg.Canvas (or a matplotlib figure via
#                                   dg.FigureCanvas) drawn from d alone
#
# A data plot's module also has from_csv(dg, path), the parameters from one CSV (and the
# files beside it), which scripts/plot.py and scripts/plot_access.py call.

FIGURE_DIR = Path(__file__).resolve().parent / "figures"
PLOT_DPI = 110  # the data plots' resolution


def code_constant(root: Path, rel: str, name: str, env: dict[str, int] | None = None) -> int:
    """The value of `constexpr TYPE name = EXPR;` in the file `rel` of the repository."""
    return constant(read_source(root, rel), name, rel, env)


def require_line(root: Path, rel: str, pattern: str) -> str:
    """The first line of `rel` matching the regular expression `pattern`, stripped; a
    DiagramError when none does (the figure shows code that is no longer there)."""
    for line in read_source(root, rel).splitlines():
        if re.search(pattern, line):
            return line.strip()
    raise DiagramError(f"{rel} has no line matching {pattern!r}, which a figure draws: update the figure's module.")


def count_label(n: str) -> str:
    """A count as 2^k when it is a power of two (n as a CSV holds it)."""
    try:
        v = int(float(n))
    except ValueError:
        return n
    return f"2^{v.bit_length() - 1}" if v > 0 and v & (v - 1) == 0 else str(v)


class FigureCanvas:
    """A plain matplotlib figure (plots with axes) that saves like a Canvas."""

    COLOURS, METHOD = 256, "MAXCOVERAGE"  # plots: many hues on thin lines, each kept within a few levels

    def __init__(self, fig):
        self.fig = fig

    save = Canvas.save


@dataclass
class Figure:
    path: str  # the PNG, relative to the repository
    inputs: object  # callable(root, results) -> dict
    draw: object  # callable(plt, dict) -> Canvas
    about: str
    drawer: str  # the registry's second column
    code: str  # the drawing module's text

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def results(self, root: Path) -> Path:
        """Where its CSVs are: a data plot's own folder, else results/h200."""
        return root / self.path.rsplit("/", 1)[0] if self.path.startswith("results/") else root / "results" / "h200"


def load_module(drawer: str):
    """scripts/DRAWER (figures/NAME.py) as a module, checked for what a figure module has."""
    import importlib.util

    path = FIGURE_DIR.parent / drawer
    if not path.is_file():
        raise SystemExit(f"{PROGRAM}: the registry names {drawer}, which does not exist.")
    spec = importlib.util.spec_from_file_location(f"figures_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attr in ("FIGURE", "ABOUT", "inputs", "draw"):
        if not hasattr(module, attr):
            raise SystemExit(f"{PROGRAM}: {path.name} has no {attr}; see the comment above FIGURE_DIR.")
    module.__source_text__ = path.read_text(encoding="utf-8")
    return module


MODULES: dict[str, object] = {}


def registered() -> list[Figure]:
    this = sys.modules[__name__]
    out = []
    for path, drawer in REGISTRY:
        if drawer not in MODULES:
            MODULES[drawer] = load_module(drawer)
        m = MODULES[drawer]
        folders = getattr(m, "FOLDERS", ("chapters/figures",))  # a data plot names its result folders
        if path != f"{path.rsplit('/', 1)[0]}/{m.FIGURE}" or path.rsplit("/", 1)[0] not in folders:
            raise SystemExit(f"{PROGRAM}: the registry puts {drawer} at {path}, but it draws {m.FIGURE} in "
                             f"{', '.join(folders)}.")
        out.append(Figure(path, lambda root, res, m=m: m.inputs(this, root, res),
                          lambda plt, d, m=m: m.draw(this, plt, d), m.ABOUT, drawer, m.__source_text__))
    return out


# ---- fingerprints and PNG text chunks ---------------------------------------------------


def script_text() -> str:
    return Path(__file__).resolve().read_text(encoding="utf-8")


def collect(root: Path, read) -> dict:
    """read(), the parameters of a figure, with the SHA-256 of every CSV it read through
    result_files.load (directly or through read_table) under "csv_sha256", and the sources
    read through read_source (and the stage list, results/registry.csv) under "code_files"."""
    csvs, load, code = {}, result_files.load, []

    def recording_load(path):
        table = load(path)
        shown = display(Path(path), root)
        if shown == "results/registry.csv":  # the stage list is code: the titles and sources used are parameters
            code.append(shown)
        else:
            csvs[shown] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        return table

    result_files.load = recording_load
    READS.append(code)
    try:
        d = read()
    except result_files.MissingFile as e:
        raise DiagramError(f"{display(e.path, root)} does not exist; a figure is drawn from it.") from None
    except result_files.ResultFileError as e:  # its file named from the repository, as the others are
        raise DiagramError(str(e).replace(f"{root}/", "").replace(f"{root.resolve()}/", "")) from None
    finally:
        result_files.load = load
        READS.pop()
    return {**d, "csv_sha256": csvs, "code_files": sorted(set(code))}


READS: list[list[str]] = []  # the files read_source reads, while collect() runs


def figure_inputs(f: Figure, root: Path) -> dict:
    return collect(root, lambda: f.inputs(root, f.results(root)))


def fingerprint(f: Figure, inputs: dict) -> str:
    h = hashlib.sha256()
    h.update(script_text().encode("utf-8"))
    h.update(b"\0" + f.name.encode("utf-8") + b"\0" + f.code.encode("utf-8") + b"\0")
    h.update(json.dumps(inputs, sort_keys=True).encode("utf-8"))
    return h.hexdigest()


def png_text(data: bytes) -> dict[str, str]:
    """The tEXt chunks of a PNG (keyword -> text); {} when the data is not a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return {}
    out, pos = {}, 8
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"tEXt" and b"\0" in body:
            key, _, value = body.partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt" and b"\0" in body:
            key, _, rest = body.partition(b"\0")
            flag = rest[0]
            rest = rest[2:]
            _, _, rest = rest.partition(b"\0")
            _, _, value = rest.partition(b"\0")
            out[key.decode("latin-1")] = (zlib.decompress(value) if flag else value).decode("utf-8")
        pos += 12 + length
    return out


def render(figure: Figure, inputs: dict, plt) -> bytes:
    import matplotlib

    with matplotlib.rc_context(STYLE):
        canvas = figure.draw(plt, inputs)
        return canvas.save(plt, fingerprint(figure, inputs), renderer_version() or "")


def select(only: str | None) -> list[Figure]:
    """The figures --only names: a PNG's path in the registry, or its file name (every PNG of that name)."""
    if only is None:
        return FIGURES
    names = [n.strip() for n in only.split(",") if n.strip()]
    if not names:
        raise DiagramError(f"--only '{only}' names no figure (allowed: {', '.join(f.path for f in FIGURES)}).")
    chosen = []
    for n in names:
        found = [f for f in FIGURES if n in (f.path, f.name)]
        if not found:
            raise DiagramError(f"--only {n} is not a figure of this script (allowed: "
                               f"{', '.join(f.path for f in FIGURES)}).")
        chosen += [f for f in found if f not in chosen]
    return chosen


LINK_RES = (re.compile(r"\]\(\s*<?([^)\s>]+?\.png)(?:[#?][^)\s>]*)?>?(?:\s+\"[^\"]*\")?\s*\)"),
            re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?\.png)>?", re.M), re.compile(r"src=[\"']([^\"']+?\.png)[\"']"))


def registry_problems(root: Path) -> list[str]:
    """One line per PNG the registry misses: one a Markdown file of the docs links, one
    under PNG_HOMES, and a module of scripts/figures/ it does not name."""
    listed = {f.path for f in FIGURES}
    problems = []
    for md in sorted({p for pattern in DOC_GLOBS for p in root.glob(pattern) if p.is_file()}):
        text = re.sub(r"```.*?```", "", md.read_text(encoding="utf-8"), flags=re.S)
        for target in sorted({t for r in LINK_RES for t in r.findall(text)}):
            if not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) and display(md.parent / target, root) not in listed:
                problems.append(f"{display(md, root)} links {target}, which the registry in scripts/diagrams.py "
                                "does not list: add it there")
    for folder in PNG_HOMES:
        for png in sorted((root / folder).rglob("*.png")) if (root / folder).is_dir() else []:
            if display(png, root) not in listed:
                problems.append(f"{display(png, root)} is not in the registry in scripts/diagrams.py: add it there "
                                "or delete it")
    drawers = {d for _, d in REGISTRY}
    for module in sorted(FIGURE_DIR.glob("*.py")):
        if not module.name.startswith("_") and f"figures/{module.name}" not in drawers:
            problems.append(f"scripts/figures/{module.name} is not in the registry in scripts/diagrams.py")
    return problems


def check(root: Path, figures: list[Figure], out: Path | None = None, redraw: bool = True) -> list[str]:
    """One line per problem: a missing figure, a stale fingerprint, or (same renderer
    here as recorded, and `redraw`) bytes that differ from a fresh drawing. Each figure
    is looked for in its home, under `root` or under `out` when given."""
    problems = []
    renderer = renderer_version() if redraw else None
    plt = pyplot() if renderer else None
    for f in figures:
        path = (out or root) / f.path
        shown = display(path, root)
        if not path.is_file():
            problems.append(f"{shown} is missing: run scripts/diagrams.py --only {f.path}")
            continue
        data = path.read_bytes()
        chunks = png_text(data)
        try:
            inputs = figure_inputs(f, root)
        except DiagramError as e:
            problems.append(f"{shown} cannot be drawn now: {e}")
            continue
        if chunks.get("Fingerprint") != fingerprint(f, inputs):
            problems.append(f"{shown} is stale (its code, its CSVs or its drawing changed since it was drawn): "
                            f"run scripts/diagrams.py --only {f.path}")
            continue
        if plt is not None and chunks.get("Renderer") == renderer and render(f, inputs, plt) != data:
            problems.append(f"{shown} differs from what scripts/diagrams.py draws now with {renderer}: "
                            f"run scripts/diagrams.py --only {f.path}")
    return problems


def display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def write_drawn(figure: Figure, inputs: dict, path: Path, root: Path) -> None:
    """The figure drawn from `inputs` into `path`, written whole; says what it did."""
    data = render(figure, inputs, pyplot())
    if path.is_file() and path.read_bytes() == data:
        print(f"unchanged {display(path, root)}")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    output_files.write(str(path), data)
    print(f"wrote {display(path, root)} ({len(data) // 1024} KB)")


def plot_csvs(program: str, jobs: list[tuple[str, str]], out: str) -> int:
    """scripts/plot.py's and plot_access.py's drawing: each (CSV, PNG name) drawn into the
    folder `out` by the registered data plot of that name, from that CSV (and the files
    beside it), every CSV read before anything is written. Exit code 0, 1 (a figure not
    written) or 2 (a CSV that cannot be drawn from, one sentence on stderr)."""
    root = Path(__file__).resolve().parent.parent
    try:
        drawn = []
        for csv, name in jobs:
            figure = next(f for f in FIGURES if f.name == name)
            module = MODULES[figure.drawer]
            inputs = collect(root, lambda: module.from_csv(sys.modules[__name__], Path(csv)))
            drawn.append((figure, inputs, Path(out) / name))
        for _, _, target in drawn:
            problem = os.path.isdir(out) and output_files.problem(str(target), "the figure")
            if problem:
                raise DiagramError(problem)
    except DiagramError as e:
        print(f"{program}: {e}", file=sys.stderr)
        return 2
    return write_all(program, drawn, root, out)


def write_all(program: str, drawn: list, root: Path, where) -> int:
    """Every (figure, inputs, path) of `drawn` written (inputs all read before); exit code 0,
    or 1 with one sentence on stderr when a file cannot be written in `where`."""
    try:
        for figure, inputs, target in drawn:
            write_drawn(figure, inputs, target, root)
    except OSError as e:
        print(f"{program}: cannot write the figures in '{where}': {e.strerror or e}.", file=sys.stderr)
        return 1
    return 0


Parser = output_files.Parser  # one sentence and exit code 2, as every program of the project


def main(argv: list[str] | None = None) -> int:
    p = Parser(prog=PROGRAM, description="Draws every PNG the docs show (the registry): the concept diagrams from "
               "the code's own parameters, the data plots from the committed CSVs.")
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="the repository")
    p.add_argument("--out", help="put the PNGs under this folder, each at its path in the repository (default: "
                   "the repository, each in its home as the registry says)")
    p.add_argument("--only", help="comma-separated figures, by path or file name (default: all)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a figure is missing or stale, or "
                   "a PNG is not in the registry")
    p.add_argument("--list", action="store_true", help="print the registry (PNG, drawing, the files read) and exit")
    args = p.parse_args(argv)
    root = args.root.resolve()
    out = Path(args.out).resolve() if args.out else None
    try:
        if args.out == "":
            raise DiagramError(output_files.directory_problem("", "--out"))
        if not (root / "reduction" / "stages.cpp").is_file():
            raise DiagramError(f"--root {args.root} is not the repository (it has no reduction/stages.cpp).")
        figures = select(args.only)
        if args.list:
            for f in figures:
                d = figure_inputs(f, root)
                print(f"{f.path}\t{f.drawer}\t{f.about}\t{' '.join(d['code_files'] + list(d['csv_sha256']))}")
            return 0
        if args.check:
            if renderer_version() is None:
                print(f"{PROGRAM}: note: matplotlib is not installed, so only the fingerprints are compared.",
                      file=sys.stderr)
            whole = args.only is None and out is None  # the registry's own checks need every figure in its home
            problems = (registry_problems(root) if whole else []) + check(root, figures, out)
            for line in problems:
                print(line)
            if problems:
                print(f"{len(problems)} problems in {len(figures)} figures and their registry.")
                return 1
            print(f"All {len(figures)} figures are current.")
            return 0
        # Where the figures go, checked before anything is drawn: folders (made if missing)
        # that files can be written in, and no figure's name taken by something that is not
        # a writable regular file.
        targets = [(f, (out or root) / f.path) for f in figures]
        for folder in ([out] if out else []) + sorted({t.parent for _, t in targets}):
            problem = output_files.directory_problem(str(folder), "--out" if out else "the figures folder")
            if problem:
                raise DiagramError(problem)
        for _, target in targets:
            problem = target.parent.is_dir() and output_files.problem(str(target), "the figure")
            if problem:
                raise DiagramError(problem)
        pyplot()
        drawn = [(f, figure_inputs(f, root), t) for f, t in targets]  # every input read before anything is written
    except DiagramError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return 2
    return write_all(PROGRAM, drawn, root, out or root)


FIGURES = registered()

if __name__ == "__main__":
    sys.exit(main())
