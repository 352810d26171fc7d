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

The figures drawn here (the rest are modules of scripts/figures/) and their numbers' sources:

  reduction_tree.png        stage 01's pairing (dst[i] = src[..] + src[..]), run on 16 elements
  index_maps.png            stages 02-05: each kernel's loop header and its `if`, run on a
                            block of 64 threads (two warps of kWarpSize, stage 08): which thread
                            adds which element at each level, the warps with a thread at work
                            and the bank passes of one warp's access
  bank_conflicts.png        stage 04's index expression at its first level over a warp
                            (kWarpSize, stage 08), into 32 four-byte banks, then padded by one
                            word per 32
  warp_shuffle_down.png     stage 08's warp_sum loop (its offsets) over kWarpSize lanes
  grid_stride_vs_chunk.png  stage 06's grid-stride loop against single_pass.cuh's contiguous
                            chunk per block (kDefaultUnroll loads per thread), 4 blocks of 4
  loads_in_flight.png       kNumLoad (stage 07), kUnroll and float4 (stage 12); SM count and
                            peak bandwidth from results/h200/reduce_2p24.csv; threads per SM at
                            full occupancy from results/h200/occupancy_03_sweep.csv
  last_block_ticket.png     the steps of the last-block ticket (store, __threadfence(),
                            atomicAdd on the ticket, the last ticket adds), checked in order
                            against the registered last-block stage, else single_pass.cuh
  cluster_dsmem.png         the cluster size (kMaxCluster) and the cluster's steps, from the
                            registered one-cluster stage where it defines them, else from
                            single_pass.cuh

Each kernel expression is evaluated here for a small block (64 threads; 16 elements for
stage 01's tree) and the result is checked (every element summed exactly once) before
anything is drawn, so a figure cannot show a tree the code does not build. A constant that a stage file defines
is read from that file; the few hardware facts kept here (32 banks of 4 bytes) are
checked against any source that defines them too.

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

# Picture sizes: small enough to read, large enough to show the pattern. Not code constants.
TREE_ELEMENTS = 16
MAP_BLOCK = 64  # two warps: the smallest block that shows what a warp does
DEMO_BLOCKS = 4
DEMO_THREADS = 4
TICKET_BLOCKS = 6

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


# The figures' code, written out: each line is required verbatim in its file, and its
# expressions are run here on the picture's sizes (the evaluator above).
PAIR = ("2 * i", "2 * i + 1")  # stage 01: dst[i] = src[A] + src[B]
DOUBLING = Loop("stride", "1", "stride < blockDim.x", "*=", "2")
BLOCK_TREES = {  # stages 02-05: (loop, index or None, the if's test, element written, element added in)
    "02": (DOUBLING, None, "tid % (2 * stride) == 0", "tid", "tid + stride"),
    "03": (DOUBLING, None, "(tid & (2 * stride - 1)) == 0", "tid", "tid + stride"),
    "04": (DOUBLING, "2 * stride * tid", "index < blockDim.x", "index", "index + stride"),
    "05": (Loop("stride", "blockDim.x / 2", "stride > 0", "/=", "2"), None, "tid < stride", "tid", "tid + stride"),
}
SHUFFLE = Loop("offset", "kWarpSize / 2", "offset > 0", "/=", "2")  # stage 08's warp_sum
SHUFFLE_CALL = "__shfl_down_sync(kFullMask, v, offset)"


def tree_inputs(root: Path) -> dict:
    path, text, title = stage_source(root, "01")
    code = f"dst[i] = src[{PAIR[0]}] + src[{PAIR[1]}]"
    require_code(root, path, code + ";")
    left, right = (c_expression(e, path) for e in PAIR)
    levels = []
    m_size = TREE_ELEMENTS
    while m_size > 1:
        level = []
        for i in range(m_size // 2):
            level.append((i, c_eval(left, {"i": i}, path), c_eval(right, {"i": i}, path)))
        levels.append(level)
        m_size = (m_size + 1) // 2
    # Stage 01 writes each level to a new buffer; replay it as a tree over the leaves.
    held = [{i} for i in range(TREE_ELEMENTS)]
    for level in levels:
        nxt = [held[a] | held[b] for _, a, b in level]
        if any(held[a] & held[b] for _, a, b in level):
            raise DiagramError(f"{path}: a level of add_neighbour_pairs adds an element to itself.")
        held = nxt
    if held != [set(range(TREE_ELEMENTS))]:
        raise DiagramError(f"{path}: add_neighbour_pairs does not sum {TREE_ELEMENTS} elements into one.")
    return {"source": path, "title": title, "code": code, "elements": TREE_ELEMENTS, "levels": levels}


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


def index_map_inputs(root: Path) -> dict:
    warp, warp_path = warp_size(root)
    banks = hardware_facts(root)["banks"]
    if MAP_BLOCK % warp or MAP_BLOCK // warp < 2:
        raise DiagramError(f"a block of {MAP_BLOCK} threads does not hold two whole warps of {warp}.")
    stages = [block_tree(root, k) for k in ("02", "03", "04", "05")]
    for s in stages:
        s["warps"] = []  # per level: (warps with a lane at work, most bank passes of one warp access)
        for level in s["levels"]:
            at_work, worst = 0, 0
            for w0 in range(0, MAP_BLOCK, warp):
                mine = [(w, r) for tid, w, r in level if w0 <= tid < w0 + warp]
                if mine:
                    at_work += 1
                    worst = max(worst, bank_passes([w for w, _ in mine], banks),
                                bank_passes([r for _, r in mine], banks))
            s["warps"].append((at_work, worst))
    return {"block": MAP_BLOCK, "warp": warp, "warp_source": warp_path, "banks": banks, "stages": stages}


def warp_size(root: Path) -> tuple[int, str]:
    path, text, _ = stage_source(root, "08")
    return constant(text, "kWarpSize", path), path


def hardware_facts(root: Path) -> dict:
    """The bank facts, checked against every source file that names them."""
    facts = {"banks": SHARED_BANKS, "bank_bytes": BANK_BYTES}
    for folder in ("reduction", "single_pass", "access_patterns", "common", "experiments"):
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
                            raise DiagramError(f"{rel} sets {name} = {value}, but this script draws {facts[fact]}.")
    return facts


def bank_inputs(root: Path) -> dict:
    warp, warp_path = warp_size(root)
    stage = block_tree(root, "04")
    if not stage["index_expr"]:
        raise DiagramError(f"{stage['source']}: stage 04's kernel has no `const unsigned index = ...;` line.")
    expr = c_expression(stage["index_expr"], stage["source"])
    facts = hardware_facts(root)
    banks = facts["banks"]
    words = [c_eval(expr, {"tid": t, "stride": 1, "blockDim_x": 1024}, stage["source"]) for t in range(warp)]
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


def shuffle_inputs(root: Path) -> dict:
    warp, path = warp_size(root)
    require_code(root, path, f"{SHUFFLE.text} v += {SHUFFLE_CALL};")
    offsets = SHUFFLE.values({"kWarpSize": warp}, path)
    held = [{i} for i in range(warp)]
    for off in offsets:
        held = [held[i] | held[i + off] if i + off < warp else held[i] for i in range(warp)]
    if held[0] != set(range(warp)):
        raise DiagramError(f"{path}: the offsets {offsets} do not leave the warp's sum in lane 0.")
    return {"source": path, "warp": warp, "offsets": offsets, "call": SHUFFLE_CALL, "loop": SHUFFLE.text}


GRID_STRIDE = ("const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;",
               "i += stride) sum += in[i];")  # stage 06's grid_stride_sum
CHUNK = ("const std::size_t begin = blockIdx.x * chunk;", "load_pack(body + i + u * kBlock)")  # single_pass.cuh


def chunk_inputs(root: Path) -> dict:
    path06, _, _ = stage_source(root, "06")
    sp = "single_pass/single_pass.cuh"
    code = require_code(root, path06, *GRID_STRIDE) + require_code(root, sp, *CHUNK)
    return {"grid_stride_source": path06, "chunk_source": sp, "blocks": DEMO_BLOCKS, "threads": DEMO_THREADS,
            "loads": code_constant(root, sp, "kDefaultUnroll"), "code": code}


def flight_inputs(root: Path, results: Path) -> dict:
    path07, text07, _ = stage_source(root, "07")
    path12, text12, _ = stage_source(root, "12")
    num_load = constant(text07, "kNumLoad", path07)
    unroll = constant(text12, "kUnroll", path12)
    if "float4" not in text12:
        raise DiagramError(f"{path12} no longer loads float4 vectors.")
    warp, _ = warp_size(root)
    try:
        reduce = result_files.load(results / "reduce_2p24.csv")
        sweep = result_files.load(results / "occupancy_03_sweep.csv")
    except result_files.MissingFile as e:
        raise DiagramError(f"{e.path} does not exist; the figure takes the SM count, peak and occupancy from it.") \
            from None
    except result_files.ResultFileError as e:
        raise DiagramError(str(e)) from None
    meta = reduce.meta
    for key in ("peak_gbs", "sm_count", "device"):
        if key not in meta:
            raise DiagramError(f"{reduce.path} has no '# {key}:' metadata line.")
    full = [int(float(r["warps_per_sm"])) for r in sweep.rows if float(r["occupancy_pct"]) == 100.0]
    if not full:
        raise DiagramError(f"{sweep.path} has no row at 100 % occupancy to read the warps per SM from.")
    return {"stage07": path07, "stage12": path12, "num_load": num_load, "unroll": unroll, "float4_bytes": 16,
            "float_bytes": 4, "warp": warp, "threads_per_sm": max(full) * warp, "sm_count": int(meta["sm_count"]),
            "peak_gbs": float(meta["peak_gbs"]), "device": meta["device"],
            "files": [f"results/h200/{reduce.path.name}", f"results/h200/{sweep.path.name}"]}


# The steps the ticket and cluster figures draw, each with the code it stands for in
# stage 13 (the last block) and stage 15 (one cluster), required there in this order.
TICKET_STEPS = [
    ("store the partial", "partials[blockIdx.x] = block_total;"),
    ("__threadfence()", "__threadfence();"),
    ("take a ticket", "atomicAdd(ticket, 1u)"),
    ("compare with the last ticket", "== gridDim.x - 1"),
    ("read every partial", "for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock)"),
    ("reset the ticket", "*ticket = 0;"),
]
CLUSTER_STEPS = [
    ("a shared array of one slot per block", "__shared__ float partials[kMaxCluster];"),
    ("the push into block 0", "cluster.map_shared_rank(partials, 0)[rank] = v;"),
    ("the cluster barrier", "cluster.sync();"),
    ("block 0 adds", "if (rank == 0"),
]


def ticket_inputs(root: Path) -> dict:
    path, _, _ = stage_source(root, "13")
    require_code(root, path, *(code for _, code in TICKET_STEPS))
    return {"source": path, "blocks": TICKET_BLOCKS, "steps": [name for name, _ in TICKET_STEPS]}


def cluster_inputs(root: Path) -> dict:
    path, _, _ = stage_source(root, "15")
    size = code_constant(root, path, "kMaxCluster")
    require_code(root, path, *(code for _, code in CLUSTER_STEPS))
    return {"source": path, "constant": "kMaxCluster", "cluster": size}


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


def draw_reduction_tree(plt, d: dict) -> Canvas:
    n = d["elements"]
    pitch, left = 1.3, 5.5
    levels = d["levels"]
    row = 2.2
    width = left + n * pitch + 6.5
    height = 3.4 + row * (len(levels) + 1) + 1.6
    c = Canvas(plt, width, height, 0.36)
    c.text(0.4, 0.8, f"Stage 01: a tree of pairwise additions, one kernel launch per level ({n} elements)",
           size=11, ha="left", weight="bold")
    c.code(0.4, 1.9, d["code"] + ";   " + d["source"], size=8, color=GREY)
    # Leaves at the bottom, the sum at the top.
    y_of = [3.4 + row * (len(levels) - k) for k in range(len(levels) + 1)]
    xs = [left + i * pitch + pitch / 2 for i in range(n)]
    spans = [(i, i) for i in range(n)]
    bw, bh = 1.05, 0.9
    for i, x in enumerate(xs):
        c.box(x - bw / 2, y_of[0], bw, bh, face=PALE, text=f"x{i}", size=7)
    c.text(0.4, y_of[0] + bh / 2, "input", ha="left", size=8)
    for k, level in enumerate(levels, start=1):
        new_xs, new_spans = [], []
        y = y_of[k]
        for i, a, b in level:
            x = (xs[a] + xs[b]) / 2
            span = (spans[a][0], spans[b][1])
            colour = BLUE if k == len(levels) else SKY
            for src in (a, b):
                c.line(xs[src], y_of[k - 1], x, y + bh, color=GREY, lw=0.8)
            label = f"{span[0]}–{span[1]}"
            c.box(x - bw / 2, y, bw, bh, face=colour, edge=INK, text=label, size=6.5,
                  color="white" if colour == BLUE else INK)
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


def draw_index_maps(plt, d: dict) -> Canvas:
    block, warp = d["block"], d["warp"]
    cell = 1.0
    left, right = 6.5, 14.0
    row, strip = 2.75, 0.5
    n_levels = max(len(s["levels"]) for s in d["stages"])
    # Stages whose loops build the same tree (02 and 03) share one panel.
    panels: list[list[dict]] = []
    for s in d["stages"]:
        if panels and panels[-1][0]["levels"] == s["levels"]:
            panels[-1].append(s)
        else:
            panels.append([s])
    head = 2.4
    panel_h = [head + (len(group) - 1) * 1.2 + 2.5 + row * (n_levels + 1) for group in panels]
    width, height = left + block * cell + right + 1.0, 3.0 + sum(panel_h) + 3.4
    c = Canvas(plt, width, height, 0.14)
    c.text(1.0, 1.3, f"Which thread adds which element: stages 02-05, one block of {block} threads "
           f"({block // warp} warps of {warp})", size=11, ha="left", weight="bold")
    x0 = 1.0 + left
    xa, xb = x0 + block * cell + 1.5, x0 + block * cell + 8.0
    oy = 3.0
    for group, h in zip(panels, panel_h):
        for j, g in enumerate(group):
            c.text(1.0, oy + 0.8 + 1.2 * j, f"{g['key']} · {g['title']}", size=10, ha="left", weight="bold")
            c.code(x0 + 18.0, oy + 0.8 + 1.2 * j, g["code"], size=8, color=INK)
        s = group[0]
        top = oy + head + 1.2 * (len(group) - 1)
        bottom = oy + h - 0.9
        oy += h
        # The warp boundary: threads 0-31 are warp 0; words 0-31 and 32-63 fall in banks 0-31 again.
        for w0 in range(0, block, warp):
            c.text(x0 + (w0 + warp / 2) * cell, top, f"warp {w0 // warp}: threads {w0}-{w0 + warp - 1}", size=7.5,
                   color=GREY)
            if w0:
                c.line(x0 + w0 * cell, top + 0.5, x0 + w0 * cell, bottom, color=VERMILLION, lw=1.2)
        c.text(xa + 2.5, top - 0.3, "warps with\na thread at work", size=7, color=GREY)
        c.text(xb + 2.5, top - 0.3, "bank passes\nper access", size=7, color=GREY)
        y = top + 0.9
        for i in range(block):
            c.box(x0 + i * cell, y, cell, cell, face=PALE, edge=GREY, lw=0.3)
        c.text(1.0, y + 0.5, "partial[]", size=7.5, ha="left")
        for k, (level, (at_work, worst)) in enumerate(zip(s["levels"], s["warps"]), start=1):
            y_prev, y = y, top + 0.9 + row * k
            for tid, w, r in level:
                xw = x0 + w * cell + cell / 2
                xr = x0 + r * cell + cell / 2
                c.line(xw, y_prev + cell, xw, y, color=GREY, lw=0.5)
                c.line(xr, y_prev + cell, xw, y, color=BLUE, lw=0.7)
            written = {w for _, w, _ in level}
            for i in range(block):
                c.box(x0 + i * cell, y, cell, cell, face=BLUE if i in written else "white",
                      edge=INK if i in written else PALE, lw=0.3)
            active = {tid for tid, _, _ in level}
            for t in range(block):
                c.box(x0 + t * cell + 0.1, y + cell + 0.15, cell - 0.2, strip, face=ORANGE if t in active else PALE,
                      edge="none", lw=0)
            c.text(1.0, y + 0.5, f"level {k}", size=7.5, ha="left")
            c.text(1.0, y + cell + 0.45, "threads", size=6.5, ha="left", color=GREY)
            c.text(xa + 2.5, y + 0.75, f"{at_work} of {block // warp}", size=8)
            c.text(xb + 2.5, y + 0.75, str(worst), size=8, color=VERMILLION if worst > 1 else INK,
                   weight="bold" if worst > 1 else "normal")
    c.text(1.0, height - 2.4, "Blue cell: the element a thread writes at that level; blue line: the element it adds "
           "in. Orange, below: the threads whose if is true (thread t under column t).", size=7.5, ha="left")
    c.text(1.0, height - 1.1, f"Red line: the warp boundary; words w and w + {d['banks']} fall in the same one of the "
           f"{d['banks']} shared-memory banks.", size=7.5, ha="left")
    return c


def draw_bank_conflicts(plt, d: dict) -> Canvas:
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
    c = Canvas(plt, width, height, 0.27)
    c.text(0.4, 0.8, f"Shared-memory banks: {banks} banks of {d['bank_bytes']} bytes, address a in bank a mod {banks}",
           size=11, ha="left", weight="bold")
    y0 = 2.2
    for (title, words, passes), h in zip(panels, panel_h):
        degree = max(passes) + 1
        used = len({w % banks for w in words})
        verdict = (f"{used} banks in use, {degree} passes: a {degree}-way bank conflict" if degree > 1 else
                   f"{used} banks in use, 1 pass: no conflict")
        c.text(0.4, y0 + 0.5, title, size=9.5, ha="left", weight="bold")
        c.text(0.4, y0 + 1.35, verdict, size=8.5, ha="left", color=VERMILLION if degree > 1 else GREEN,
               weight="bold")
        ly = y0 + 2.0
        c.text(0.4, ly + 0.45, "lane", size=7.5, ha="left")
        for t in range(warp):
            colour = BLUE if t < warp // 2 else ORANGE
            c.box(left + t * cell, ly, cell * 0.9, 0.9, face=colour, edge=INK, lw=0.4, text=str(t), size=6,
                  color="white" if colour == BLUE else INK)
        by = ly + 1.0 + 3.2
        c.text(0.4, by + 0.35, "bank", size=7.5, ha="left")
        for b in range(banks):
            c.text(left + b * cell + cell * 0.45, by + 0.35, str(b), size=6, color=GREY)
        gy = by + 0.9
        for k in range(degree):
            c.text(0.4, gy + k * cell + 0.45, f"pass {k + 1}", size=7.5, ha="left")
            for b in range(banks):
                c.box(left + b * cell, gy + k * cell, cell * 0.9, cell * 0.9, face="white", edge=PALE, lw=0.5)
        for t, (w, k) in enumerate(zip(words, passes)):
            colour = BLUE if t < warp // 2 else ORANGE
            b = w % banks
            c.line(left + t * cell + cell * 0.45, ly + 0.9, left + b * cell + cell * 0.45, by, color=colour, lw=0.7)
            c.box(left + b * cell, gy + k * cell, cell * 0.9, cell * 0.9, face=colour, edge=INK, lw=0.4,
                  text=str(w), size=5.5, color="white" if colour == BLUE else INK)
        y0 += h
    c.text(0.4, height - 0.9, "A cell under a bank holds the address a lane reads. A bank delivers one address per "
           "pass, so lanes that need different addresses of one bank wait for each other.", size=7.5, ha="left")
    return c


def draw_warp_shuffle(plt, d: dict) -> Canvas:
    warp, offsets = d["warp"], d["offsets"]
    cell, left = 1.0, 4.6
    row = 2.3
    width = left + warp * cell + 1.0
    height = 3.6 + row * len(offsets) + 1.0 + 1.4
    c = Canvas(plt, width, height, 0.27)
    c.text(0.4, 0.8, f"Stage 08: a warp of {warp} lanes adds its values with "
           f"{len(offsets)} shuffles, offsets {', '.join(map(str, offsets))}", size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, f"v += {d['call']};   {d['source']}", size=8, color=GREY)
    y = 3.0
    c.text(0.4, y + 0.45, "lane", size=7.5, ha="left")
    counts = [1] * warp
    for t in range(warp):
        c.box(left + t * cell, y, cell * 0.9, 0.9, face=PALE, edge=INK, lw=0.4, text=str(t), size=6)
    for k, off in enumerate(offsets):
        y_prev, y = y, 3.0 + row * (k + 1)
        c.text(0.4, y + 0.45, f"offset {off}", size=7.5, ha="left", weight="bold")
        new = [counts[i] + counts[i + off] if i + off < warp else counts[i] for i in range(warp)]
        for i in range(off):
            c.arrow(left + (i + off) * cell + 0.45, y_prev + 0.95, left + i * cell + 0.45, y - 0.05, color=BLUE,
                    lw=0.6, head=4)
        for i in range(warp):
            useful = i < off
            face = (VERMILLION if i == 0 and k == len(offsets) - 1 else BLUE) if useful else "white"
            c.box(left + i * cell, y, cell * 0.9, 0.9, face=face, edge=INK if useful else PALE, lw=0.4,
                  text=str(new[i]) if useful else None, size=6, color="white")
        counts = new
    c.text(0.4, height - 1.4, f"A number is how many of the {warp} values the lane holds. Lane i adds the value of "
           "lane i + offset; only lanes below the offset (blue) hold values that are still needed.", size=7.5,
           ha="left")
    c.text(0.4, height - 0.6, f"After the last shuffle lane 0 (vermillion) holds the sum of all {warp}: no shared "
           "memory and no barrier.", size=7.5, ha="left")
    return c


def draw_grid_stride_vs_chunk(plt, d: dict) -> Canvas:
    blocks, threads, loads = d["blocks"], d["threads"], d["loads"]
    n = blocks * threads * loads
    cell, left = 0.62, 0.4
    width = left + n * cell + 0.6
    height = 14.6
    c = Canvas(plt, width, height, 0.25)
    c.text(left, 0.8, f"Who reads what: {blocks} blocks of {threads} threads, {loads} loads per thread, "
           f"{n} elements", size=11, ha="left", weight="bold")
    total = blocks * threads

    def strip(y, owner, title, note, source):
        c.text(left, y, title, size=9.5, ha="left", weight="bold")
        c.code(left, y + 0.85, source, size=7, color=GREY)
        for i in range(n):
            b, t = owner(i)
            colour = BLOCK_COLOURS[b]
            c.box(left + i * cell, y + 1.5, cell * 0.92, 1.0, face=colour, edge=INK, lw=0.3, text=str(t), size=5.5,
                  color="white" if colour in (BLUE, GREEN) else INK)
            if (b, t) == (0, 1):
                x = left + i * cell + cell * 0.46
                c.ax.plot([x], [y + 2.85], marker="^", markersize=5, color=INK)
        c.text(left, y + 3.6, note, size=7.5, ha="left")

    strip(2.1, lambda i: ((i % total) // threads, i % threads),
          "Grid-stride loop (stages 06-12): element i goes to thread i mod (grid x block)",
          f"One sweep of the grid covers {total} neighbouring elements, every block side by side; "
          f"thread 1 of block 0 (triangles) reads elements {', '.join(str(1 + k * total) for k in range(loads))}.",
          f"for (i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x)   {d['grid_stride_source']}")
    chunk = n // blocks
    strip(7.4, lambda i: (i // chunk, i % threads),
          "One contiguous chunk per block (the single-pass kernels): block b reads elements b x chunk onwards",
          f"Each block streams its own {chunk} elements, its threads side by side; thread 1 of block 0 reads "
          f"elements {', '.join(str(1 + k * threads) for k in range(loads))}.",
          f"i = blockIdx.x * chunk + threadIdx.x; loads i + u * kBlock for u < kUnroll   {d['chunk_source']}")
    legend_y = 13.6
    for b in range(blocks):
        c.box(left + b * 6.0, legend_y - 0.35, 0.7, 0.7, face=BLOCK_COLOURS[b], edge=INK, lw=0.3)
        c.text(left + b * 6.0 + 1.0, legend_y, f"block {b}", size=8, ha="left")
    c.text(left + blocks * 6.0, legend_y, "the number in a cell: the thread of its block that reads it", size=8,
           ha="left")
    return c


def draw_loads_in_flight(plt, d: dict) -> Canvas:
    from matplotlib.patches import Rectangle

    k = d["num_load"]
    c = Canvas(plt, 40.0, 17.0, 0.26)
    c.text(0.4, 0.8, "Little's law: bytes in flight = bandwidth x latency", size=11, ha="left", weight="bold")
    need_mb = d["peak_gbs"] * 1e9 * 1e-6 / 1e6
    c.text(0.4, 1.9, f"To stream at the {d['device']}'s {d['peak_gbs']:.0f} GB/s, the GPU must keep "
           f"{need_mb:.1f} MB of loads in flight for every microsecond of DRAM latency.", size=8.5, ha="left")
    # One thread's timeline, time in units of one DRAM latency.
    ax = c.fig.add_axes([0.17, 0.2, 0.45, 0.58])
    span, issue, add, bar = 4.6, 0.02, 0.02, 0.7
    lanes = [("stage 06\n1 load in flight", 1, 0.0), (f"stage 07\n{k} loads in flight", k, 1.7)]
    for label, per, base in lanes:
        t, count = 0.0, 0
        while t + (per - 1) * issue + 1.0 + add * per <= span:
            for j in range(per):
                ax.add_patch(Rectangle((t + j * issue, base + j * 0.85), 1.0, bar, facecolor=SKY if j % 2 else BLUE,
                                       edgecolor=INK, linewidth=0.4))
            arrive = t + (per - 1) * issue + 1.0
            ax.add_patch(Rectangle((arrive, base), add * per, (per - 1) * 0.85 + bar, facecolor=ORANGE,
                                   edgecolor=INK, linewidth=0.4))
            count += per
            t = arrive + add * per
        middle = base + ((per - 1) * 0.85 + bar) / 2
        ax.text(-0.08, middle, label, ha="right", va="center", fontsize=8)
        ax.text(span + 0.06, middle, f"{count} loads\ndone", ha="left", va="center", fontsize=8, fontweight="bold")
    ax.set_xlim(0, span)
    ax.set_ylim(1.7 + (k - 1) * 0.85 + bar + 0.3, -0.4)
    ax.set_yticks([])
    ax.set_xlabel("time, in DRAM latencies (one thread)", fontsize=8)
    ax.tick_params(labelsize=7)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title("blue: a load on its way from DRAM; orange: the additions once the data is in", fontsize=8,
                 loc="left")
    # Bytes in flight across the GPU at full occupancy.
    bx = c.fig.add_axes([0.75, 0.2, 0.23, 0.58])
    threads = d["sm_count"] * d["threads_per_sm"]
    bars = [("06", d["float_bytes"], SKY), ("07", k * d["float_bytes"], BLUE),
            ("12", d["unroll"] * d["float4_bytes"], GREEN)]
    values = [threads * b / 1e6 for _, b, _ in bars]
    bx.bar(range(len(bars)), values, color=[col for _, _, col in bars], edgecolor=INK, linewidth=0.5)
    for i, ((key, b, _), v) in enumerate(zip(bars, values)):
        bx.text(i, v, f"{v:.1f} MB\n{b} B/thread", ha="center", va="bottom", fontsize=7)
    bx.set_xticks(range(len(bars)))
    bx.set_xticklabels([f"stage {key}" for key, _, _ in bars], fontsize=8)
    bx.set_ylim(0, max(values) * 1.3)
    bx.set_ylabel("MB in flight, whole GPU", fontsize=8)
    bx.tick_params(labelsize=7)
    for side in ("top", "right"):
        bx.spines[side].set_visible(False)
    bx.set_title(f"{d['sm_count']} SMs x {d['threads_per_sm']} threads,\nevery thread's loads outstanding",
                 fontsize=8)
    c.text(0.4, 16.3, f"Stage 07 keeps {k} loads of 4 bytes per thread in flight, stage 12 {d['unroll']} of 16 bytes "
           "(float4); full occupancy is read from the occupancy sweep. Bandwidth is at most bytes in flight / latency.",
           size=7.5, ha="left")
    return c


def draw_last_block_ticket(plt, d: dict) -> Canvas:
    blocks = d["blocks"]
    # Made-up durations for the picture: the blocks finish their chunks in an order of their own.
    work = [6.2, 9.4, 3.8, 10.8, 8.0, 5.0, 7.1, 4.4][:blocks]
    store, fence, atomic = 0.5, 1.3, 1.0
    took = sorted(range(blocks), key=lambda b: work[b])
    ticket = {b: i for i, b in enumerate(took)}
    last = took[-1]
    left, row = 4.5, 1.6
    read, write = 6.5, 4.8
    width = 40.0
    top = 3.4
    height = top + row * (blocks + 1) + 4.6
    c = Canvas(plt, width, height, 0.26)
    c.text(0.4, 0.8, f"A single pass over {blocks} blocks: store the partial, fence, take a ticket; the last ticket "
           "adds the partials", size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, f"the steps, in this order, are read from {d['source']}", size=7.5, color=GREY)
    events = []
    for b in range(blocks):
        y = top + row * b
        c.text(0.4, y + 0.5, f"block {b}", size=8, ha="left", weight="bold")
        x = left
        c.box(x, y, work[b], 1.0, face=PALE, edge=INK, lw=0.4, text="sum its chunk", size=6.5)
        x += work[b]
        c.box(x, y, store, 1.0, face=SKY, edge=INK, lw=0.4)
        x += store
        c.box(x, y, fence, 1.0, face=ORANGE, edge=INK, lw=0.4, text="fence", size=6.5)
        x += fence
        c.box(x, y, atomic, 1.0, face=BLUE, edge=INK, lw=0.4, text=str(ticket[b]), size=7, color="white")
        x += atomic
        events.append((x, b))
        if b == last:
            c.box(x, y, read, 1.0, face=GREEN, edge=INK, lw=0.4, text=f"read partials 0-{blocks - 1}, add",
                  size=6.5, color="white")
            c.box(x + read, y, write, 1.0, face=VERMILLION, edge=INK, lw=0.4, text="write sum, ticket = 0",
                  size=6.5, color="white")
            end = x + read + write
        else:
            c.text(x + 0.4, y + 0.5, f"drew {ticket[b]}, not {blocks - 1}: done", size=7, ha="left", color=GREY)
    # The ticket in memory: the value each atomicAdd leaves behind.
    y = top + row * blocks + 0.3
    c.text(0.4, y + 0.5, "ticket", size=8, ha="left", weight="bold")
    x, value = left, 0
    for t, _ in sorted(events) + [(end, None)]:
        c.box(x, y, t - x, 1.0, face="white", edge=GREY, lw=0.5, text=str(value), size=7)
        x, value = t, (value + 1 if _ is not None else 0)
    c.box(x, y, 2.0, 1.0, face="white", edge=GREY, lw=0.5, text="0", size=7)
    ly = height - 3.5
    items = [(PALE, "sum the block's chunk"), (SKY, "store partials[block]"), (ORANGE, "__threadfence()"),
             (BLUE, "atomicAdd(&ticket, 1): the old value"), (GREEN, "only the last: read every partial"),
             (VERMILLION, "write the sum, reset the ticket")]
    for i, (colour, label) in enumerate(items):
        x = 0.4 + (i % 3) * 13.2
        yy = ly + (i // 3) * 1.0
        c.box(x, yy - 0.35, 0.7, 0.7, face=colour, edge=INK, lw=0.4)
        c.text(x + 1.0, yy, label, size=7.5, ha="left")
    c.text(0.4, height - 0.9, "Store, then fence, then ticket: a block's partial is visible before its ticket is. "
           "The last block's reads must in turn not be served from before it saw the last ticket (acquire).",
           size=7.5, ha="left")
    return c


def draw_cluster_dsmem(plt, d: dict) -> Canvas:
    size = d["cluster"]
    pitch, left = 2.3, 1.0
    width = left + size * pitch + 1.0
    height = 18.0
    c = Canvas(plt, width, height, 0.27)
    c.text(0.4, 0.8, f"One thread-block cluster of {size} blocks adds through distributed shared memory (sm_90)",
           size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, f"cluster.map_shared_rank(partials, 0)[rank] = v;  cluster.sync();   {d['source']}", size=7.5,
           color=GREY)
    c.box(left - 0.5, 2.6, size * pitch + 0.5, 3.0, face="none", edge=GREY, lw=0.8, dashed=True)
    c.text(left - 0.3, 3.05, f"the cluster: {size} blocks launched together on the SMs of one GPC; each sums its "
           "own chunk into v", size=7, ha="left", color=GREY)
    for r in range(size):
        x = left + r * pitch
        c.box(x, 3.7, pitch - 0.4, 1.5, face=BLUE if r == 0 else SKY, edge=INK, lw=0.5,
              text=f"block {r}\nv{r}", size=6.5, color="white" if r == 0 else INK)
    # Block 0's shared memory: one slot per block of the cluster.
    sy = 8.4
    for r in range(size):
        x = left + r * pitch
        c.arrow(x + (pitch - 0.4) / 2, 5.2, x + (pitch - 0.4) / 2, sy - 0.05, color=ORANGE if r else BLUE, lw=0.9,
                head=5)
    c.text(left + size * pitch / 2, 6.3, "each block writes v into slot [rank] of block 0's shared memory, over "
           "the SM-to-SM network (DSMEM): no global memory, no atomic", size=7.5, color=INK, bg="white")
    c.box(left - 0.5, sy - 0.5, size * pitch + 0.5, 2.6, face="none", edge=BLUE, lw=1.0)
    c.text(left - 0.3, sy + 1.55, f"block 0's shared memory: partials[{size}]", size=7.5, ha="left", color=BLUE,
           weight="bold", bg="white")
    for r in range(size):
        x = left + r * pitch
        c.box(x + 0.2, sy, pitch - 0.8, 1.0, face=PALE, edge=INK, lw=0.5, text=f"v{r}", size=6.5)
    by = 11.4
    c.line(left - 0.5, by, left + size * pitch, by, color=VERMILLION, lw=1.6, dashed=True)
    c.text(left - 0.3, by + 0.6, "cluster.sync(): every push has landed before any block goes on", size=8,
           color=VERMILLION, ha="left", weight="bold", bg="white")
    ry = 14.0
    rx = left + size * pitch / 2
    for r in range(size):
        x = left + r * pitch + (pitch - 0.4) / 2
        c.line(x, sy + 2.1, rx, ry, color=GREY, lw=0.5)
    c.box(rx - 5.0, ry, 10.0, 1.4, face=BLUE, edge=INK, lw=0.6, text=f"block 0 adds the {size} values in rank order",
          size=7.5, color="white")
    c.arrow(rx, ry + 1.4, rx, ry + 2.7, color=INK, lw=1.0, head=6)
    c.text(rx + 0.4, ry + 2.3, "*out", size=8, ha="left", family="DejaVu Sans Mono")
    return c


BUILTIN = {  # the figures drawn by this script: draw_ function -> (its parameters, what it shows)
    "draw_reduction_tree": (lambda root, res: tree_inputs(root), "the reduction tree of stage 01"),
    "draw_index_maps": (lambda root, res: index_map_inputs(root), "which thread adds which element in stages 02-05"),
    "draw_bank_conflicts": (lambda root, res: bank_inputs(root),
                            "stage 04's shared-memory access, with and without padding"),
    "draw_warp_shuffle": (lambda root, res: shuffle_inputs(root), "stage 08's shuffle-down rounds"),
    "draw_grid_stride_vs_chunk": (lambda root, res: chunk_inputs(root),
                                  "a grid-stride loop against one chunk per block"),
    "draw_loads_in_flight": (flight_inputs, "Little's law, 1 against 4 loads in flight"),
    "draw_last_block_ticket": (lambda root, res: ticket_inputs(root), "the last-block ticket"),
    "draw_cluster_dsmem": (lambda root, res: cluster_inputs(root), "a cluster adding through distributed shared memory"),
}


# ---- the registry: every PNG the docs show -----------------------------------------------
#
# One line per PNG: where it lives in the repository and what draws it, a draw_ function
# of this script (BUILTIN) or a module scripts/figures/NAME.py. --check fails, naming the
# file, when a PNG is missing or stale, when a Markdown file of the docs (DOC_GLOBS) links
# a PNG this list does not name, when chapters/ or results/ hold a PNG it does not name,
# and when a module of scripts/figures/ is not named here. --list prints every PNG with
# the files its parameters came from.
#
# The one staleness rule: a PNG's fingerprint is a SHA-256 over this script, its module's
# text, its parameters (the values read from the code) and the bytes of every CSV its
# parameters were read from (result_files.load, however called; see collect()). A concept
# figure and a data plot differ only in what they read.

REGISTRY = [
    ("chapters/figures/reduction_tree.png", "draw_reduction_tree"),
    ("chapters/figures/index_maps.png", "draw_index_maps"),
    ("chapters/figures/bank_conflicts.png", "draw_bank_conflicts"),
    ("chapters/figures/warp_shuffle_down.png", "draw_warp_shuffle"),
    ("chapters/figures/grid_stride_vs_chunk.png", "draw_grid_stride_vs_chunk"),
    ("chapters/figures/loads_in_flight.png", "draw_loads_in_flight"),
    ("chapters/figures/last_block_ticket.png", "draw_last_block_ticket"),
    ("chapters/figures/cluster_dsmem.png", "draw_cluster_dsmem"),
    ("chapters/figures/atomics_vs_second_launch.png", "figures/atomics_vs_second_launch.py"),
    ("chapters/figures/barrier_tree.png", "figures/barrier_tree.py"),
    ("chapters/figures/batched_tail.png", "figures/batched_tail.py"),
    ("chapters/figures/block_sum_two_level.png", "figures/block_sum_two_level.py"),
    ("chapters/figures/book_vs_ours.png", "figures/book_vs_ours.py"),
    ("chapters/figures/coalescing.png", "figures/coalescing.py"),
    ("chapters/figures/decoupled_lookback.png", "figures/decoupled_lookback.py"),
    ("chapters/figures/dot_packing.png", "figures/dot_packing.py"),
    ("chapters/figures/float4_split.png", "figures/float4_split.py"),
    ("chapters/figures/gpu_hierarchy.png", "figures/gpu_hierarchy.py"),
    ("chapters/figures/histogram_lane_banks.png", "figures/histogram_lane_banks.py"),
    ("chapters/figures/histogram_privatised.png", "figures/histogram_privatised.py"),
    ("chapters/figures/multi_gpu_combine.png", "figures/multi_gpu_combine.py"),
    ("chapters/figures/multi_gpu_efficiency.png", "figures/multi_gpu_efficiency.py"),
    ("chapters/figures/neumaier_example.png", "figures/neumaier_example.py"),
    ("chapters/figures/occupancy_sweep.png", "figures/occupancy_sweep.py"),
    ("chapters/figures/peer_store_exchange.png", "figures/peer_store_exchange.py"),
    ("chapters/figures/profiler_replay.png", "figures/profiler_replay.py"),
    ("chapters/figures/release_acquire.png", "figures/release_acquire.py"),
    ("chapters/figures/reproducible_layout.png", "figures/reproducible_layout.py"),
    ("chapters/figures/roofline.png", "figures/roofline.py"),
    ("chapters/figures/stream_order_finish.png", "figures/stream_order_finish.py"),
    ("chapters/figures/tagged_slot.png", "figures/tagged_slot.py"),
    ("chapters/figures/tile_partition.png", "figures/tile_partition.py"),
    ("chapters/figures/warp_sectors.png", "figures/warp_sectors.py"),
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
#                                   code is read or checked here through dg.code_constant /
#                                   dg.require_line, so a renamed or changed constant fails
#                                   with one sentence instead of drawing a stale picture;
#                                   results is results/h200, or for a data plot (a PNG
#                                   under results/) its own folder
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
    code: str = ""  # the drawing module's text ("" for a draw_ function of this script)

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
        if drawer in BUILTIN:
            out.append(Figure(path, BUILTIN[drawer][0], globals()[drawer], BUILTIN[drawer][1], drawer))
            continue
        m = MODULES.setdefault(drawer, MODULES.get(drawer) or load_module(drawer))
        if m.FIGURE != path.rsplit("/", 1)[-1] or (hasattr(m, "FOLDERS") and path.rsplit("/", 1)[0] not in m.FOLDERS):
            raise SystemExit(f"{PROGRAM}: the registry puts {drawer} at {path}, but it draws {m.FIGURE} in "
                             f"{', '.join(getattr(m, 'FOLDERS', ['chapters/figures']))}.")
        out.append(Figure(path, lambda root, res, m=m: m.inputs(this, root, res),
                          lambda plt, d, m=m: m.draw(this, plt, d), m.ABOUT, drawer, m.__source_text__))
    return out


# ---- fingerprints and PNG text chunks ---------------------------------------------------


def script_text() -> str:
    return Path(__file__).resolve().read_text(encoding="utf-8")


def collect(root: Path, read) -> dict:
    """read(), the parameters of a figure, with the SHA-256 of every CSV it read through
    result_files.load (directly, through read_table or through the stage registry) under
    "csv_sha256", and the sources read through read_source under "code_files"."""
    csvs, load, code = {}, result_files.load, []

    def recording_load(path):
        table = load(path)
        csvs[display(Path(path), root)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        return table

    result_files.load = recording_load
    READS.append(code)
    try:
        d = read()
    except result_files.MissingFile as e:
        raise DiagramError(f"{display(e.path, root)} does not exist; a figure is drawn from it.") from None
    except result_files.ResultFileError as e:
        raise DiagramError(str(e)) from None
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
        inputs = figure_inputs(f, root)
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
        for figure, inputs, target in drawn:
            write_drawn(figure, inputs, target, root)
    except DiagramError as e:
        print(f"{program}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{program}: cannot write a figure in '{out}': {e.strerror or e}.", file=sys.stderr)
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
        for f, inputs, target in drawn:
            write_drawn(f, inputs, target, root)
    except DiagramError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{PROGRAM}: cannot write the figures in '{out or root}': {e.strerror or e}.", file=sys.stderr)
        return 1
    return 0


FIGURES = registered()

if __name__ == "__main__":
    sys.exit(main())
