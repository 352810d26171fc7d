#!/usr/bin/env python3
"""One row per access-pattern row from Nsight Compute exports: sectors per request,
DRAM traffic and shared-memory wavefronts per instruction.

scripts/device_access_patterns.sh profiles each program once, all its rows in one
`--run-once` run (every row's launch inside an NVTX range named after its key), and
exports the report with the kernels renamed after their range:

    ncu --import R.ncu-rep --csv --page raw --print-units base --print-nvtx-rename kernel

This script sums each row's kernels (a row may launch two) and writes the table:

    scripts/access_ncu.py --out FILE.csv [--meta KEY=VALUE ...] PROGRAM=KEYS:EXPORT ...

KEYS is the program's `--list` output (the row keys, first column), EXPORT the CSV above.
Kernels outside every row's range (the poisoning before a checked run) are left out. A
row with no kernel is an error. `--metrics` prints the metric list for ncu.
Exit codes: 0 success; 2 bad usage, or an export that is malformed or lacks a row (its
program is left out of the CSV, the other programs are written).
"""

from __future__ import annotations

import math
import sys

import output_files  # scripts/output_files.py: checked first, then written whole
import result_files  # scripts/result_files.py: reads the exports, writes the CSV

# Every metric here is a count (or a duration): a row's kernels are summed.
METRICS = [
    "gpu__time_duration.sum",
    "smsp__inst_executed.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "dram__sectors_read.sum",
    "dram__sectors_write.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smsp__inst_executed_op_global_red.sum",
    "smsp__inst_executed_op_shared_atom.sum",
]

# Output columns: (name, width, decimals, what it is)
COLUMNS = [
    ("program", 22, None, "the program"),
    ("key", 20, None, "the row (its --only key)"),
    ("kernels", 3, 0, "kernels profiled in the row's range"),
    ("duration_us", 9, 1, "gpu__time_duration.sum, all the row's kernels"),
    ("ld_requests", 11, 0, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum: warp-level global load requests"),
    ("ld_sectors_per_request", 6, 2, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / ld_requests"),
    ("l2_sectors_per_request", 6, 2, "lts__t_sectors_srcunit_tex_op_read.sum / ld_requests: sectors L1 asked L2 for"),
    ("dram_sectors_per_request", 6, 2, "dram__sectors_read.sum / ld_requests"),
    ("st_sectors_per_request", 6, 2, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum / ..._op_st requests"),
    ("dram_read_mb", 9, 2, "dram__sectors_read.sum x 32 bytes / 10^6"),
    ("dram_write_mb", 9, 2, "dram__sectors_write.sum x 32 bytes / 10^6"),
    ("smem_ld_wavefronts_per_inst", 6, 2,
     "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / smsp__inst_executed_op_shared_ld.sum (ideal 1)"),
    ("smem_st_wavefronts_per_inst", 6, 2,
     "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum / smsp__inst_executed_op_shared_st.sum (ideal 1)"),
    ("smem_ld_bank_conflicts", 10, 0, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
    ("instructions", 11, 0, "smsp__inst_executed.sum: warp instructions"),
    ("global_red", 10, 0, "smsp__inst_executed_op_global_red.sum: global atomics without a return value"),
    ("shared_atom", 10, 0, "smsp__inst_executed_op_shared_atom.sum: shared-memory atomics"),
]


class AccessNcuError(Exception):
    """A malformed or incomplete input; the message names the file and the problem."""


def number(text: str, where: str) -> float:
    return result_files.ncu_number(text, where, AccessNcuError)


def read_keys(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            keys = [line.split("\t")[0].strip() for line in f if line.strip()]
    except OSError as e:
        raise AccessNcuError(f"{path}: cannot read it ({e.strerror})") from None
    if not keys:
        raise AccessNcuError(f"{path}: no row keys in it")
    return keys


def row_of(kernel: str, keys: set[str]) -> str | None:
    """The row a renamed kernel belongs to: its name is the row's key, possibly with the
    NVTX domain or a trailing '/' around it."""
    name = kernel.strip()
    if name in keys:
        return name
    for part in name.replace(":", "/").split("/"):
        if part.strip() in keys:
            return part.strip()
    return None


def read_export(path: str, keys: list[str]) -> dict[str, dict[str, float]]:
    """The summed metrics of each row's kernels, and the kernel count under 'kernels'."""
    start, rows = result_files.ncu_table(path, AccessNcuError)
    header, units = rows[0], rows[1] if len(rows) > 1 else []
    missing = [m for m in ["Kernel Name"] + METRICS if m not in header]
    if missing:
        raise AccessNcuError(f"{path}: columns missing from the export: {', '.join(missing)}")
    col = {name: i for i, name in enumerate(header)}
    wanted = set(keys)
    sums: dict[str, dict[str, float]] = {}
    for line_no, row in enumerate(rows[2:], start=start + 3):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise AccessNcuError(f"{path}:{line_no}: {len(row)} fields where the header has {len(header)}")
        key = row_of(row[col["Kernel Name"]], wanted)
        if key is None:
            continue
        total = sums.setdefault(key, {"kernels": 0.0})
        total["kernels"] += 1
        for m in METRICS:
            v = number(row[col[m]], f"{path}:{line_no} {m}")
            if m == "gpu__time_duration.sum":
                unit = units[col[m]].strip() if col[m] < len(units) else "ns"
                if unit and unit not in result_files.NCU_TIME_UNITS:
                    raise AccessNcuError(f"{path}: unexpected unit '{unit}' for {m}")
                v *= result_files.NCU_TIME_UNITS.get(unit, 1.0)
            total[m] = total.get(m, 0.0) + (0.0 if math.isnan(v) else v)
    absent = [k for k in keys if k not in sums]
    if absent:
        raise AccessNcuError(f"{path}: no kernel was found in the NVTX range of row(s) {', '.join(absent)}")
    return sums


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


def summarize(program: str, key: str, m: dict[str, float]) -> dict[str, object]:
    ld = m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    return {
        "program": program,
        "key": key,
        "kernels": int(m["kernels"]),
        "duration_us": m["gpu__time_duration.sum"] / 1e3,
        "ld_requests": ld,
        "ld_sectors_per_request": ratio(m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"], ld),
        "l2_sectors_per_request": ratio(m["lts__t_sectors_srcunit_tex_op_read.sum"], ld),
        "dram_sectors_per_request": ratio(m["dram__sectors_read.sum"], ld),
        "st_sectors_per_request": ratio(m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"],
                                        m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"]),
        "dram_read_mb": m["dram__sectors_read.sum"] * 32 / 1e6,
        "dram_write_mb": m["dram__sectors_write.sum"] * 32 / 1e6,
        "smem_ld_wavefronts_per_inst": ratio(m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"],
                                             m["smsp__inst_executed_op_shared_ld.sum"]),
        "smem_st_wavefronts_per_inst": ratio(m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"],
                                             m["smsp__inst_executed_op_shared_st.sum"]),
        "smem_ld_bank_conflicts": m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"],
        "instructions": m["smsp__inst_executed.sum"],
        "global_red": m["smsp__inst_executed_op_global_red.sum"],
        "shared_atom": m["smsp__inst_executed_op_shared_atom.sum"],
    }


def cell(value: object, decimals: int | None) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.{decimals}f}"
    return str(value)


def render(rows: list[dict[str, object]]) -> str:
    out = [" ".join(name[:w].rjust(w) if d is not None else name[:w].ljust(w) for name, w, d, _ in COLUMNS)]
    for r in rows:
        out.append(" ".join(cell(r[name], d).rjust(w) if d is not None else cell(r[name], d).ljust(w)
                            for name, w, d, _ in COLUMNS))
    out.append("")
    out += [f"  {name}: {what}" for name, _, _, what in COLUMNS]
    return "\n".join(out)


def to_csv(rows: list[dict[str, object]], meta: list[tuple[str, str]]) -> str:
    return result_files.csv_text([c[0] for c in COLUMNS], rows, meta)


def main(argv: list[str]) -> int:
    if "--metrics" in argv:
        print(",".join(METRICS))
        return 0
    p = output_files.Parser(prog="access_ncu.py",
                            description="Sectors per request and wavefronts per instruction per row.")
    p.add_argument("inputs", nargs="+", metavar="PROGRAM=KEYS:EXPORT")
    p.add_argument("--out", required=True, help="the CSV to write")
    p.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE", help="a metadata line for the CSV")
    p.add_argument("--metrics", action="store_true", help="print the metric list, comma-separated, and exit")
    args = p.parse_args(argv)
    problem = output_files.problem(args.out, "--out")
    if problem:
        print(f"access_ncu.py: {problem}", file=sys.stderr)
        return 2
    rows = []
    errors = []
    meta = []
    for m in args.meta:
        k, sep, v = m.partition("=")
        if not sep or not k:
            print(f"access_ncu.py: --meta '{m}' is not KEY=VALUE", file=sys.stderr)
            return 2
        meta.append((k, v))
    # A program whose export is broken is reported and left out; the others are written.
    for spec in args.inputs:
        try:
            program, sep, files = spec.partition("=")
            keys_path, sep2, export = files.partition(":")
            if not (sep and sep2 and program and keys_path and export):
                raise AccessNcuError(f"'{spec}' is not PROGRAM=KEYS:EXPORT")
            keys = read_keys(keys_path)
            sums = read_export(export, keys)
            rows += [summarize(program, k, sums[k]) for k in keys]
        except AccessNcuError as e:
            errors.append(str(e))
    for e in errors:
        print(f"access_ncu.py: {e}", file=sys.stderr)
    if rows:
        print(render(rows))
        output_files.write(args.out, to_csv(rows, meta))
    return 2 if errors or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
