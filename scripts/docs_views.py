"""The views of the docs generator (scripts/update_docs.py documents the markers).

Each view is one small function; its keyword parameters are the options its marker
takes (an option it does not name is refused), and it returns the Markdown that goes
between the markers. A result file is a pandas DataFrame of its cells as text, so a
cell prints as the CSV has it unless a format is asked for: rows are picked with masks,
a pivot is one row per value of one column, and the cells are formatted column by
column. Every problem raises DocsError, one sentence naming the marker.
"""

from __future__ import annotations

import inspect
import math
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import result_files  # scripts/result_files.py: the reader of the result CSVs

MissingFile = result_files.MissingFile
ResultFile = result_files.ResultFile


class DocsError(Exception):
    """A problem that stops the run: printed as one sentence, exit code 2."""


# ---- values and formats ------------------------------------------------------------

TITLES = {
    "n": "n", "key": "#", "stage": "stage", "block": "block", "grid": "grid", "reps": "reps",
    "median_us": "median (us)", "min_us": "min (us)", "max_us": "max (us)", "gbs": "GB/s",
    "pct_peak": "% of peak", "speedup_vs_01": "vs 01", "vs_previous": "vs previous", "vs_cub": "vs CUB",
    "abs_error": "abs. error", "rel_error": "rel. error", "tolerance": "tolerance", "check": "check",
    "deterministic": "deterministic", "single_launch": "one launch", "book_v100_ms": "book V100 (ms)",
    "variant": "variant", "element": "element", "accumulator": "accumulator",
    "bytes_per_element": "bytes per element", "gmacs": "GMAC/s", "vs_fp32": "vs FP32", "rel_bound": "rel. bound",
    "error_depth": "error depth", "build": "build", "limit": "limit", "registers": "registers",
    "local_bytes": "spill (bytes)", "shared_bytes": "shared (bytes)", "blocks_per_sm_api": "blocks per SM",
    "limited_by": "limited by", "occupancy_pct": "occupancy (%)", "gflops": "GFLOP/s", "vs_plain": "vs plain",
    "worst_error_ratio": "error / tolerance", "per_sm": "blocks per SM", "warps_per_sm": "warps per SM",
    "api_max_per_sm": "API max per SM", "mark": "mark",
}

FORMATS = {
    "n": "pow2", "median_us": ".1f", "min_us": ".1f", "max_us": ".1f", "gbs": ".0f", "pct_peak": ".1f",
    "speedup_vs_01": ".1f", "vs_previous": ".2f", "vs_cub": ".2f", "abs_error": ".1e", "rel_error": ".1e",
    "tolerance": ".1e", "book_v100_ms": ".3f", "result": ".9g", "reference": ".9g", "gmacs": ".0f",
    "vs_fp32": ".2f", "rel_bound": ".1e", "occupancy_pct": ".1f", "gflops": ".0f", "vs_plain": ".2f",
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


def markdown_table(headers: list[str], body: list[list[str]]) -> str:
    """A Markdown table; a column whose cells all look like numbers is right-aligned."""
    aligns = []
    for i in range(len(headers)):
        cells = [row[i] for row in body]
        numeric = bool(cells) and all(looks_numeric(c) for c in cells) and any(c != "-" for c in cells)
        aligns.append("---:" if numeric else ":---")
    lines = ["| " + " | ".join(markdown_cell(h) for h in headers) + " |", "|" + "|".join(aligns) + "|"]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


# ---- markers, their options and the result files they name --------------------------


@dataclass
class Marker:
    kind: str  # results, stages, code, value or claim
    args: str
    doc: Path  # the Markdown file, as messages name it
    line: int
    doc_path: Path  # the same file on disk, for relative links

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    def describe(self) -> str:
        return f"<!-- {self.kind}: {self.args} -->" if self.args else f"<!-- {self.kind} -->"

    def split(self) -> tuple[list[str], dict[str, str]]:
        """The marker's words (shell quoting) as positional words and NAME=VALUE options."""
        try:
            tokens = shlex.split(self.args)
        except ValueError as e:
            raise DocsError(f"{self.where}: the marker's options cannot be read ({e}).") from None
        positional, options = [], {}
        for token in tokens:
            name, eq, value = token.partition("=")
            if not eq:
                positional.append(token)
            elif name in options:
                raise DocsError(f"{self.where}: option {name!r} is given twice.")
            else:
                options[name] = value
        return positional, options


class Context:
    """The repository, its results folder and the result files read so far."""

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
            try:
                self._cache[path] = result_files.load(path)
            except result_files.ResultFileError as e:
                raise DocsError(str(e)) from None
        return self._cache[path]


@dataclass
class Source:
    """What a view is given: the marker, the run's context, the result file and its cells."""

    marker: Marker
    ctx: Context
    data: ResultFile
    frame: pd.DataFrame

    @property
    def where(self) -> str:
        return self.marker.where

    @property
    def name(self) -> str:
        return self.data.path.name

    def require(self, *columns: str) -> None:
        for column in columns:
            if column not in self.data.columns:
                raise DocsError(
                    f"{self.where}: {self.name} has no column {column!r} (it has: {', '.join(self.data.columns)})."
                )

    def note(self) -> str:
        return source_note(self.data, self.marker.doc_path, self.ctx.root)


def source_of(marker: Marker, ctx: Context, name: str) -> Source:
    data = ctx.load(marker, name)
    return Source(marker, ctx, data, pd.DataFrame(data.rows, columns=data.columns, dtype=object))


def parse_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def parse_pairs(where: str, value: str, option: str) -> list[tuple[str, str]]:
    pairs = []
    for item in parse_list(value):
        name, colon, rest = item.partition(":")
        if not colon:
            raise DocsError(f"{where}: {option}= item {item!r} must read COLUMN:VALUE.")
        pairs.append((name.strip(), rest))
    return pairs


def compiled(where: str, text: str, option: str) -> re.Pattern:
    try:
        return re.compile(text)
    except re.error as e:
        raise DocsError(f"{where}: {option}={text} is not a regular expression ({e}).") from None


def equal(series: pd.Series, wanted: str) -> pd.Series:
    """A mask: the cells that equal `wanted` (as numbers when both are numbers, 2^k allowed)."""
    return series.map(lambda cell: same_value(cell, wanted)).astype(bool)


def filtered(src: Source, where: str = "", match: str = "") -> pd.DataFrame:
    """The rows whose column C equals V for every where=C:V and contains REGEX for every match=C:REGEX."""
    df = src.frame
    for column, value in parse_pairs(src.where, where, "where"):
        src.require(column)
        df = df[equal(df[column], value)]
    for column, pattern in parse_pairs(src.where, match, "match"):
        src.require(column)
        regex = compiled(src.where, pattern, f"match={column}:")
        df = df[df[column].map(lambda cell: regex.search(cell) is not None).astype(bool)]
    return df


def picked(src: Source, df: pd.DataFrame, column: str, spec: str, option: str) -> pd.DataFrame:
    """The rows whose `column` is in the list `spec`, in the list's order (a range A-B of numbers
    takes every numeric key from A to B), or all of them."""
    if spec.strip() == "all":
        return df
    chosen: list = []
    for item in parse_list(spec):
        span = re.fullmatch(r"(\d+)-(\d+)", item)
        if span:
            lo, hi = int(span.group(1)), int(span.group(2))
            mask = df[column].map(lambda c: bool(re.fullmatch(r"\d+", c.strip())) and lo <= int(c) <= hi)
        else:
            mask = equal(df[column], item)
        found = list(df.index[mask.astype(bool)])
        if not found:
            raise DocsError(f"{src.where}: {src.name} has no row with {column} = {item!r} ({option}=).")
        chosen += [i for i in found if i not in chosen]
    return df.loc[chosen]


def parse_columns(where: str, spec: str | None) -> list[tuple[str, str | None]]:
    if not spec:
        raise DocsError(f"{where}: a table needs columns=COLUMN[:TITLE],...")
    out = []
    for item in parse_list(spec):
        name, _, title = item.partition(":")
        out.append((name.strip(), title.strip() or None))
    return out


def parse_formats(src: Source, spec: str) -> dict[str, str]:
    formats = {}
    for column, fmt in parse_pairs(src.where, spec, "fmt"):
        src.require(column)
        formats[column] = fmt.strip()
    return formats


def format_n(value: str) -> str:
    return value if parse_number(value) is None else format_value(value, "pow2", "n", "")


def source_note(data: ResultFile, doc: Path, root: Path) -> str:
    """The line under a table naming its file, device, driver, commit, date, n and L2 flush."""
    link = os.path.relpath(data.path, doc.parent)
    try:
        shown = data.path.relative_to(root).as_posix()
    except ValueError:
        shown = data.path.name
    meta = data.meta
    parts = [("driver " if k == "driver" else "commit " if k == "commit" else "") + meta[k]
             for k in ("device", "driver", "commit", "date") if meta.get(k)]
    if meta.get("n") and parse_number(meta["n"]) is not None:
        parts.append(f"n = {format_n(meta['n'])}")
    flushed, mode = meta.get("l2_flushed"), meta.get("l2_flush")
    if flushed == "no":
        parts.append("L2 not flushed")
    elif flushed == "yes" or mode in ("read", "write"):
        parts.append(f"L2 flushed ({mode}) before each repetition" if mode in ("read", "write")
                     else "L2 flushed before each repetition")
    details = ", ".join(parts)
    return f"*Source: [{shown}]({Path(link).as_posix()})" + (f" ({details})" if details else "") + ".*"


def call(view, where: str, /, *args, also: tuple[str, ...] = (), **options):
    """view(*args, **options), an option the view does not take (nor one of `also`, taken
    before the call) refused by name."""
    allowed = [name for name, p in inspect.signature(view).parameters.items() if p.kind == p.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        shown = ", ".join(sorted(allowed + list(also)))
        raise DocsError(f"{where}: unknown option {unknown[0]!r} (allowed here: {shown}).")
    return view(*args, **options)


# ---- the views of results markers ------------------------------------------------------


def table(src: Source, *, columns=None, rows=None, by="key", where="", match="", fmt="") -> str:
    """One Markdown row per CSV row."""
    df = filtered(src, where, match)
    if rows is not None or by != "key":
        src.require(by)
    if by in src.data.columns:
        df = picked(src, df, by, "all" if rows is None else rows, "rows")
    if df.empty:
        raise DocsError(f"{src.where}: no row of {src.name} is selected.")
    wanted = parse_columns(src.where, columns)
    src.require(*(name for name, _ in wanted))
    formats = parse_formats(src, fmt)
    cells = [df[name].map(lambda t, name=name: format_value(t, formats.get(name), name, src.where)).tolist()
             for name, _ in wanted]
    headers = [title or TITLES.get(name, name) for name, title in wanted]
    return markdown_table(headers, [list(r) for r in zip(*cells)]) + "\n\n" + src.note()


def pivot(src: Source, *, row="n", col="key", columns=None, rows="all", where="", match="", fmt="") -> str:
    """One row per value of `row`, one column per (value of `col`, measured column) pair."""
    specs = []
    for name, title in parse_columns(src.where, columns):
        if "." not in name:
            raise DocsError(f"{src.where}: pivot column {name!r} must read VALUE.COLUMN (13.median_us).")
        value, column = name.rsplit(".", 1)
        specs.append((value, column, title or f"{value} {TITLES.get(column, column)}"))
    return pivoted(src, row, col, specs, rows, where, match, fmt)


def sweep(src: Source, *, stages="", sizes="all", where="", match="", fmt="") -> str:
    """A pivot of sweep.csv: for each stage its time and (but CUB) its ratio to CUB, at each n."""
    keys = parse_list(stages)
    if not keys:
        raise DocsError(f"{src.where}: view=sweep needs stages=KEY,...")
    specs = []
    for s in keys:
        label = "CUB" if s == "cub" else s
        specs.append((s, "median_us", f"{label} (us)"))
        if s != "cub":
            specs.append((s, "vs_cub", f"{label} vs CUB"))
    return pivoted(src, "n", "key", specs, sizes, where, match, fmt)


def key_of(text: str) -> object:
    """What same_value compares: the number, or the stripped text."""
    number = parse_number(text)
    return text.strip() if number is None else number


def pivoted(src: Source, row: str, col: str, specs, rows: str, where: str, match: str, fmt: str) -> str:
    src.require(row, col)
    for value, column, _ in specs:
        src.require(column)
        if not equal(src.frame[col], value).any():
            raise DocsError(f"{src.where}: {src.name} has no row with {col} = {value!r}.")
    formats = parse_formats(src, fmt)
    df = filtered(src, where, match).assign(_row=lambda d: d[row].map(key_of), _col=lambda d: d[col].map(key_of))
    keys = df.drop_duplicates("_row")[[row, "_row"]]
    if rows.strip() != "all":
        wanted = [key_of(w) for w in parse_list(rows)]
        for w, shown in zip(wanted, parse_list(rows)):
            if w not in set(keys["_row"]):
                raise DocsError(f"{src.where}: {src.name} has no row with {row} = {shown!r}.")
        keys = pd.concat([keys[keys["_row"] == w] for w in wanted]) if wanted else keys.iloc[:0]
    if keys.empty:
        raise DocsError(f"{src.where}: no row of {src.name} is selected.")
    body = [[format_value(text, formats.get(row), row, src.where)] for text in keys[row]]
    for value, column, _ in specs:
        cells = df[df["_col"] == key_of(value)]
        counts = cells["_row"].value_counts()
        for k, text in zip(keys["_row"], keys[row]):
            if counts.get(k, 0) > 1:
                raise DocsError(f"{src.where}: {src.name} has {counts[k]} rows with {row} = {text} and "
                                f"{col} = {value}; narrow them with where=.")
        by_row = dict(zip(cells["_row"], cells[column]))
        for line, k in zip(body, keys["_row"]):
            line.append(format_value(by_row[k], formats.get(column), column, src.where) if k in by_row else "-")
    headers = [TITLES.get(row, row)] + [title for _, _, title in specs]
    return markdown_table(headers, body) + "\n\n" + src.note()


def running(src: Source, *, upto=None) -> str:
    """The ladder so far, one row per stage: time, GB/s, the step speedup (vs_previous) and the
    cumulative one (speedup_vs_01); upto=NN stops at stage NN; the stages registered for the
    document holding the marker are in bold."""
    src.require("key", "kind", "stage", "median_us", "gbs", "vs_previous", "speedup_vs_01")
    df = src.frame
    df = df[(df["kind"].str.strip() == "stage") & df["key"].str.strip().str.fullmatch(r"\d+")]
    if df.empty:
        raise DocsError(f"{src.where}: {src.name} has no stage rows (kind = stage) for view=running.")
    numbers = df["key"].astype(int)
    if upto is not None:
        upto = upto.strip()
        if not re.fullmatch(r"\d+", upto):
            raise DocsError(f"{src.where}: upto={upto} must be a stage number such as 05.")
        if not (numbers == int(upto)).any():
            raise DocsError(f"{src.where}: upto={upto} names no stage row of {src.name} "
                            f"(it has: {', '.join(df['key'])}).")
        df, numbers = df[numbers <= int(upto)], numbers[numbers <= int(upto)]
    doc = Path(os.path.relpath(src.marker.doc_path.resolve(), src.ctx.root.resolve())).as_posix()
    own = {int(s.key) for s in read_registry(src.ctx.root) if s.kind == "stage" and s.chapter == doc}

    def speedup(column: str) -> pd.Series:
        return df[column].map(lambda t: (lambda s: s if s == "-" else s + "x")(format_value(t, ".2f", column, "")))

    cells = zip(df["key"], df["stage"],
                df["median_us"].map(lambda t: format_value(t, FORMATS["median_us"], "median_us", src.where)),
                df["gbs"].map(lambda t: format_value(t, FORMATS["gbs"], "gbs", src.where)),
                speedup("vs_previous"), speedup("speedup_vs_01"))
    lines = ["| # | stage | time (us) | GB/s | step speedup | cumulative speedup |",
             "|:---|:---|---:|---:|---:|---:|"]
    for number, line in zip(numbers, cells):
        lines.append("| " + " | ".join(f"**{markdown_cell(c)}**" if number in own else markdown_cell(c)
                                       for c in line) + " |")
    legend = ("*Step speedup: the previous stage's time over this one's; cumulative: stage 01's time over this one's"
              + ("; in bold, this chapter's stages" if own & set(numbers) else "") + ".*")
    return "\n".join(lines) + "\n\n" + legend + "\n\n" + src.note()


# The peers' result files beside a sweep (scripts/device.sh peers writes them) and the
# short names the peers view gives their rows.
PEER_FILES = ("peers_cub_modes.csv", "peers_torch_cupy.csv")
PEER_TITLES = {
    "cub": "CUB 3.0", "cub_two_phase": "CUB 3.5", "cub_run_to_run": "CUB 3.5 run_to_run",
    "cub_not_guaranteed": "CUB 3.5 not_guaranteed", "cub_gpu_to_gpu": "CUB 3.5 gpu_to_gpu",
    "torch_sum": "torch", "cupy_sum": "CuPy",
}


def peers(src: Source, *, stages="", sizes="", peers="cub,cub_two_phase,cub_gpu_to_gpu,torch_sum,cupy_sum") -> str:
    """The fastest of `stages` at each n of the sweep against every peer and the ceiling.

    The stages and CUB 3.0 come from the sweep (one run); the other peers and the ceiling
    (the fastest streaming kernel of peers_ceiling.csv) from their own runs on the same
    GPU. Ratios are the peer's time over the stage's: above 1, the stage is faster."""
    keys, peer_keys = parse_list(stages), parse_list(peers)
    if not keys:
        raise DocsError(f"{src.where}: view=peers needs stages=KEY,...")
    name = src.marker.split()[0][0]
    folder = name[: name.rfind("/") + 1]
    files = [src] + [source_of(src.marker, src.ctx, folder + f) for f in PEER_FILES]
    ceiling = source_of(src.marker, src.ctx, folder + "peers_ceiling.csv")

    def median(f: Source, n: str, key: str) -> float | None:
        rows = f.frame[equal(f.frame["n"], n) & (f.frame["key"] == key)]
        return f.data.number(rows.iloc[0].to_dict(), "median_us") if not rows.empty else None

    def peer_time(n: str, key: str) -> float:
        for f in files:
            t = median(f, n, key)
            if t is not None:
                return t
        raise DocsError(f"{src.where}: no result file has peer {key!r} at n = {n}.")

    headers = ["n", "fastest stage", "us"] + [PEER_TITLES.get(k, k) for k in peer_keys]
    headers += ["fastest peer vs stage", "ceiling (us)", "stage vs ceiling"]
    body = []
    for n in parse_list(sizes) or sorted(set(src.frame["n"]), key=float):
        times = [(t, k) for t, k in ((median(src, n, k), k) for k in keys) if t is not None]
        if not times:
            raise DocsError(f"{src.where}: {src.name} has none of stages {keys} at n = {n}.")
        best, key = min(times)
        peer_times = [peer_time(n, k) for k in peer_keys]
        walls = ceiling.frame[equal(ceiling.frame["n"], n)]["median_us"]
        if walls.empty:
            raise DocsError(f"{src.where}: peers_ceiling.csv has no row at n = {n}.")
        wall = min(ceiling.data.number({"median_us": w}, "median_us") for w in walls)
        body.append([format_n(n), key, f"{best:.1f}"] + [f"{t:.1f} ({t / best:.2f})" for t in peer_times]
                    + [f"{min(peer_times) / best:.2f}", f"{wall:.1f}", f"{wall / best:.2f}"])
    return markdown_table(headers, body) + "\n\n" + "\n".join(f.note() for f in files + [ceiling])


def text(marker: Marker, ctx: Context, name: str, *, lines=None, match=None) -> str:
    """The file's lines in a fenced block: lines=A-B (1-based), match=REGEX."""
    path = ctx.result_path(marker, name)
    if not path.is_file():
        raise MissingFile(path)
    try:
        shown_lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise DocsError(f"{path} cannot be read as UTF-8 text ({e}).") from None
    if lines is not None:
        m = re.fullmatch(r"(\d+)-(\d*)", lines)
        if not m or int(m.group(1)) < 1:
            raise DocsError(f"{marker.where}: lines={lines} must read A-B or A- (1-based).")
        shown_lines = shown_lines[int(m.group(1)) - 1: int(m.group(2)) if m.group(2) else len(shown_lines)]
    if match is not None:
        regex = compiled(marker.where, match, "match")
        shown_lines = [line for line in shown_lines if regex.search(line)]
    if not shown_lines:
        raise DocsError(f"{marker.where}: no line of {path.name} is selected.")
    fence = "````" if any(line.startswith("```") for line in shown_lines) else "```"
    link = Path(os.path.relpath(path, marker.doc_path.parent)).as_posix()
    try:
        shown = path.relative_to(ctx.root).as_posix()
    except ValueError:
        shown = path.name
    return f"{fence}text\n" + "\n".join(shown_lines) + f"\n{fence}\n\n*Source: [{shown}]({link}).*"


VIEWS = {"table": table, "pivot": pivot, "sweep": sweep, "running": running, "peers": peers}


def render_results(marker: Marker, ctx: Context) -> str:
    positional, options = marker.split()
    if len(positional) != 1:
        raise DocsError(f"{marker.where}: a results marker names exactly one file, then OPTION=VALUE items.")
    view = options.pop("view", "table")
    if view == "text":
        return call(text, marker.where, marker, ctx, positional[0], also=("view",), **options)
    if view not in VIEWS:
        raise DocsError(f"{marker.where}: unknown view {view!r} (allowed: table, pivot, sweep, running, peers, text).")
    return call(VIEWS[view], marker.where, source_of(marker, ctx, positional[0]), also=("view",), **options)


# ---- values, the stage list and code excerpts ---------------------------------------------


def render_value(marker: Marker, ctx: Context) -> str:
    """One number in a sentence: C=V filters that select one row and col=C [fmt=SPEC], or meta=KEY."""
    positional, options = marker.split()
    if len(positional) != 1:
        raise DocsError(f"{marker.where}: a value marker names exactly one file, then COLUMN=VALUE filters.")
    src = source_of(marker, ctx, positional[0])
    if "meta" in options:
        if set(options) != {"meta"}:
            raise DocsError(f"{marker.where}: meta= takes no other option.")
        key = options["meta"]
        if key not in src.data.meta:
            raise DocsError(f"{marker.where}: {src.name} has no metadata {key!r} (it has: {', '.join(src.data.meta)}).")
        return markdown_cell(src.data.meta[key])
    column, spec = options.pop("col", None), options.pop("fmt", None)
    if column is None:
        raise DocsError(f"{marker.where}: a value marker needs col=COLUMN (or meta=KEY).")
    src.require(column)
    df = src.frame
    for name, wanted in options.items():
        src.require(name)
        df = df[equal(df[name], wanted)]
        if df.empty:
            raise DocsError(f"{marker.where}: {src.name} has no row with {name} = {wanted!r} (and the other filters).")
    if len(df) != 1:
        raise DocsError(f"{marker.where}: the filters select {len(df)} rows of {src.name}; they must select one.")
    return markdown_cell(format_value(df[column].iloc[0], spec, column, marker.where))


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
REGISTRY_SNAPSHOT = Path("results") / "registry.csv"
REGISTRY_COMMAND = "build/reduction/reduce --list --format csv > results/registry.csv"


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
    return [RegisteredStage(r["key"], r["kind"], r["title"], r["source"], r["chapter"]) for r in data.rows]


def stages(marker: Marker, ctx: Context, *, kind="all") -> str:
    """The registered stages, with links to their source files and chapters."""
    if kind not in ("all", "stage", "baseline"):
        raise DocsError(f"{marker.where}: kind={kind} is not one of all, stage, baseline.")
    chosen = [s for s in read_registry(ctx.root) if kind == "all" or s.kind == kind]
    if not chosen:
        raise DocsError(f"{marker.where}: the registry has no {kind} entries.")

    def link(path: str) -> str:
        return f"[{path}]({Path(os.path.relpath(ctx.root / path, marker.doc_path.parent)).as_posix()})"

    body = [[s.key, s.title, link(s.source), link(s.chapter)] for s in chosen]
    registry = Path(os.path.relpath(ctx.root / "reduction" / "stages.cpp", marker.doc_path.parent)).as_posix()
    note = f"*Generated from the registry, [reduction/stages.cpp]({registry}).*"
    return markdown_table(["#", "stage", "source", "chapter"], body) + "\n\n" + note


def render_stages(marker: Marker, ctx: Context) -> str:
    positional, options = marker.split()
    if positional:
        raise DocsError(f"{marker.where}: a stages marker takes only kind=all|stage|baseline.")
    return call(stages, marker.where, marker, ctx, **options)


def code(marker: Marker, ctx: Context, rel: str, *, start=None, end=None, lines=None, before=None, lang=None) -> str:
    """An excerpt of a source file from the line matching start= to the one matching end=, after
    lines=N, or to the brace that closes the first block opened from the start line."""
    if start is None:
        raise DocsError(f"{marker.where}: a code marker names one source file and start=REGEX.")
    if end is not None and lines is not None:
        raise DocsError(f"{marker.where}: give end=REGEX or lines=N, not both.")
    path = (ctx.root / rel).resolve()
    if not path.is_file():
        raise DocsError(f"{marker.where}: the source file {rel} does not exist.")
    text_lines = path.read_text(encoding="utf-8").splitlines()
    start_re = compiled(marker.where, start, "start")
    first = next((i for i, line in enumerate(text_lines) if start_re.search(line)), None)
    if first is None:
        raise DocsError(f"{marker.where}: {rel} has no line matching start={start!r}.")
    if end is not None:
        end_re = compiled(marker.where, end, "end")
        last = next((i for i in range(first, len(text_lines)) if end_re.search(text_lines[i])), None)
        if last is None:
            raise DocsError(f"{marker.where}: {rel} has no line matching end={end!r} after line {first + 1}.")
    elif lines is not None:
        if not lines.isdigit() or int(lines) < 1:
            raise DocsError(f"{marker.where}: lines={lines} must be a positive count.")
        last = min(len(text_lines), first + int(lines)) - 1
    else:
        # Up to the brace that closes the first brace opened at or after the start line.
        depth, opened, last = 0, False, None
        for i in range(first, len(text_lines)):
            stripped = re.sub(r'"(?:\\.|[^"\\])*"|//.*$', "", text_lines[i])
            depth += stripped.count("{") - stripped.count("}")
            opened = opened or "{" in stripped
            if opened and depth <= 0:
                last = i
                break
        if last is None:
            raise DocsError(f"{marker.where}: the block that starts at {rel}:{first + 1} never closes.")
    if before is not None:
        if not before.isdigit():
            raise DocsError(f"{marker.where}: before={before} must be a count of lines.")
        first = max(0, first - int(before))
    excerpt = text_lines[first: last + 1]
    # Common indentation, ignoring preprocessor lines (#pragma sits in column 0).
    indent = min((len(line) - len(line.lstrip()) for line in excerpt
                  if line.strip() and not line.lstrip().startswith("#")), default=0)
    excerpt = [line[min(indent, len(line) - len(line.lstrip())):] for line in excerpt]
    link = Path(os.path.relpath(path, marker.doc_path.parent)).as_posix()
    lang = lang or ("cuda" if path.suffix in (".cu", ".cuh") else "cpp")
    where = f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"
    return f"[{rel}]({link}), {where}:\n\n```{lang}\n" + "\n".join(excerpt) + "\n```"


def render_code(marker: Marker, ctx: Context) -> str:
    positional, options = marker.split()
    if len(positional) != 1 or "start" not in options:
        raise DocsError(f"{marker.where}: a code marker names one source file and start=REGEX.")
    return call(code, marker.where, marker, ctx, positional[0], **options)


RENDERERS = {"results": render_results, "stages": render_stages, "value": render_value, "code": render_code}
