#!/usr/bin/env python3
"""Turn Nsight Compute raw-page CSV exports into one row per stage.

scripts/profile.sh runs `ncu` on each stage and exports every profiled kernel's
metrics with `ncu --import R.ncu-rep --csv --page raw --print-units base`. This
module reads those exports, sums a stage's kernels into one row, prints the table
and writes it as CSV with the run's metadata:

    scripts/ncu_table.py --out DIR/ncu_metrics.csv --meta key=value ... \\
        ITEM=DIR/ITEM.csv [ITEM=DIR/ITEM.csv ...]

How several kernels of one stage are combined (the multi-pass stages launch one
kernel per level):
  - time, DRAM bytes and bank conflicts are summed;
  - the percentages (DRAM throughput, achieved occupancy, branch uniformity, the
    long-scoreboard stall share) are averaged with each kernel's time as its weight;
  - registers per thread is the largest of the kernels;
  - theoretical occupancy and its limiter come from the longest kernel, whose name
    is shown.
The --out file is checked before anything is read and written through a new file
beside it, renamed into place.
Exit codes: 0 success, 2 bad usage (an --out that cannot be written included) or a
malformed export; every error is one sentence on stderr.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field

import result_files  # scripts/result_files.py: reads the exports, writes the CSV


class NcuTableError(result_files.ResultFileError):
    """A malformed or incomplete ncu export; the message names the file and the problem."""


# (metric, unit ncu reports with --print-units base, what it is)
METRICS = [
    ("gpu__time_duration.sum", "ns", "kernel duration"),
    ("dram__bytes_read.sum", "byte", "DRAM bytes read"),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "DRAM throughput, % of peak"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "%", "achieved occupancy"),
    ("launch__registers_per_thread", "register/thread", "registers per thread"),
    ("sm__maximum_warps_per_active_cycle_pct", "%", "theoretical occupancy"),
    ("launch__occupancy_limit_blocks", "block", "blocks per SM allowed by the block-count limit"),
    ("launch__occupancy_limit_registers", "block", "blocks per SM allowed by registers"),
    ("launch__occupancy_limit_shared_mem", "block", "blocks per SM allowed by shared memory"),
    ("launch__occupancy_limit_warps", "block", "blocks per SM allowed by the warp limit"),
    ("smsp__sass_average_branch_targets_threads_uniform.pct", "%", "branch uniformity"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "", "shared-memory load bank conflicts"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "", "shared-memory store bank conflicts"),
    ("smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", "%", "long-scoreboard stall share"),
    ("launch__grid_size", "", "grid size"),
    ("launch__block_size", "", "block size"),
]
METRIC_NAMES = [m[0] for m in METRICS]

LIMITERS = {
    "launch__occupancy_limit_blocks": "blocks",
    "launch__occupancy_limit_registers": "registers",
    "launch__occupancy_limit_shared_mem": "shared",
    "launch__occupancy_limit_warps": "warps",
}

# Output columns: (csv name, table header, width, decimals, nvprof metric it replaces, ncu source)
COLUMNS = [
    ("item", "stage", 20, None, "", ""),
    ("kernels", "kern", 4, 0, "", "number of kernels profiled"),
    ("duration_us", "time-us", 9, 1, "gpu_time (nvprof --print-gpu-trace Duration)", "gpu__time_duration.sum"),
    ("dram_read_mb", "DRAM-MB", 8, 1, "dram_read_bytes", "dram__bytes_read.sum / 10^6"),
    ("dram_pct_peak", "DRAM-%", 6, 1, "dram_utilization (as a %, not a 0-10 level)",
     "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("achieved_occupancy_pct", "ach-occ", 7, 1, "achieved_occupancy (x 100)",
     "sm__warps_active.avg.pct_of_peak_sustained_active"),
    ("registers", "regs", 4, 0, "Registers Per Thread (nvprof --print-gpu-trace)", "launch__registers_per_thread"),
    ("theoretical_occupancy_pct", "th-occ", 6, 1, "none (the occupancy calculator)",
     "sm__maximum_warps_per_active_cycle_pct"),
    ("occupancy_limiter", "limiter", 15, None, "none", "the smallest of launch__occupancy_limit_*"),
    ("branch_uniformity_pct", "branch-%", 8, 1, "branch_efficiency",
     "smsp__sass_average_branch_targets_threads_uniform.pct"),
    ("smem_ld_conflicts", "bank-ld", 9, 0, "shared_ld_bank_conflict",
     "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
    ("smem_st_conflicts", "bank-st", 9, 0, "shared_st_bank_conflict",
     "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
    ("long_scoreboard_pct", "lsb-%", 6, 1, "stall_memory_dependency",
     "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct"),
    ("main_kernel", "longest kernel", 0, None, "", "Kernel Name of the longest kernel"),
]

@dataclass
class Kernel:
    name: str
    values: dict[str, float] = field(default_factory=dict)


def read_export(path: str) -> list[Kernel]:
    """The kernels of one `ncu --csv --page raw` export, their values in ns and bytes."""
    kernels = [Kernel(name, values) for _, name, values in result_files.ncu_kernels(path, METRIC_NAMES, NcuTableError)]
    if not kernels:
        raise NcuTableError(f"{path}: the export lists no kernels (was the NVTX range or kernel filter right?)")
    return kernels


def short_kernel_name(name: str) -> str:
    """'void ns::kernel<float, 512>(const float *, ...)' -> 'kernel<float, 512>'."""
    n = name.strip()
    if n.startswith("void "):
        n = n[5:]
    # ncu writes an anonymous namespace as "(anonymous namespace)", "<unnamed>" or,
    # at the start of a name, "unnamed>".
    n = re.sub(r"^<?unnamed>::", "", n.replace("(anonymous namespace)::", ""))
    n = n.replace("<<unnamed>::", "<").replace("<unnamed>::", "<")
    depth = 0
    for i, ch in enumerate(n):  # cut the parameter list: the first '(' outside template brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            n = n[:i]
            break
    depth = 0
    cut = 0
    for i, ch in enumerate(n):  # drop namespaces outside template brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == ":" and depth == 0:
            cut = i + 1
    return n[cut:]


def limiter_of(values: dict[str, float]) -> str:
    limits = {LIMITERS[m]: values[m] for m in LIMITERS if not math.isnan(values[m])}
    if not limits:
        return "n/a"
    low = min(limits.values())
    return "+".join(sorted(k for k, v in limits.items() if v == low))


def weighted(kernels: list[Kernel], metric: str) -> float:
    pairs = [(k.values["gpu__time_duration.sum"], k.values[metric]) for k in kernels
             if not math.isnan(k.values[metric]) and not math.isnan(k.values["gpu__time_duration.sum"])]
    total = sum(w for w, _ in pairs)
    if not pairs or total <= 0:
        return math.nan
    return sum(w * v for w, v in pairs) / total


def total(kernels: list[Kernel], metric: str) -> float:
    vals = [k.values[metric] for k in kernels if not math.isnan(k.values[metric])]
    return sum(vals) if vals else math.nan


def summarize(item: str, kernels: list[Kernel]) -> dict[str, object]:
    """One row for a stage from its kernels (see the module comment for the rules)."""
    longest = max(kernels, key=lambda k: -1.0 if math.isnan(k.values["gpu__time_duration.sum"])
                  else k.values["gpu__time_duration.sum"])
    regs = [k.values["launch__registers_per_thread"] for k in kernels
            if not math.isnan(k.values["launch__registers_per_thread"])]
    return {
        "item": item,
        "kernels": len(kernels),
        "duration_us": total(kernels, "gpu__time_duration.sum") / 1e3,
        "dram_read_mb": total(kernels, "dram__bytes_read.sum") / 1e6,
        "dram_pct_peak": weighted(kernels, "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        "achieved_occupancy_pct": weighted(kernels, "sm__warps_active.avg.pct_of_peak_sustained_active"),
        "registers": max(regs) if regs else math.nan,
        "theoretical_occupancy_pct": longest.values["sm__maximum_warps_per_active_cycle_pct"],
        "occupancy_limiter": limiter_of(longest.values),
        "branch_uniformity_pct": weighted(kernels, "smsp__sass_average_branch_targets_threads_uniform.pct"),
        "smem_ld_conflicts": total(kernels, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
        "smem_st_conflicts": total(kernels, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
        "long_scoreboard_pct": weighted(kernels, "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct"),
        "main_kernel": short_kernel_name(longest.name),
    }


def render_table(rows: list[dict[str, object]]) -> str:
    out = [result_files.text_table([(name, title, width, decimals) for name, title, width, decimals, _, _ in COLUMNS],
                                   rows, rule=True)]
    out.append("")
    out.append("What each column is, and the nvprof metric it replaces:")
    for name, title, _, _, nvprof, source in COLUMNS[1:]:
        out.append(f"  {title:<14} {source}" + (f"  [nvprof: {nvprof}]" if nvprof else ""))
    out.append("Several kernels of one stage: times, bytes and conflicts summed; percentages weighted by time;")
    out.append("registers the largest; theoretical occupancy and limiter from the longest kernel.")
    return "\n".join(out)


def to_csv(rows: list[dict[str, object]], meta: list[tuple[str, str]]) -> str:
    return result_files.csv_text([c[0] for c in COLUMNS], rows, meta)


def rows_of(spec: str) -> list[dict[str, object]]:
    item, sep, path = spec.partition("=")
    if not sep or not item or not path:
        raise NcuTableError(f"'{spec}' is not ITEM=FILE")
    return [summarize(item, read_export(path))]


def main(argv: list[str]) -> int:
    return result_files.ncu_main(argv, "ncu_table.py", "One row per stage from ncu raw-page CSV exports.",
                                 METRIC_NAMES, "ITEM=FILE", rows_of, render_table, [c[0] for c in COLUMNS],
                                 out_required=False, keep_going=False)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
