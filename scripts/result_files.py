"""The one reader (and writer) of the project's result files, for every script.

Two kinds of file:

- a results CSV, as common/output.cpp writes it: "# key: value" metadata lines, a header
  row, then one row per measurement. load() reads one and checks its shape;
  read_table() also asks for the columns a figure needs and at least one row; csv_text()
  writes rows in the same format (the metric tables do).
  Used by update_docs.py (tables and numbers in the docs), plot.py and plot_access.py
  (figures), diagrams.py, ncu_table.py and access_ncu.py (their CSVs).
- an Nsight Compute raw-page export (`ncu --import R.ncu-rep --csv --page raw
  --print-units base`): ncu_table() finds its table and ncu_number() reads its values.
  Used by ncu_table.py and access_ncu.py.

Every problem raises ResultFileError (or MissingFile for a results CSV that does not
exist), whose message is one sentence naming the file.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path


class ResultFileError(Exception):
    """A result file that cannot be read or used; the message names the file and the problem."""


class MissingFile(Exception):
    """A results CSV that does not exist (the docs generator warns, the others stop)."""

    def __init__(self, path: Path):
        super().__init__(str(path))
        self.path = path


# ---- results CSVs ------------------------------------------------------------------


@dataclass
class ResultFile:
    path: Path
    meta: dict[str, str]
    columns: list[str]
    rows: list[dict[str, str]]
    label: str = field(default="", compare=False)  # the path as the caller wrote it, for messages

    def __post_init__(self) -> None:
        if not self.label:
            self.label = str(self.path)

    def number(self, row: dict[str, str], column: str) -> float:
        """The cell as a float; an empty cell is NaN, anything else not a number an error."""
        text = row.get(column, "")
        if text is None or text.strip() == "":
            return math.nan
        try:
            return float(text)
        except ValueError:
            raise ResultFileError(f"{self.label}: column '{column}' holds '{text}', not a number") from None

    def peak_gbs(self) -> float:
        """The theoretical DRAM bandwidth from the '# peak_gbs:' line, checked positive."""
        if "peak_gbs" not in self.meta:
            raise ResultFileError(f"{self.label}: no '# peak_gbs:' metadata line (the theoretical DRAM bandwidth)")
        try:
            value = float(self.meta["peak_gbs"])
        except ValueError:
            raise ResultFileError(f"{self.label}: peak_gbs '{self.meta['peak_gbs']}' is not a number") from None
        if not value > 0:
            raise ResultFileError(f"{self.label}: peak_gbs must be positive, not {value}")
        return value


METADATA_RE = re.compile(r"#\s*([^:]+?)\s*:\s?(.*)$")


def load(path: Path | str) -> ResultFile:
    """A results CSV: "# key: value" lines (blank lines among them allowed), a header with
    unique, non-empty names, then rows of the header's width."""
    path = Path(path)
    if not path.is_file():
        raise MissingFile(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ResultFileError(f"{path} cannot be read as UTF-8 text ({e}).") from None
    meta: dict[str, str] = {}
    body_lines: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not body_lines and line.startswith("#"):
            m = METADATA_RE.match(line)
            if not m:
                raise ResultFileError(f"{path}:{number} is malformed: a metadata line must read '# key: value'.")
            meta[m.group(1)] = m.group(2).strip()
            continue
        if not body_lines and not line.strip():
            continue
        if line.startswith("#"):
            raise ResultFileError(f"{path}:{number} is malformed: a '#' line follows the header row.")
        body_lines.append((number, line))
    if not body_lines:
        raise ResultFileError(f"{path} is malformed: it has no header row.")
    reader = csv.reader(io.StringIO("\n".join(line for _, line in body_lines)))
    try:
        records = list(reader)
    except csv.Error as e:
        raise ResultFileError(f"{path} is malformed: {e}.") from None
    header = records[0]
    if any(not name.strip() for name in header):
        raise ResultFileError(f"{path}:{body_lines[0][0]} is malformed: the header row has an empty column name.")
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise ResultFileError(f"{path}:{body_lines[0][0]} is malformed: column {duplicates[0]!r} appears twice.")
    rows = []
    for (number, _), record in zip(body_lines[1:], records[1:]):
        if len(record) != len(header):
            raise ResultFileError(
                f"{path}:{number} is malformed: the row has {len(record)} fields, the header {len(header)}."
            )
        rows.append(dict(zip(header, record)))
    if len(records) != len(body_lines):
        raise ResultFileError(f"{path} is malformed: a quoted field spans several lines.")
    return ResultFile(path, meta, header, rows)


def read_table(path: str, required: list[str]) -> ResultFile:
    """load(), plus the columns `required` and at least one row; a missing file is a
    ResultFileError too. Messages name the file as `path` is written."""
    try:
        result = load(path)
    except MissingFile:
        raise ResultFileError(f"{path}: cannot read it (no such file)") from None
    result.label = path
    missing = [c for c in required if c not in result.columns]
    if missing:
        raise ResultFileError(f"{path}: missing column(s) {', '.join(missing)}")
    if not result.rows:
        raise ResultFileError(f"{path}: a header but no rows")
    return result


def csv_text(names: list[str], rows: list[dict[str, object]], meta: list[tuple[str, str]]) -> str:
    """The rows as a results CSV with the columns `names`, after one "# key: value" line per
    metadata pair: floats with six significant digits, NaN as an empty cell."""
    buf = io.StringIO()
    for k, v in meta:
        buf.write(f"# {k}: {v}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for r in rows:
        w.writerow(["" if isinstance(r[n], float) and math.isnan(r[n]) else
                    (f"{r[n]:.6g}" if isinstance(r[n], float) else r[n]) for n in names])
    return buf.getvalue()


# ---- Nsight Compute raw-page exports -----------------------------------------------

# Duration units ncu may print in the units line, as nanoseconds.
NCU_TIME_UNITS = {"ns": 1.0, "nsecond": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
                  "second": 1e9, "s": 1e9}


def ncu_table(path: str, error: type[Exception] = ResultFileError) -> tuple[int, list[list[str]]]:
    """The table of an ncu raw-page export: the index of its header line in the file and
    its records (header, units line, one record per kernel). ncu may print ==PROF== or
    ==WARNING== lines first; the table starts at the line beginning with "ID". Problems
    raise `error` (each script passes its own)."""
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise error(f"{path}: cannot read it ({e.strerror})") from None
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise error(f"{path}: no ncu raw-page table in it (no header line starting with \"ID\")")
    return start, list(csv.reader(io.StringIO("\n".join(lines[start:]))))


def ncu_number(text: str, where: str, error: type[Exception] = ResultFileError) -> float:
    """A value of ncu's CSV: '1,234.5', '1234.5' or 'n/a' (-> NaN). A value that is none of
    these raises `error` naming `where`."""
    t = text.strip().replace(",", "")
    if t in ("", "n/a", "N/A"):
        return math.nan
    try:
        return float(t)
    except ValueError:
        raise error(f"{where}: '{text}' is not a number") from None
