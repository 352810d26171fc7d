#!/usr/bin/env python3
"""The access-pattern programs' plots from their result CSVs (matplotlib, no GPU).

    scripts/plot_access.py [--results DIR] [--out DIR]

draws access_stride.png (from access_01_stride_offset.csv) and access_banks.png (from
access_05_bank_padding.csv), each by its module in scripts/figures/ (access_stride.py,
access_banks.py), listed in the registry of scripts/diagrams.py, which draws and checks
the committed ones: drawn here from the same CSV, a PNG is byte for byte the one
diagrams.py draws, fingerprint included. Defaults: --results results/h200, --out the
results directory. Each figure is written to a new file beside its target and renamed
into place. Exit codes: 0 success, 1 a figure could not be written, 2 a missing or
malformed CSV or bad usage, such as a --results that is not a folder or an --out that
cannot be written (one sentence on stderr; nothing written).
"""

from __future__ import annotations

import os
import sys

import diagrams  # scripts/diagrams.py: the registry of every PNG, and its drawing
import output_files  # scripts/output_files.py: checked, then written whole

JOBS = [("access_01_stride_offset.csv", "access_stride.png"), ("access_05_bank_padding.csv", "access_banks.png")]


def main(argv: list[str]) -> int:
    p = output_files.Parser(prog="plot_access.py", description="The access-pattern programs' plots.")
    p.add_argument("--results", default="results/h200", help="directory of the CSVs (default results/h200)")
    p.add_argument("--out", help="where the PNGs go (default: the results directory)")
    args = p.parse_args(argv)
    out = args.out if args.out is not None else args.results
    problem = (output_files.input_problem(args.results, "--results", needs="that holds the access_*.csv files") or
               output_files.directory_problem(out, "--out" if args.out is not None else "--results"))
    if problem:
        print(f"plot_access.py: {problem}", file=sys.stderr)
        return 2
    return diagrams.plot_csvs("plot_access.py", [(os.path.join(args.results, csv), png) for csv, png in JOBS], out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
