#!/usr/bin/env python3
"""One row per access-pattern row from Nsight Compute exports: sectors per request,
DRAM traffic and shared-memory wavefronts per instruction.

scripts/device.sh access profiles each program once, all its rows in one
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


class AccessNcuError(result_files.ResultFileError):
    """A malformed or incomplete input; the message names the file and the problem."""


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
    wanted = set(keys)
    sums: dict[str, dict[str, float]] = {}
    for _, name, values in result_files.ncu_kernels(path, METRICS, AccessNcuError):
        key = row_of(name, wanted)
        if key is None:
            continue
        total = sums.setdefault(key, {"kernels": 0.0})
        total["kernels"] += 1
        for m, v in values.items():
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


def render(rows: list[dict[str, object]]) -> str:
    table = result_files.text_table([(name, name[:w], w, d) for name, w, d, _ in COLUMNS], rows)
    return table + "\n\n" + "\n".join(f"  {name}: {what}" for name, _, _, what in COLUMNS)


def rows_of(spec: str) -> list[dict[str, object]]:
    program, sep, files = spec.partition("=")
    keys_path, sep2, export = files.partition(":")
    if not (sep and sep2 and program and keys_path and export):
        raise AccessNcuError(f"'{spec}' is not PROGRAM=KEYS:EXPORT")
    keys = read_keys(keys_path)
    sums = read_export(export, keys)
    return [summarize(program, k, sums[k]) for k in keys]


def main(argv: list[str]) -> int:
    # A program whose export is broken is reported and left out; the others are written.
    return result_files.ncu_main(argv, "access_ncu.py", "Sectors per request and wavefronts per instruction per row.",
                                 METRICS, "PROGRAM=KEYS:EXPORT", rows_of, render, [c[0] for c in COLUMNS],
                                 out_required=True, keep_going=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
