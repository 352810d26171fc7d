"""The one reader (and writer) of the project's result files, for every script.

Two kinds of file:

- a results CSV, as common/output.cpp writes it: "# key: value" metadata lines, a header
  row, then one row per measurement. load() reads one and checks its shape;
  read_table() also asks for the columns a figure needs and at least one row; csv_text()
  writes rows in the same format (the metric tables do).
  Used by update_docs.py (tables and numbers in the docs), plot.py and plot_access.py
  (figures), diagrams.py, ncu_table.py and access_ncu.py (their CSVs).
- an Nsight Compute raw-page export (`ncu --import R.ncu-rep --csv --page raw
  --print-units base`): ncu_kernels() reads the values of a list of metrics for every
  kernel (durations in ns, bytes in bytes), through ncu_table() (the table) and
  ncu_number() (one value). ncu_main() is the command line both metric tables share
  (ncu_table.py and access_ncu.py: --out, --meta, --metrics, the printed table and the
  CSV); each passes its metric list, its columns and how it turns exports into rows.

Every problem raises ResultFileError (or MissingFile for a results CSV that does not
exist), whose message is one sentence naming the file.
"""

from __future__ import annotations

import csv
import io
import math
import re
import sys
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


def csv_text(names: list[str], rows: list[dict[str, object]], meta: list[tuple[str, str]],
             number: str = ".6g") -> str:
    """The rows as a results CSV with the columns `names`, after one "# key: value" line per
    metadata pair: floats in the format `number` (six significant digits), NaN and None as
    an empty cell."""
    buf = io.StringIO()
    for k, v in meta:
        buf.write(f"# {k}: {v}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for r in rows:
        w.writerow(["" if r[n] is None or (isinstance(r[n], float) and math.isnan(r[n])) else
                    (format(r[n], number) if isinstance(r[n], float) else r[n]) for n in names])
    return buf.getvalue()


# ---- Nsight Compute raw-page exports -----------------------------------------------

# Duration units ncu may print in the units line, as nanoseconds; byte units, as bytes.
NCU_TIME_UNITS = {"ns": 1.0, "nsecond": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
                  "second": 1e9, "s": 1e9}
NCU_BYTE_UNITS = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}


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


def ncu_kernels(path: str, metrics: list[str], error: type[Exception] = ResultFileError
                ) -> list[tuple[int, str, dict[str, float]]]:
    """(line number, kernel name, {metric: value}) for every kernel of an export, in its
    order: a duration (gpu__time_duration) in ns and a byte count in bytes, whatever unit
    the units line gives; 'n/a' as NaN. A missing metric, a short row or an unknown unit
    raises `error` naming the file."""
    start, rows = ncu_table(path, error)
    header = rows[0]
    if len(rows) < 2:
        raise error(f"{path}: the table has no units line")
    units = rows[1]
    if "Kernel Name" not in header:
        raise error(f"{path}: no 'Kernel Name' column")
    missing = [m for m in metrics if m not in header]
    if missing:
        raise error(f"{path}: metrics missing from the export: {', '.join(missing)}")
    col = {name: i for i, name in enumerate(header)}
    scales = {}
    for m in metrics:
        unit = units[col[m]].strip() if col[m] < len(units) else ""
        table = NCU_TIME_UNITS if "time_duration" in m else NCU_BYTE_UNITS if "bytes" in m else None
        if table is not None and unit and unit not in table:
            raise error(f"{path}: unexpected unit '{unit}' for {m}")
        scales[m] = table.get(unit, 1.0) if table is not None else 1.0
    kernels = []
    for line_no, row in enumerate(rows[2:], start=start + 3):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise error(f"{path}:{line_no}: {len(row)} fields where the header has {len(header)}")
        values = {m: ncu_number(row[col[m]], f"{path}:{line_no} {m}", error) * scales[m] for m in metrics}
        kernels.append((line_no, row[col["Kernel Name"]], values))
    return kernels


def text_table(columns: list[tuple[str, str, int, int | None]], rows: list[dict[str, object]],
               rule: bool = False) -> str:
    """Rows as fixed-width text: columns are (key, title, width, decimals); a column without
    decimals is text, left-aligned; a number is right-aligned, NaN as n/a. `rule` puts a line
    of dashes under the titles."""

    def cell(value: object, decimals: int | None) -> str:
        if isinstance(value, float) and math.isnan(value):
            return "n/a"
        if decimals is None or isinstance(value, str):
            return str(value)
        return f"{value:.{decimals}f}"

    def line(cells: list[str]) -> str:
        return " ".join(c.ljust(w) if d is None else c.rjust(w)
                        for c, (_, _, w, d) in zip(cells, columns)).rstrip()

    out = [line([title for _, title, _, _ in columns])]
    if rule:
        out.append("-" * len(out[0]))
    out += [line([cell(r[key], d) for key, _, _, d in columns]) for r in rows]
    return "\n".join(out)


def ncu_main(argv: list[str], prog: str, description: str, metrics: list[str], input_metavar: str,
             rows_of, render, columns: list[str], out_required: bool, keep_going: bool) -> int:
    """The command line of a metric table: `--metrics` prints the metric list for ncu; each
    input becomes rows through rows_of(input) (raising ResultFileError); render(rows) is
    printed and the rows written to --out as a results CSV with the columns `columns`, after
    the --meta KEY=VALUE lines. With keep_going, an input that fails is reported and left out
    (exit 2), the others written. --out is checked before anything is read and written
    through a new file beside it, renamed into place."""
    import output_files  # scripts/output_files.py (imported here: it imports nothing of this module)

    if "--metrics" in argv:
        print(",".join(metrics))
        return 0
    p = output_files.Parser(prog=prog, description=description)
    p.add_argument("inputs", nargs="+", metavar=input_metavar)
    p.add_argument("--out", required=out_required, help="write the rows as CSV here (with --meta lines first)")
    p.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE", help="a metadata line for the CSV")
    p.add_argument("--metrics", action="store_true", help="print the metric list, comma-separated, and exit")
    args = p.parse_args(argv)
    if args.out is not None:
        problem = output_files.problem(args.out, "--out")
        if problem:
            return output_files.refuse(prog, problem)
    meta = []
    for m in args.meta:
        k, sep, v = m.partition("=")
        if not sep or not k:
            return output_files.refuse(prog, f"--meta '{m}' is not KEY=VALUE")
        meta.append((k, v))
    rows, errors = [], []
    for spec in args.inputs:
        try:
            rows += rows_of(spec)
        except ResultFileError as e:
            if not keep_going:
                return output_files.refuse(prog, str(e))
            errors.append(str(e))
    for e in errors:
        output_files.refuse(prog, e)
    if not rows:
        return 2
    print(render(rows))
    if args.out is not None:
        try:
            output_files.write(args.out, csv_text(columns, rows, meta))
        except OSError as e:
            print(f"{prog}: cannot write '{args.out}': {e.strerror or e}.", file=sys.stderr)
            return 1
    return 2 if errors else 0
