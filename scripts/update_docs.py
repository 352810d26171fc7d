#!/usr/bin/env python3
"""Regenerates every measured number in README.md and chapters/*.md from the result
files in results/h200/, so no number in the text is ever typed by hand.

    scripts/update_docs.py            rewrite the generated parts in place
    scripts/update_docs.py --check    change nothing; exit 1 naming every stale part
    scripts/update_docs.py --check --stats   also count, per document, the markers of each
                                      kind, the numbers generated and the number pairs
                                      the claims compared

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
its committed copy scripts/registry.csv), with links to their source files and chapters:

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

import math
import operator
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # when loaded from its path, as the tests do
import output_files  # noqa: E402  scripts/output_files.py: written whole, nothing else touched
import result_files  # noqa: E402  scripts/result_files.py: the reader of the result CSVs

PROGRAM = "update_docs.py"


class DocsError(Exception):
    """A problem that stops the run: printed as one sentence, exit code 2."""


# ---- result files ------------------------------------------------------------------
# Read by scripts/result_files.py, the one reader every script shares; a file that cannot
# be read is an error of this run (DocsError), a missing one is reported as such.

MissingFile = result_files.MissingFile
ResultFile = result_files.ResultFile


def load_result_csv(path: Path) -> ResultFile:
    try:
        return result_files.load(path)
    except result_files.ResultFileError as e:
        raise DocsError(str(e)) from None


# ---- values and formats ------------------------------------------------------------

TITLES = {
    "n": "n",
    "key": "#",
    "stage": "stage",
    "block": "block",
    "grid": "grid",
    "reps": "reps",
    "median_us": "median (us)",
    "min_us": "min (us)",
    "max_us": "max (us)",
    "gbs": "GB/s",
    "pct_peak": "% of peak",
    "speedup_vs_01": "vs 01",
    "vs_previous": "vs previous",
    "vs_cub": "vs CUB",
    "abs_error": "abs. error",
    "rel_error": "rel. error",
    "tolerance": "tolerance",
    "check": "check",
    "deterministic": "deterministic",
    "single_launch": "one launch",
    "book_v100_ms": "book V100 (ms)",
    "variant": "variant",
    "element": "element",
    "accumulator": "accumulator",
    "bytes_per_element": "bytes per element",
    "gmacs": "GMAC/s",
    "vs_fp32": "vs FP32",
    "rel_bound": "rel. bound",
    "error_depth": "error depth",
    "build": "build",
    "limit": "limit",
    "registers": "registers",
    "local_bytes": "spill (bytes)",
    "shared_bytes": "shared (bytes)",
    "blocks_per_sm_api": "blocks per SM",
    "limited_by": "limited by",
    "occupancy_pct": "occupancy (%)",
    "gflops": "GFLOP/s",
    "vs_plain": "vs plain",
    "worst_error_ratio": "error / tolerance",
    "per_sm": "blocks per SM",
    "warps_per_sm": "warps per SM",
    "api_max_per_sm": "API max per SM",
    "mark": "mark",
}

FORMATS = {
    "n": "pow2",
    "median_us": ".1f",
    "min_us": ".1f",
    "max_us": ".1f",
    "gbs": ".0f",
    "pct_peak": ".1f",
    "speedup_vs_01": ".1f",
    "vs_previous": ".2f",
    "vs_cub": ".2f",
    "abs_error": ".1e",
    "rel_error": ".1e",
    "tolerance": ".1e",
    "book_v100_ms": ".3f",
    "result": ".9g",
    "reference": ".9g",
    "gmacs": ".0f",
    "vs_fp32": ".2f",
    "rel_bound": ".1e",
    "occupancy_pct": ".1f",
    "gflops": ".0f",
    "vs_plain": ".2f",
    "worst_error_ratio": ".3f",
}


def parse_number(text: str) -> float | None:
    """A float for numeric text (2^k allowed), None otherwise."""
    t = text.strip()
    m = re.fullmatch(r"2\^(\d+)", t)
    if m:
        return float(2 ** int(m.group(1)))
    try:
        return float(t)
    except ValueError:
        return None


def same_value(cell: str, wanted: str) -> bool:
    a, b = parse_number(cell), parse_number(wanted)
    if a is not None and b is not None:
        return a == b
    return cell.strip() == wanted.strip()


def format_value(text: str, spec: str | None, column: str, where: str) -> str:
    if text.strip() == "":
        return "-"
    if spec is None:
        spec = FORMATS.get(column)
    if spec is None:
        number = parse_number(text)
        if number is None or re.fullmatch(r"-?\d+", text.strip()):
            return text
        spec = ".4g"
    if spec == "text":
        return text
    number = parse_number(text)
    if number is None:
        raise DocsError(f"{where}: column {column!r} holds {text!r}, which is not a number for format {spec!r}.")
    if spec == "pow2":
        if number > 0 and number.is_integer() and (int(number) & (int(number) - 1)) == 0:
            return f"2^{int(number).bit_length() - 1}"
        return f"{number:.0f}" if number.is_integer() else f"{number:g}"
    m = re.fullmatch(r"(,?)\.(\d+)f", spec)
    if m and number != 0 and math.isfinite(number) and abs(number) < 0.5 * 10 ** -int(m.group(2)):
        return f"{number:.1e}"  # would print as zero
    try:
        return format(number, spec)
    except ValueError:
        raise DocsError(f"{where}: {spec!r} is not a number format (use a Python spec such as .2f, or pow2).") from None


def markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def looks_numeric(cell: str) -> bool:
    return cell == "-" or re.fullmatch(r"[-+]?(\d[\d,]*\.?\d*(e[-+]?\d+)?|inf|nan|2\^\d+)", cell) is not None


# ---- markers and their options -----------------------------------------------------


@dataclass
class Marker:
    kind: str  # results, stages or value
    args: str
    doc: Path  # the Markdown file, as messages name it
    line: int
    doc_path: Path  # the same file on disk, for relative links

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    def describe(self) -> str:
        return f"<!-- {self.kind}: {self.args} -->" if self.args else f"<!-- {self.kind} -->"


def split_args(marker: Marker) -> tuple[list[str], dict[str, str]]:
    try:
        tokens = shlex.split(marker.args)
    except ValueError as e:
        raise DocsError(f"{marker.where}: the marker's options cannot be read ({e}).") from None
    positional, options = [], {}
    for token in tokens:
        if "=" in token:
            name, value = token.split("=", 1)
            if name in options:
                raise DocsError(f"{marker.where}: option {name!r} is given twice.")
            options[name] = value
        else:
            positional.append(token)
    return positional, options


def check_options(marker: Marker, options: dict[str, str], allowed: set[str]) -> None:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise DocsError(
            f"{marker.where}: unknown option {unknown[0]!r} (allowed here: {', '.join(sorted(allowed))})."
        )


def parse_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def parse_pairs(marker: Marker, value: str, option: str) -> list[tuple[str, str]]:
    pairs = []
    for item in parse_list(value):
        if ":" not in item:
            raise DocsError(f"{marker.where}: {option}= item {item!r} must read COLUMN:VALUE.")
        name, rest = item.split(":", 1)
        pairs.append((name.strip(), rest))
    return pairs


def require_column(marker: Marker, data: ResultFile, column: str) -> None:
    if column not in data.columns:
        raise DocsError(
            f"{marker.where}: {data.path.name} has no column {column!r} (it has: {', '.join(data.columns)})."
        )


def filter_rows(marker: Marker, data: ResultFile, options: dict[str, str]) -> list[dict[str, str]]:
    rows = data.rows
    for column, value in parse_pairs(marker, options.get("where", ""), "where"):
        require_column(marker, data, column)
        rows = [r for r in rows if same_value(r[column], value)]
    for column, pattern in parse_pairs(marker, options.get("match", ""), "match"):
        require_column(marker, data, column)
        try:
            regex = re.compile(pattern)
        except re.error as e:
            raise DocsError(f"{marker.where}: match={column}:{pattern} is not a regular expression ({e}).") from None
        rows = [r for r in rows if regex.search(r[column])]
    return rows


def select_by_keys(marker: Marker, data: ResultFile, rows, column: str, spec: str, option: str):
    """Rows whose `column` is in the list `spec` (in the list's order), or all of them."""
    if spec.strip() == "all":
        return rows
    chosen = []
    for item in parse_list(spec):
        range_match = re.fullmatch(r"(\d+)-(\d+)", item)
        if range_match:
            lo, hi = int(range_match.group(1)), int(range_match.group(2))
            found = [r for r in rows if re.fullmatch(r"\d+", r[column].strip()) and lo <= int(r[column]) <= hi]
        else:
            found = [r for r in rows if same_value(r[column], item)]
        if not found:
            raise DocsError(f"{marker.where}: {data.path.name} has no row with {column} = {item!r} ({option}=).")
        chosen.extend(r for r in found if r not in chosen)
    return chosen


def parse_columns(marker: Marker, spec: str | None) -> list[tuple[str, str | None]]:
    if not spec:
        raise DocsError(f"{marker.where}: a table needs columns=COLUMN[:TITLE],...")
    out = []
    for item in parse_list(spec):
        name, _, title = item.partition(":")
        out.append((name.strip(), title.strip() or None))
    return out


def parse_formats(marker: Marker, data: ResultFile | None, spec: str) -> dict[str, str]:
    formats = {}
    for column, fmt in parse_pairs(marker, spec, "fmt"):
        if data is not None:
            require_column(marker, data, column)
        formats[column] = fmt.strip()
    return formats


def format_n(value: str) -> str:
    number = parse_number(value)
    if number is None:
        return value
    return format_value(value, "pow2", "n", "")


def source_note(data: ResultFile, doc: Path, root: Path) -> str:
    link = os.path.relpath(data.path, doc.parent)
    try:
        shown = data.path.relative_to(root).as_posix()
    except ValueError:
        shown = data.path.name
    parts = []
    for key in ("device", "driver", "commit", "date"):
        if data.meta.get(key):
            parts.append(("driver " if key == "driver" else "commit " if key == "commit" else "") + data.meta[key])
    n = data.meta.get("n", "")
    if n and parse_number(n) is not None:
        parts.append(f"n = {format_n(n)}")
    flushed = data.meta.get("l2_flushed")
    mode = data.meta.get("l2_flush")
    if flushed in ("yes", "no"):
        if flushed == "no":
            parts.append("L2 not flushed")
        elif mode in ("read", "write"):
            parts.append(f"L2 flushed ({mode}) before each repetition")
        else:
            parts.append("L2 flushed before each repetition")
    elif mode in ("read", "write"):
        parts.append(f"L2 flushed ({mode}) before each repetition")
    details = ", ".join(parts)
    return f"*Source: [{shown}]({Path(link).as_posix()})" + (f" ({details})" if details else "") + ".*"


def markdown_table(headers: list[str], body: list[list[str]]) -> str:
    aligns = []
    for i in range(len(headers)):
        cells = [row[i] for row in body]
        numeric = bool(cells) and all(looks_numeric(c) for c in cells) and any(c != "-" for c in cells)
        aligns.append("---:" if numeric else ":---")
    lines = ["| " + " | ".join(markdown_cell(h) for h in headers) + " |", "|" + "|".join(aligns) + "|"]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


# ---- the generators ----------------------------------------------------------------


class Context:
    def __init__(self, root: Path, results: Path):
        self.root = root
        self.results = results
        self._cache: dict[Path, ResultFile] = {}

    def result_path(self, marker: Marker, name: str) -> Path:
        # A current result file, or history/NAME: a superseded run a chapter still compares with.
        # Another GPU's results: GPU/NAME or GPU/history/NAME (results/h100/sweep.csv
        # beside results/h200/).
        parts = name.split("/")
        base = self.results
        if len(parts) >= 2 and parts[0] != "history" and re.fullmatch(r"[a-z][a-z0-9]*", parts[0]):
            base = self.results.parent / parts[0]
            parts = parts[1:]
        if len(parts) == 2 and parts[0] == "history":
            parts = parts[1:]
            base = base / "history"
        if len(parts) != 1 or parts[0].startswith("."):
            raise DocsError(
                f"{marker.where}: {name!r} must be a file name in the results folder, in its history/, or GPU/NAME."
            )
        return base / parts[0]

    def load(self, marker: Marker, name: str) -> ResultFile:
        path = self.result_path(marker, name)
        if path not in self._cache:
            self._cache[path] = load_result_csv(path)
        return self._cache[path]


def render_table(marker: Marker, data: ResultFile, options: dict[str, str], ctx: Context) -> str:
    check_options(marker, options, {"view", "columns", "rows", "by", "where", "match", "fmt"})
    by = options.get("by", "key")
    rows = filter_rows(marker, data, options)
    if "rows" in options or by != "key":
        require_column(marker, data, by)
    if by in data.columns:
        rows = select_by_keys(marker, data, rows, by, options.get("rows", "all"), "rows")
    if not rows:
        raise DocsError(f"{marker.where}: no row of {data.path.name} is selected.")
    columns = parse_columns(marker, options.get("columns"))
    for name, _ in columns:
        require_column(marker, data, name)
    formats = parse_formats(marker, data, options.get("fmt", ""))
    headers = [title or TITLES.get(name, name) for name, title in columns]
    body = [[format_value(r[name], formats.get(name), name, marker.where) for name, _ in columns] for r in rows]
    return markdown_table(headers, body) + "\n\n" + source_note(data, marker.doc_path, ctx.root)


def render_pivot(marker: Marker, data: ResultFile, options: dict[str, str], ctx: Context, sweep: bool) -> str:
    if sweep:
        check_options(marker, options, {"view", "stages", "sizes", "where", "match", "fmt"})
        row_col, col_col = "n", "key"
        stages = parse_list(options.get("stages", ""))
        if not stages:
            raise DocsError(f"{marker.where}: view=sweep needs stages=KEY,...")
        specs = []
        for s in stages:
            label = "CUB" if s == "cub" else s
            specs.append((s, "median_us", f"{label} (us)"))
            if s != "cub":
                specs.append((s, "vs_cub", f"{label} vs CUB"))
        row_values = options.get("sizes", "all")
    else:
        check_options(marker, options, {"view", "row", "col", "columns", "rows", "where", "match", "fmt"})
        row_col, col_col = options.get("row", "n"), options.get("col", "key")
        specs = []
        for name, title in parse_columns(marker, options.get("columns")):
            if "." not in name:
                raise DocsError(f"{marker.where}: pivot column {name!r} must read VALUE.COLUMN (13.median_us).")
            value, column = name.rsplit(".", 1)
            specs.append((value, column, title or f"{value} {TITLES.get(column, column)}"))
        row_values = options.get("rows", "all")
    require_column(marker, data, row_col)
    require_column(marker, data, col_col)
    for value, column, _ in specs:
        require_column(marker, data, column)
        if not any(same_value(r[col_col], value) for r in data.rows):
            raise DocsError(f"{marker.where}: {data.path.name} has no row with {col_col} = {value!r}.")
    formats = parse_formats(marker, data, options.get("fmt", ""))
    rows = filter_rows(marker, data, options)
    keys: list[str] = []
    for r in rows:
        if not any(same_value(r[row_col], k) for k in keys):
            keys.append(r[row_col])
    if row_values.strip() != "all":
        wanted = parse_list(row_values)
        for w in wanted:
            if not any(same_value(k, w) for k in keys):
                raise DocsError(f"{marker.where}: {data.path.name} has no row with {row_col} = {w!r}.")
        keys = [k for w in wanted for k in keys if same_value(k, w)]
    if not keys:
        raise DocsError(f"{marker.where}: no row of {data.path.name} is selected.")
    headers = [TITLES.get(row_col, row_col)] + [title for _, _, title in specs]
    body = []
    for k in keys:
        line = [format_value(k, formats.get(row_col), row_col, marker.where)]
        for value, column, _ in specs:
            cells = [r for r in rows if same_value(r[row_col], k) and same_value(r[col_col], value)]
            if len(cells) > 1:
                raise DocsError(
                    f"{marker.where}: {data.path.name} has {len(cells)} rows with {row_col} = {k} and "
                    f"{col_col} = {value}; narrow them with where=."
                )
            line.append(format_value(cells[0][column], formats.get(column), column, marker.where) if cells else "-")
        body.append(line)
    return markdown_table(headers, body) + "\n\n" + source_note(data, marker.doc_path, ctx.root)


def render_text(marker: Marker, name: str, options: dict[str, str], ctx: Context) -> str:
    check_options(marker, options, {"view", "lines", "match"})
    path = ctx.result_path(marker, name)
    if not path.is_file():
        raise MissingFile(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise DocsError(f"{path} cannot be read as UTF-8 text ({e}).") from None
    if "lines" in options:
        m = re.fullmatch(r"(\d+)-(\d*)", options["lines"])
        if not m or int(m.group(1)) < 1:
            raise DocsError(f"{marker.where}: lines={options['lines']} must read A-B or A- (1-based).")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else len(lines)
        lines = lines[lo - 1 : hi]
    if "match" in options:
        try:
            regex = re.compile(options["match"])
        except re.error as e:
            raise DocsError(f"{marker.where}: match={options['match']} is not a regular expression ({e}).") from None
        lines = [line for line in lines if regex.search(line)]
    if not lines:
        raise DocsError(f"{marker.where}: no line of {path.name} is selected.")
    fence = "````" if any(line.startswith("```") for line in lines) else "```"
    link = Path(os.path.relpath(path, marker.doc_path.parent)).as_posix()
    try:
        shown = path.relative_to(ctx.root).as_posix()
    except ValueError:
        shown = path.name
    return f"{fence}text\n" + "\n".join(lines) + f"\n{fence}\n\n*Source: [{shown}]({link}).*"


RUNNING_COLUMNS = ("key", "kind", "stage", "median_us", "gbs", "vs_previous", "speedup_vs_01")


def render_running(marker: Marker, data: ResultFile, options: dict[str, str], ctx: Context) -> str:
    """The ladder as one running table, stage by stage: time, GB/s, the step speedup
    (the previous stage's time over this one's, the CSV's vs_previous) and the cumulative
    speedup (stage 01's time over this one's, speedup_vs_01). upto=NN stops at stage NN;
    the stages whose registered chapter is the document holding the marker are in bold."""
    check_options(marker, options, {"view", "upto"})
    for column in RUNNING_COLUMNS:
        require_column(marker, data, column)
    rows = [r for r in data.rows if r["kind"].strip() == "stage" and re.fullmatch(r"\d+", r["key"].strip())]
    if not rows:
        raise DocsError(f"{marker.where}: {data.path.name} has no stage rows (kind = stage) for view=running.")
    if "upto" in options:
        upto = options["upto"].strip()
        if not re.fullmatch(r"\d+", upto):
            raise DocsError(f"{marker.where}: upto={upto} must be a stage number such as 05.")
        if not any(int(r["key"]) == int(upto) for r in rows):
            keys = ", ".join(r["key"] for r in rows)
            raise DocsError(f"{marker.where}: upto={upto} names no stage row of {data.path.name} (it has: {keys}).")
        rows = [r for r in rows if int(r["key"]) <= int(upto)]
    doc = Path(os.path.relpath(marker.doc_path.resolve(), ctx.root.resolve())).as_posix()
    own = {int(s.key) for s in read_registry(ctx.root) if s.kind == "stage" and s.chapter == doc}

    def speedup(r: dict[str, str], column: str) -> str:
        text = format_value(r[column], ".2f", column, marker.where)
        return text if text == "-" else text + "x"

    lines = [
        "| # | stage | time (us) | GB/s | step speedup | cumulative speedup |",
        "|:---|:---|---:|---:|---:|---:|",
    ]
    for r in rows:
        cells = [
            r["key"],
            r["stage"],
            format_value(r["median_us"], FORMATS["median_us"], "median_us", marker.where),
            format_value(r["gbs"], FORMATS["gbs"], "gbs", marker.where),
            speedup(r, "vs_previous"),
            speedup(r, "speedup_vs_01"),
        ]
        cells = [markdown_cell(c) for c in cells]
        if int(r["key"]) in own:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    legend = (
        "*Step speedup: the previous stage's time over this one's; cumulative: stage 01's time over this one's"
        + ("; in bold, this chapter's stages" if any(int(r["key"]) in own for r in rows) else "")
        + ".*"
    )
    return "\n".join(lines) + "\n\n" + legend + "\n\n" + source_note(data, marker.doc_path, ctx.root)


# The peers' result files beside a sweep (scripts/device_peers.sh writes them) and the
# short names the peers view gives their rows.
PEER_FILES = ("peers_cub_modes.csv", "peers_torch_cupy.csv")
PEER_TITLES = {
    "cub": "CUB 3.0",
    "cub_two_phase": "CUB 3.5",
    "cub_run_to_run": "CUB 3.5 run_to_run",
    "cub_not_guaranteed": "CUB 3.5 not_guaranteed",
    "cub_gpu_to_gpu": "CUB 3.5 gpu_to_gpu",
    "torch_sum": "torch",
    "cupy_sum": "CuPy",
}


def positional_folder(marker: Marker) -> str:
    """The folder part of the file a results marker names ("h100/" for h100/sweep.csv)."""
    name = split_args(marker)[0][0]
    return name[: name.rfind("/") + 1]


def render_peers(marker: Marker, data: ResultFile, options: dict[str, str], ctx: Context) -> str:
    """The fastest of `stages` at each n of the sweep against every peer and the ceiling.

    The stages and CUB 3.0 come from the sweep (one run); the other peers and the
    ceiling (the fastest streaming kernel of peers_ceiling.csv) from their own runs on
    the same GPU. Ratios are the peer's time over the stage's: above 1, the stage is
    faster.
    """
    check_options(marker, options, {"view", "stages", "sizes", "peers"})
    stages = parse_list(options.get("stages", ""))
    peers = parse_list(options.get("peers", "cub,cub_two_phase,cub_gpu_to_gpu,torch_sum,cupy_sum"))
    if not stages:
        raise DocsError(f"{marker.where}: view=peers needs stages=KEY,...")
    folder = positional_folder(marker)
    others = [ctx.load(marker, folder + name) for name in PEER_FILES]
    ceiling = ctx.load(marker, folder + "peers_ceiling.csv")
    files = [data] + others
    sizes = parse_list(options.get("sizes", "")) or sorted({r["n"] for r in data.rows}, key=float)

    def median(f: ResultFile, n: str, key: str) -> float | None:
        rows = [r for r in f.rows if same_value(r["n"], n) and r["key"] == key]
        return f.number(rows[0], "median_us") if rows else None

    def peer_time(n: str, key: str) -> float:
        for f in files:
            t = median(f, n, key)
            if t is not None:
                return t
        raise DocsError(f"{marker.where}: no result file has peer {key!r} at n = {n}.")

    headers = ["n", "fastest stage", "us"] + [f"{PEER_TITLES.get(k, k)}" for k in peers]
    headers += ["fastest peer vs stage", "ceiling (us)", "stage vs ceiling"]
    body = []
    for n in sizes:
        times = [(median(data, n, k), k) for k in stages]
        times = [(t, k) for t, k in times if t is not None]
        if not times:
            raise DocsError(f"{marker.where}: {data.path.name} has none of stages {stages} at n = {n}.")
        best, key = min(times)
        peer_times = [peer_time(n, k) for k in peers]
        walls = [ceiling.number(r, "median_us") for r in ceiling.rows if same_value(r["n"], n)]
        if not walls:
            raise DocsError(f"{marker.where}: peers_ceiling.csv has no row at n = {n}.")
        wall = min(walls)
        line = [format_n(n), key, f"{best:.1f}"]
        line += [f"{t:.1f} ({t / best:.2f})" for t in peer_times]
        line += [f"{min(peer_times) / best:.2f}", f"{wall:.1f}", f"{wall / best:.2f}"]
        body.append(line)
    notes = [source_note(f, marker.doc_path, ctx.root) for f in files + [ceiling]]
    return markdown_table(headers, body) + "\n\n" + "\n".join(notes)


def render_results(marker: Marker, ctx: Context) -> str:
    positional, options = split_args(marker)
    if len(positional) != 1:
        raise DocsError(f"{marker.where}: a results marker names exactly one file, then OPTION=VALUE items.")
    view = options.get("view", "table")
    if view == "text":
        return render_text(marker, positional[0], options, ctx)
    if view not in ("table", "pivot", "sweep", "running", "peers"):
        raise DocsError(f"{marker.where}: unknown view {view!r} (allowed: table, pivot, sweep, running, peers, text).")
    data = ctx.load(marker, positional[0])
    if view == "table":
        return render_table(marker, data, options, ctx)
    if view == "running":
        return render_running(marker, data, options, ctx)
    if view == "peers":
        return render_peers(marker, data, options, ctx)
    return render_pivot(marker, data, options, ctx, sweep=view == "sweep")


def render_value(marker: Marker, ctx: Context) -> str:
    positional, options = split_args(marker)
    if len(positional) != 1:
        raise DocsError(f"{marker.where}: a value marker names exactly one file, then COLUMN=VALUE filters.")
    data = ctx.load(marker, positional[0])
    if "meta" in options:
        if set(options) != {"meta"}:
            raise DocsError(f"{marker.where}: meta= takes no other option.")
        key = options["meta"]
        if key not in data.meta:
            raise DocsError(
                f"{marker.where}: {data.path.name} has no metadata {key!r} (it has: {', '.join(data.meta)})."
            )
        return markdown_cell(data.meta[key])
    column = options.pop("col", None)
    spec = options.pop("fmt", None)
    if column is None:
        raise DocsError(f"{marker.where}: a value marker needs col=COLUMN (or meta=KEY).")
    require_column(marker, data, column)
    rows = data.rows
    for name, wanted in options.items():
        require_column(marker, data, name)
        rows = [r for r in rows if same_value(r[name], wanted)]
        if not rows:
            raise DocsError(
                f"{marker.where}: {data.path.name} has no row with {name} = {wanted!r} (and the other filters)."
            )
    if len(rows) != 1:
        raise DocsError(
            f"{marker.where}: the filters select {len(rows)} rows of {data.path.name}; they must select one."
        )
    return markdown_cell(format_value(rows[0][column], spec, column, marker.where))


@dataclass
class RegisteredStage:
    key: str
    kind: str
    title: str
    source: str
    chapter: str


# The registry's machine form, `build/reduction/reduce --list --format csv`, committed so
# that the docs can be generated and checked without a build; the host test
# registry_snapshot (tests/host/test_registry_snapshot.py) fails whenever it differs from
# what the program prints.
REGISTRY_SNAPSHOT = Path("scripts") / "registry.csv"
REGISTRY_COMMAND = "build/reduction/reduce --list --format csv > scripts/registry.csv"


def read_registry(root: Path) -> list[RegisteredStage]:
    """The registry in its order: key, kind, title, source and chapter of every stage and baseline."""
    path = root / REGISTRY_SNAPSHOT
    try:
        data = result_files.load(path)
    except MissingFile:
        raise DocsError(f"{path} does not exist, so the stage list cannot be generated: run {REGISTRY_COMMAND}.")
    except result_files.ResultFileError as e:
        raise DocsError(f"{e} (it is written by {REGISTRY_COMMAND})") from None
    missing = [c for c in ("key", "kind", "title", "source", "chapter") if c not in data.columns]
    if missing:
        raise DocsError(f"{path} has no column {missing[0]}: run {REGISTRY_COMMAND}.")
    return [
        RegisteredStage(key=r["key"], kind=r["kind"], title=r["title"], source=r["source"], chapter=r["chapter"])
        for r in data.rows
    ]


def render_stages(marker: Marker, ctx: Context) -> str:
    positional, options = split_args(marker)
    check_options(marker, options, {"kind"})
    if positional:
        raise DocsError(f"{marker.where}: a stages marker takes only kind=all|stage|baseline.")
    kind = options.get("kind", "all")
    if kind not in ("all", "stage", "baseline"):
        raise DocsError(f"{marker.where}: kind={kind} is not one of all, stage, baseline.")
    stages = [s for s in read_registry(ctx.root) if kind == "all" or s.kind == kind]
    if not stages:
        raise DocsError(f"{marker.where}: the registry has no {kind} entries.")

    def link(path: str) -> str:
        rel = Path(os.path.relpath(ctx.root / path, marker.doc_path.parent)).as_posix()
        return f"[{path}]({rel})"

    body = [[s.key, s.title, link(s.source), link(s.chapter)] for s in stages]
    registry = Path(os.path.relpath(ctx.root / "reduction" / "stages.cpp", marker.doc_path.parent)).as_posix()
    note = f"*Generated from the registry, [reduction/stages.cpp]({registry}).*"
    return markdown_table(["#", "stage", "source", "chapter"], body) + "\n\n" + note


def render_code(marker: Marker, ctx: Context) -> str:
    positional, options = split_args(marker)
    check_options(marker, options, {"start", "end", "lines", "before", "lang"})
    if len(positional) != 1 or "start" not in options:
        raise DocsError(f"{marker.where}: a code marker names one source file and start=REGEX.")
    if "end" in options and "lines" in options:
        raise DocsError(f"{marker.where}: give end=REGEX or lines=N, not both.")
    rel = positional[0]
    path = (ctx.root / rel).resolve()
    if not path.is_file():
        raise DocsError(f"{marker.where}: the source file {rel} does not exist.")
    lines = path.read_text(encoding="utf-8").splitlines()

    def compiled(option: str) -> re.Pattern:
        try:
            return re.compile(options[option])
        except re.error as e:
            raise DocsError(f"{marker.where}: {option}={options[option]} is not a regular expression ({e}).") from None

    start_re = compiled("start")
    first = next((i for i, line in enumerate(lines) if start_re.search(line)), None)
    if first is None:
        raise DocsError(f"{marker.where}: {rel} has no line matching start={options['start']!r}.")
    if "end" in options:
        end_re = compiled("end")
        last = next((i for i in range(first, len(lines)) if end_re.search(lines[i])), None)
        if last is None:
            raise DocsError(
                f"{marker.where}: {rel} has no line matching end={options['end']!r} after line {first + 1}."
            )
    elif "lines" in options:
        if not options["lines"].isdigit() or int(options["lines"]) < 1:
            raise DocsError(f"{marker.where}: lines={options['lines']} must be a positive count.")
        last = min(len(lines), first + int(options["lines"])) - 1
    else:
        # Up to the brace that closes the first brace opened at or after the start line.
        depth, opened, last = 0, False, None
        for i in range(first, len(lines)):
            code = re.sub(r'"(?:\\.|[^"\\])*"|//.*$', "", lines[i])
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                last = i
                break
        if last is None:
            raise DocsError(f"{marker.where}: the block that starts at {rel}:{first + 1} never closes.")
    if "before" in options:
        if not options["before"].isdigit():
            raise DocsError(f"{marker.where}: before={options['before']} must be a count of lines.")
        first = max(0, first - int(options["before"]))
    excerpt = lines[first : last + 1]
    # Common indentation, ignoring preprocessor lines (#pragma sits in column 0).
    indent = min(
        (len(line) - len(line.lstrip()) for line in excerpt if line.strip() and not line.lstrip().startswith("#")),
        default=0,
    )
    excerpt = [line[min(indent, len(line) - len(line.lstrip())) :] for line in excerpt]
    link = Path(os.path.relpath(path, marker.doc_path.parent)).as_posix()
    lang = options.get("lang", "cuda" if path.suffix in (".cu", ".cuh") else "cpp")
    where = f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"
    return f"[{rel}]({link}), {where}:\n\n```{lang}\n" + "\n".join(excerpt) + "\n```"


RENDERERS = {"results": render_results, "stages": render_stages, "value": render_value, "code": render_code}


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
            problem, compared = evaluate_claim(marker, ctx)
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
    lab = root / "experiments"
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


def write_atomically(path: Path, text: str) -> None:
    output_files.write(str(path), text)


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
        write_atomically(o.path, o.new)
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
