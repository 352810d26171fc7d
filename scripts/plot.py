#!/usr/bin/env python3
"""The result plots ladder.png, sweep.png and mixed_precision.png from result CSVs
(matplotlib, no GPU needed).

    scripts/plot.py [--results DIR] [--out DIR] [--ladder CSV] [--sweep CSV] [--mixed CSV]

Each is drawn by its module in scripts/figures/ (ladder.py, sweep.py, mixed_precision.py),
listed in the registry of scripts/diagrams.py, which draws and checks the committed ones
(`scripts/diagrams.py --check`): drawn here from the same CSV, a PNG is byte for byte
the one diagrams.py draws, fingerprint included. sweep.png also plots the peers and the
ceiling (peers_*.csv) found beside the sweep CSV.
Defaults: --results results/h200, --ladder DIR/reduce_2p28.csv, --sweep DIR/sweep.csv,
--mixed DIR/mixed_precision_2p28.csv, --out the results directory; a default CSV that
does not exist is skipped, saying so. Each figure is written to a new file beside its
target and renamed into place.
Exit codes: 0 success, 1 a figure could not be written, 2 a missing or malformed CSV
(or one of the wrong kind: a sweep given as --ladder) or bad usage, such as an --out
that cannot be written; every error is one sentence on stderr.
"""

from __future__ import annotations

import os
import sys

import diagrams  # scripts/diagrams.py: the registry of every PNG, and its drawing
import output_files  # scripts/output_files.py: checked, then written whole

JOBS = [("ladder", "reduce_2p28.csv", "ladder.png"), ("sweep", "sweep.csv", "sweep.png"),
        ("mixed", "mixed_precision_2p28.csv", "mixed_precision.png")]


def main(argv: list[str]) -> int:
    p = output_files.Parser(prog="plot.py", description="The result plots from the result CSVs.")
    p.add_argument("--results", help="directory of the CSVs (default results/h200)")
    p.add_argument("--out", help="where the PNGs go (default: the results directory)")
    p.add_argument("--ladder", help="reduce table CSV (default RESULTS/reduce_2p28.csv)")
    p.add_argument("--sweep", help="sweep CSV (default RESULTS/sweep.csv)")
    p.add_argument("--mixed", help="mixed-precision CSV (default RESULTS/mixed_precision_2p28.csv)")
    args = p.parse_args(argv)
    # Every name checked before anything is read or drawn: the results folder, when it is
    # named or used, must exist (a typo would otherwise skip every figure and succeed), an
    # empty name is refused, and the output folder must be one files can be written in.
    given = {flag: getattr(args, flag) for flag, _, _ in JOBS}
    uses_results = args.results is not None or args.out is None or None in given.values()
    results = "results/h200" if args.results is None else args.results
    problem = uses_results and output_files.input_problem(results, "--results", needs="that holds the result CSVs")
    out = args.out if args.out is not None else results
    problem = problem or output_files.directory_problem(out, "--out" if args.out is not None else "--results")
    if problem:
        print(f"plot.py: {problem}", file=sys.stderr)
        return 2
    jobs = []
    for flag, default, name in JOBS:
        path = given[flag] or os.path.join(results, default)
        if given[flag] or os.path.exists(path):
            jobs.append((path, name))
        else:
            print(f"plot.py: skipped {name}: {path} does not exist (this GPU has no such results)")
    return diagrams.plot_csvs("plot.py", jobs, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
