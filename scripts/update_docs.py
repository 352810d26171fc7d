#!/usr/bin/env python3
"""Regenerates every measured number in README.md and chapters/*.md from the result
files in results/h200/, so no number in the text is ever typed by hand. This file finds
the markers and checks the claims; the tables, values, stage list and excerpts are drawn
by the views in scripts/docs_views.py (pandas), one function per view.

    scripts/update_docs.py            rewrite the generated parts in place
    scripts/update_docs.py --check    change nothing; exit 1 naming every stale part
    scripts/update_docs.py --check --stats   also count, per document, the markers of each
                                      kind, the numbers generated and the number pairs
                                      the claims compared, and the different comparisons
                                      in all (the same before and after claims are merged)

Options: --root DIR (the repository, default: this script's parent folder),
--results DIR (default: ROOT/results/h200), and optional Markdown files to process
(default: README.md and chapters/*.md).

Exit codes: 0 done (or, with --check, everything up to date); 1 --check found a stale
part, or a claim (below) no longer holds; 2 an error: a --root that is not a directory,
documents with no generated part at all (nothing was checked), a malformed result file,
a missing one (with --check), an unknown column, row key or option, or a marker that is
not closed. On an error nothing is written. Without --check a missing result file only
leaves its parts unchanged, with a warning. A document is rewritten through a new file
beside it, renamed into place.

Markers
-------
A generated part sits between an opening and a closing HTML comment, which Markdown
does not display. Everything between them is replaced on every run.

Tables, one per block:

    <!-- results: FILE OPTION=VALUE ... -->
    (generated)
    <!-- /results -->

FILE is a name in the results folder (reduce_2p24.csv). A value with spaces is quoted:
columns="key:#,median_us:median (us)". Options:

    view=table      (default) one Markdown row per CSV row:
        columns=C[:TITLE],...   the columns, in order, each optionally renamed (required)
        rows=K,...|all          rows whose `by` column is one of K (default all); a
                                range A-B of numbers takes every numeric key from A to B
        by=C                    the column that `rows` matches (default key)
        where=C:V,...           keep only rows whose column C equals V
        match=C:REGEX           keep only rows whose column C contains REGEX
        fmt=C:SPEC,...          number format per column (below)
    view=pivot      one row per value of one column, one column per (value of another
                    column, measured column) pair:
        row=C                   the column whose values become rows (default n)
        col=C                   the column whose values pick the cells (default key)
        columns=V.C[:TITLE],... for each output column: the `col` value V and the column C
        rows=...                which values of `row` to show (default all); 2^k allowed
        where=, match=, fmt=    as for tables
    view=sweep      a pivot over sweep.csv: row=n, col=key and, for every stage S in
                    stages=S,..., the columns S.median_us and (for S other than cub)
                    S.vs_cub; sizes=2^10,2^20,... picks rows (default all)
    view=running    the ladder so far, one row per stage (kind = stage) in the file's
                    order: time, GB/s, step speedup (vs_previous) and cumulative speedup
                    (speedup_vs_01); upto=NN stops at stage NN. The stages registered
                    for the document that holds the marker are in bold.
    view=peers      over sweep.csv: at each n (sizes=, default all) the fastest of
                    stages=S,..., then every peer of peers=K,... (default CUB 3.0 from the
                    sweep; CUB 3.5 two-phase and gpu_to_gpu, torch and CuPy from
                    peers_cub_modes.csv and peers_torch_cupy.csv) as time (peer / stage),
                    the fastest peer's ratio, and the ceiling (the fastest row of
                    peers_ceiling.csv) with stage vs ceiling = ceiling time / stage time
    view=text       the file's lines in a fenced block: lines=A-B (1-based), match=REGEX

Number formats: a Python format spec (.2f, .1e, .0f, ,.0f), `pow2` (2^24 for a power of
two), or `text` (the CSV's characters as they are). A fixed-point number too small to
show (0.0003 with .1f) is written in scientific notation instead of as zero. Columns
the generator knows (median_us, gbs, vs_cub, rel_error, ...) have default formats and
titles. An empty CSV cell prints as "-". Each table ends with a line naming its file,
device, driver, commit and date from the file's "# key: value" metadata.

The registered stages (the registry as `reduce --list --format csv` prints it, read from
its committed copy results/registry.csv), with links to their source files and chapters:

    <!-- stages: kind=all|stage|baseline -->
    (generated)
    <!-- /stages -->

An excerpt of the project's own code, kept identical to the file:

    <!-- code: PATH start=REGEX [end=REGEX | lines=N] [before=N] [lang=cuda] -->
    (generated)
    <!-- /code -->

PATH is relative to the repository. The excerpt starts at the first line matching
start= and ends at the first line from there matching end=, after N lines, or by
default at the brace that closes the first block opened from the start line; before=N
also takes N lines above the start (a template line). Common indentation is removed;
the file's path and line numbers head the excerpt.

A claim in the prose that depends on the data ("stage 02 is slower than stage 01")
is backed by a claim marker, which prints nothing and is checked on every run:

    <!-- claim: FILE LEFT OPERATOR RIGHT -->

Each side is a number or COLUMN[FILTER=VALUE,...] (median_us[key=02],
vs_cub[n=2^20,key=13]), read from FILE, or OTHER.csv:COLUMN[...] to read another
result file (to compare two runs); OPERATOR is <, <=, >, >=, == or ~N% (within N percent
of the right side). A filter's value may be a list, n=2^10|2^14, or a range of numbers,
n=2^15..2^22 (every row from 2^15 to 2^22). One side may select several rows: the claim
must hold for each. When both do, a row of the left side is compared with the row of the
right side that has its values in the columns filtered by a list or range, size by size:

    <!-- claim: sweep.csv median_us[n=2^15..2^22,key=14] < median_us[key=13] -->

A claim may chain comparisons, each neighbouring pair checked, for a range or an order:

    <!-- claim: reduce_2p28.csv 2457 < gbs[key=06] < 2575 -->

A claim that no longer holds makes the run exit 1 naming it.

One number inside a sentence:

    <!-- value: FILE C=V ... col=C [fmt=SPEC] -->(generated)<!-- /value -->
    <!-- value: FILE meta=KEY -->(generated)<!-- /value -->

The C=V filters must select exactly one row (n=2^20 key=13); meta= takes a value from
the file's metadata (device, driver, peak_gbs, ...).

Markers inside fenced code blocks and inline code spans are left alone.
"""

from __future__ import annotations

import operator
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # when loaded from its path, as the tests do
import output_files  # noqa: E402  scripts/output_files.py: written whole, nothing else touched
from docs_views import (  # noqa: E402,F401  scripts/docs_views.py: the views (read_registry for diagrams.py)
    RENDERERS, Context, DocsError, Marker, MissingFile, ResultFile, format_value, looks_numeric, markdown_cell,
    parse_list, parse_number, read_registry, same_value)

PROGRAM = "update_docs.py"


def require_column(marker: Marker, data: ResultFile, column: str) -> None:
    if column not in data.columns:
        raise DocsError(
            f"{marker.where}: {data.path.name} has no column {column!r} (it has: {', '.join(data.columns)})."
        )


# ---- documents ---------------------------------------------------------------------

OPEN_RE = re.compile(r"<!-- (results|stages|value|code)(?::\s*(.*?))?\s*-->")


def code_regions(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced code blocks and inline code spans."""
    regions = []
    offset = 0
    fence: str | None = None
    fence_start = 0
    for line in text.splitlines(keepends=True):
        m = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if fence is None and m:
            fence, fence_start = m.group(1), offset
        elif fence is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            regions.append((fence_start, offset + len(line)))
            fence = None
        elif fence is None:
            for span in re.finditer(r"(`+)(?!`).*?(?<!`)\1(?!`)", line):
                regions.append((offset + span.start(), offset + span.end()))
        offset += len(line)
    if fence is not None:
        regions.append((fence_start, len(text)))
    return regions


def inside(pos: int, regions: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in regions)


@dataclass
class Block:
    marker: Marker
    start: int  # first character of the generated content
    end: int  # first character of the closing marker


def find_blocks(text: str, doc: Path, doc_path: Path) -> list[Block]:
    regions = code_regions(text)
    opens = [m for m in OPEN_RE.finditer(text) if not inside(m.start(), regions)]
    closes = {
        kind: [m.start() for m in re.finditer(rf"<!-- /{kind} -->", text) if not inside(m.start(), regions)]
        for kind in RENDERERS
    }
    blocks = []
    for i, m in enumerate(opens):
        kind = m.group(1)
        line = text.count("\n", 0, m.start()) + 1
        marker = Marker(kind, (m.group(2) or "").strip(), doc, line, doc_path)
        limit = opens[i + 1].start() if i + 1 < len(opens) else len(text)
        ends = [c for c in closes[kind] if m.end() <= c < limit]
        if not ends:
            raise DocsError(f"{marker.where}: {marker.describe()} has no <!-- /{kind} --> before the next marker.")
        if kind == "value" and "\n" in text[m.end() : ends[0]]:
            raise DocsError(f"{marker.where}: a value marker must be closed on the same line.")
        blocks.append(Block(marker, m.end(), ends[0]))
    all_closes = sorted(c for cs in closes.values() for c in cs)
    used = {b.end for b in blocks}
    for c in all_closes:
        if c not in used:
            line = text.count("\n", 0, c) + 1
            raise DocsError(f"{doc}:{line}: a closing marker has no opening marker.")
    return blocks


def generated_numbers(kind: str, content: str) -> int:
    """How many numbers a generated part holds: one for a value marker that prints one, the
    numeric cells of a results table (header and alignment rows aside)."""
    if kind == "value":
        return 1 if looks_numeric(content.strip()) and content.strip() != "-" else 0
    if kind != "results":
        return 0
    count = 0
    for line in content.splitlines():
        if line.startswith("|") and not line.startswith("|:") and not line.startswith("|-"):
            cells = [c.strip().strip("*").split(" (")[0] for c in line.strip().strip("|").split(" | ")]
            count += sum(1 for c in cells if c != "-" and looks_numeric(c.rstrip("x")))
    return count


@dataclass
class DocResult:
    path: Path
    old: str
    new: str
    stale: list[Block] = field(default_factory=list)
    missing: list[tuple[Marker, Path]] = field(default_factory=list)
    false_claims: list[tuple[Marker, str]] = field(default_factory=list)
    blocks: int = 0
    claims: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # markers of each kind, claims included
    comparisons: int = 0  # number pairs the claims compared
    log: list = field(default_factory=list)  # each comparison, as logged() writes it
    numbers: int = 0  # numbers generated from the results: values and numeric table cells


def process_document(path: Path, ctx: Context, shown: Path) -> DocResult:
    try:
        old = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DocsError(f"{shown} cannot be read ({e}).") from None
    blocks = find_blocks(old, shown, path)
    result = DocResult(path, old, old, blocks=len(blocks))
    for b in blocks:
        result.kinds[b.marker.kind] = result.kinds.get(b.marker.kind, 0) + 1
    pieces, last = [], 0
    for b in blocks:
        try:
            generated = RENDERERS[b.marker.kind](b.marker, ctx)
            content = generated if b.marker.kind == "value" else "\n" + generated + "\n"
        except MissingFile as e:
            result.missing.append((b.marker, e.path))
            content = old[b.start : b.end]
        if content != old[b.start : b.end]:
            result.stale.append(b)
        result.numbers += generated_numbers(b.marker.kind, content)
        pieces.append(old[last : b.start])
        pieces.append(content)
        last = b.end
    pieces.append(old[last:])
    result.new = "".join(pieces)
    claims = find_claims(old, shown, path)
    result.claims = len(claims)
    if claims:
        result.kinds["claim"] = len(claims)
    for marker in claims:
        try:
            problem, compared = evaluate_claim(marker, ctx, result.log)
            result.comparisons += compared
        except MissingFile as e:
            result.missing.append((marker, e.path))
            continue
        if problem:
            result.false_claims.append((marker, problem))
    return result


COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq}
CLAIM_RE = re.compile(r"<!-- claim:\s*(.*?)\s*-->")
OPERAND_RE = re.compile(r"(\w+)\[([^\]]*)\]")
MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def find_claims(text: str, doc: Path, doc_path: Path) -> list[Marker]:
    regions = code_regions(text)
    return [
        Marker("claim", m.group(1), doc, text.count("\n", 0, m.start()) + 1, doc_path)
        for m in CLAIM_RE.finditer(text)
        if not inside(m.start(), regions)
    ]


def filter_matches(marker: Marker, cell: str, wanted: str) -> bool:
    """A filter value: V, a list A|B|C, or a range A..B of numbers (both ends included)."""
    if "|" in wanted:
        return any(same_value(cell, w) for w in wanted.split("|"))
    ends = wanted.split("..")
    if len(ends) == 2:
        lo, hi, value = parse_number(ends[0]), parse_number(ends[1]), parse_number(cell)
        if lo is None or hi is None:
            raise DocsError(f"{marker.where}: the range {wanted!r} must read A..B with two numbers.")
        return value is not None and lo <= value <= hi
    return same_value(cell, wanted)


@dataclass
class Operand:
    """What one side of a claim stands for: its numbers, each with its row (None for a
    number written in the claim), the columns it filters with a list or range (the rows it
    is paired by when the other side selects several rows too), and how to name it."""

    desc: str
    values: list[tuple[float, dict[str, str] | None]]
    sets: list[str] = field(default_factory=list)
    file: str = ""
    column: str = ""


def claim_operand(marker: Marker, data: ResultFile, token: str, file: str = "") -> Operand:
    """The numbers an operand stands for."""
    number = parse_number(token)
    if number is not None:
        return Operand(token, [(number, None)])
    m = OPERAND_RE.fullmatch(token)
    if not m:
        raise DocsError(f"{marker.where}: {token!r} is neither a number nor COLUMN[FILTER=VALUE,...].")
    column = m.group(1)
    require_column(marker, data, column)
    rows, sets = data.rows, []
    for item in parse_list(m.group(2)):
        if "=" not in item:
            raise DocsError(f"{marker.where}: filter {item!r} in {token} must read COLUMN=VALUE.")
        name, wanted = item.split("=", 1)
        require_column(marker, data, name)
        if "|" in wanted or ".." in wanted:
            sets.append(name)
        rows = [r for r in rows if filter_matches(marker, r[name], wanted)]
    if not rows:
        raise DocsError(f"{marker.where}: {token} selects no row of {data.path.name}.")
    values = []
    for r in rows:
        v = parse_number(r[column])
        if v is None:
            raise DocsError(f"{marker.where}: {token} selects {r[column]!r}, which is not a number.")
        values.append((v, r))
    return Operand(token, values, sets, file or data.path.name, column)


def comparator(marker: Marker, op: str):
    tolerance = re.fullmatch(r"~(\d+(?:\.\d+)?)%", op)
    if tolerance:
        share = float(tolerance.group(1)) / 100.0
        return lambda a, b: abs(a - b) <= share * abs(b)
    if op in COMPARISONS:
        return COMPARISONS[op]
    raise DocsError(f"{marker.where}: unknown operator {op!r} (allowed: <, <=, >, >=, ==, ~N%).")


def pairs(marker: Marker, lhs: Operand, rhs: Operand):
    """The (left, right) number pairs a comparison checks: every left number against every
    right one when a side holds one number; when both sides select several rows, each
    left row against the right row that agrees with it on the columns either side filters
    with a list or range (n=2^15..2^22: size by size)."""
    if len(lhs.values) == 1 or len(rhs.values) == 1:
        return [(a, b) for a in lhs.values for b in rhs.values]
    by = lhs.sets or rhs.sets
    if not by:
        raise DocsError(f"{marker.where}: both sides select several rows; give one side a list (C=A|B) or range "
                        "(C=A..B) filter to pair the rows by, or narrow one side to one row.")
    out = []
    for a in lhs.values:
        match = [b for b in rhs.values if all(same_value(b[1][c], a[1][c]) for c in by if c in b[1] and c in a[1])]
        if len(match) != 1:
            shown = ", ".join(f"{c}={a[1].get(c, '?')}" for c in by)
            raise DocsError(f"{marker.where}: {rhs.desc} has {len(match)} rows with {shown}; it must have one.")
        out.append((a, match[0]))
    return out


def row_id(operand: Operand, value: tuple[float, dict[str, str] | None]) -> tuple:
    """A number of a claim as the comparison log names it: the file, column and row, or the constant."""
    if value[1] is None:
        return ("number", value[0])
    return (operand.file, operand.column, tuple(value[1].items()))


def logged(left: tuple, op: str, right: tuple) -> list[tuple]:
    """A comparison as the log holds it, the same whichever way it was written: the smaller
    side first (a > b as b < a); a == b as a <= b and a >= b."""
    ops = ["<=", ">="] if op == "==" else [op]
    out = []
    for o in ops:
        if o in MIRRORED and repr(left) > repr(right):
            out.append((right, MIRRORED[o], left))
        else:
            out.append((left, o, right))
    return out


def evaluate_claim(marker: Marker, ctx: Context, log: list | None = None) -> tuple[str, int]:
    """Empty when the claim holds, otherwise what is false; and how many number pairs it
    compared. A claim is FILE A OP B, or a chain FILE A OP B OP C ... (each neighbouring
    pair compared: 1.5 < vs_cub[key=12] <= 2). `log`, when given, collects every
    comparison as (left, operator, right), for counting checks before and after an edit."""
    try:
        tokens = shlex.split(marker.args)
    except ValueError as e:
        raise DocsError(f"{marker.where}: the claim cannot be read ({e}).") from None
    if len(tokens) < 4 or len(tokens) % 2:
        raise DocsError(f"{marker.where}: a claim reads FILE LEFT OPERATOR RIGHT [OPERATOR RIGHT ...], e.g. "
                        "reduce_2p24.csv median_us[key=02] > median_us[key=01].")
    name = tokens[0]
    data = ctx.load(marker, name)

    def operand(token: str) -> Operand:
        # OTHER.csv:COLUMN[...] reads another result file (two runs compared).
        other = re.fullmatch(r"((?:[a-z][a-z0-9]*/)?(?:history/)?[\w.+-]+\.csv):(.+)", token)
        if other:
            result = claim_operand(marker, ctx.load(marker, other.group(1)), other.group(2), other.group(1))
            result.desc = f"{other.group(1)}:{result.desc}"
            return result
        return claim_operand(marker, data, token, name)

    operands = [operand(t) for t in tokens[1::2]]
    compared, problem = 0, ""
    for lhs, op, rhs in zip(operands, tokens[2::2], operands[1:]):
        compare = comparator(marker, op)
        for a, b in pairs(marker, lhs, rhs):
            compared += 1
            if log is not None:
                log += logged(row_id(lhs, a), op, row_id(rhs, b))
            if not problem and not compare(a[0], b[0]):
                problem = f"{lhs.desc} = {a[0]:g}, {rhs.desc} = {b[0]:g}"
    return problem, compared


def default_documents(root: Path) -> list[Path]:
    docs = [p for p in (root / "README.md", root / "REFERENCE.md") if p.is_file()]
    lab = root / "lab"
    lab_docs = ([lab / "README.md"] if (lab / "README.md").is_file() else []) + sorted((lab / "notes").glob("*.md"))
    return docs + sorted((root / "chapters").glob("*.md")) + lab_docs


def library_documents(root: Path, results: Path) -> list[Path]:
    """single_pass/README.md, whose performance table comes from library_sweep.csv: one of the
    default documents once that file is in the results folder (until it is measured the README
    holds an empty table region and says so)."""
    readme = root / "single_pass" / "README.md"
    return [readme] if readme.is_file() and (results / "library_sweep.csv").is_file() else []


def display(path: Path, root: Path) -> Path:
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return path


def print_stats(outcomes: list[DocResult], root: Path) -> None:
    """Markers of each kind per document and in all, and the number pairs the claims compared."""
    kinds = ("results", "stages", "code", "value", "claim")
    names = [display(o.path, root).as_posix() for o in outcomes]
    width = max(len(n) for n in names + ["document"])
    print(f"{'document':<{width}} " + " ".join(f"{k:>7}" for k in kinds) + "  numbers compared")
    totals = dict.fromkeys(kinds, 0)
    for name, o in zip(names, outcomes):
        for k in kinds:
            totals[k] += o.kinds.get(k, 0)
        print(f"{name:<{width}} " + " ".join(f"{o.kinds.get(k, 0):>7}" for k in kinds)
              + f" {o.numbers:>8} {o.comparisons:>8}")
    print(f"{'all':<{width}} " + " ".join(f"{totals[k]:>7}" for k in kinds)
          + f" {sum(o.numbers for o in outcomes):>8} {sum(o.comparisons for o in outcomes):>8}")
    distinct = len({repr(entry) for o in outcomes for entry in o.log})
    print(f"{distinct} different comparisons (a == b counted as a <= b and a >= b; a > b as b < a)")


def main(argv: list[str] | None = None) -> int:
    parser = output_files.Parser(
        prog=PROGRAM,
        description="Regenerates the results tables and values in README.md and chapters/*.md from results/h200/.",
    )
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a generated part is stale")
    parser.add_argument("--stats", action="store_true",
                        help="with --check: also print how many markers of each kind, generated parts and claims "
                             "were checked, per document and in all")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="the repository")
    parser.add_argument("--results", help="folder of the result files (default: ROOT/results/h200)")
    parser.add_argument("files", nargs="*", type=Path, help="Markdown files (default: README.md and chapters/*.md)")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"{PROGRAM}: --root '{args.root}' is not a directory: give the repository's folder.", file=sys.stderr)
        return 2
    # A --results that is not a folder would leave every generated part "up to date"
    # (nothing to compare with): refused, as a typo.
    problem = args.results is not None and output_files.input_problem(args.results, "--results",
                                                                      needs="that holds the result files")
    if problem:
        print(f"{PROGRAM}: {problem}", file=sys.stderr)
        return 2
    root = args.root.resolve()
    results = (Path(args.results) if args.results is not None else root / "results" / "h200").resolve()
    ctx = Context(root, results)
    docs = [p.resolve() for p in args.files] if args.files else default_documents(root) + library_documents(root, results)
    try:
        for p in docs:
            if not p.is_file():
                raise DocsError(f"{p} does not exist.")
        outcomes = [process_document(p, ctx, display(p, root)) for p in docs]
    except DocsError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return 2

    missing = [(o, marker, m) for o in outcomes for marker, m in o.missing]
    if missing:
        names = sorted({display(m, root).as_posix() for _, _, m in missing})
        first = missing[0][1].where
        if args.check:
            print(
                f"{PROGRAM}: missing result file{'s' if len(names) > 1 else ''} {', '.join(names)} "
                f"(first named at {first}); commit the results, then run scripts/update_docs.py.",
                file=sys.stderr,
            )
            return 2
        for name in names:
            print(f"{PROGRAM}: warning: {name} does not exist; the parts generated from it were left unchanged.",
                  file=sys.stderr)

    total = sum(o.blocks for o in outcomes)
    if total == 0 and not any(o.claims for o in outcomes):
        where = ", ".join(str(display(p, root)) for p in docs) if docs else f"{root} (no README.md, no chapters/*.md)"
        print(f"{PROGRAM}: no generated part and no claim in {where}: nothing was checked; is --root the "
              "repository?", file=sys.stderr)
        return 2
    false_claims = [(marker, problem) for o in outcomes for marker, problem in o.false_claims]

    def report_claims() -> None:
        for marker, problem in false_claims:
            print(f"{marker.where}: {marker.describe()} no longer holds ({problem}): rewrite the sentence it backs")

    if args.check:
        stale = [(o, b) for o in outcomes for b in o.stale]
        for _, b in stale:
            print(f"{b.marker.where}: {b.marker.describe()} is stale: run scripts/update_docs.py")
        report_claims()
        if stale or false_claims:
            print(f"{len(stale)} of {total} generated parts are stale; {len(false_claims)} claims are false.")
            return 1
        claims = sum(o.claims for o in outcomes)
        if args.stats:
            print_stats(outcomes, root)
        print(
            f"All {total} generated parts in {len(outcomes)} file{'s' if len(outcomes) != 1 else ''} are up to "
            f"date and all {claims} claims hold."
        )
        return 0
    changed = [o for o in outcomes if o.new != o.old]
    for o in changed:  # every file checked before the first is written
        problem = output_files.problem(str(o.path), "the document")
        if problem:
            print(f"{PROGRAM}: {problem}", file=sys.stderr)
            return 2
    for o in changed:
        output_files.write(str(o.path), o.new)
        print(f"updated {display(o.path, root)} ({len(o.stale)} part{'s' if len(o.stale) != 1 else ''})")
    if not changed:
        print(
            f"All {total} generated parts in {len(outcomes)} file{'s' if len(outcomes) != 1 else ''} "
            "were already up to date."
        )
    report_claims()
    return 1 if false_claims else 0


if __name__ == "__main__":
    sys.exit(main())
