#!/usr/bin/env python3
"""Do two GPUs give a stage the same bits? Compares one stage's sums in two results CSVs.

    scripts/compare_bits.py A.csv B.csv [--key 16] [--out FILE]

For every n that both files hold for the stage (same input pattern and seed, which the
files' metadata must agree on), prints the float32 bit pattern of each file's result and
whether they are equal. The runner writes a sum with 10 significant digits, more than the
9 that tell any two floats apart, so equal bits here mean equal sums.
The --out file is checked before anything is read and written whole at the end
(scripts/output_files.py): a file that is read-only, a directory or not a regular file
is refused.
Exit codes: 0 every shared n has the same bits, 1 one differs or the report could not be
written, 2 bad usage or unreadable files (one sentence naming the problem).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import output_files  # noqa: E402  checked first, then written whole
from result_files import ResultFileError, MissingFile, load  # noqa: E402


def bits(text: str) -> str:
    return f"0x{struct.unpack('<I', struct.pack('<f', float(text)))[0]:08x}"


def main(argv: list[str]) -> int:
    p = output_files.Parser(prog="compare_bits.py", description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--key", default="16", help="the stage's key (default 16)")
    p.add_argument("--out", help="also write the report to this file")
    args = p.parse_args(argv)
    problem = args.out is not None and output_files.problem(args.out, "--out")
    if problem:
        print(f"compare_bits.py: {problem}", file=sys.stderr)
        return 2
    try:
        files = [load(Path(args.a)), load(Path(args.b))]
    except (ResultFileError, MissingFile) as e:
        print(f"compare_bits.py: cannot read {e}.", file=sys.stderr)
        return 2
    for name in ("pattern", "seed"):
        values = [f.meta.get(name, "") for f in files]
        if values[0] != values[1]:
            print(f"compare_bits.py: the files' {name} differ ({values[0]!r} and {values[1]!r}); "
                  "the same inputs are needed.", file=sys.stderr)
            return 2
    sums = [{r["n"]: r["result"] for r in f.rows if r["key"] == args.key} for f in files]
    shared = sorted(set(sums[0]) & set(sums[1]), key=int)
    if not shared:
        print(f"compare_bits.py: no n holds stage {args.key} in both files.", file=sys.stderr)
        return 2
    devices = [f.meta.get("device", "?") for f in files]
    lines = [f"stage {args.key}: {devices[0]} ({args.a}) against {devices[1]} ({args.b}), "
             f"pattern {files[0].meta.get('pattern', '?')}, seed {files[0].meta.get('seed', '?')}",
             f"{'n':>12} {'bits A':>11} {'bits B':>11} same"]
    differ = 0
    for n in shared:
        a, b = bits(sums[0][n]), bits(sums[1][n])
        differ += a != b
        lines.append(f"{n:>12} {a:>11} {b:>11} {'yes' if a == b else 'NO'}")
    lines.append(f"{len(shared) - differ} of {len(shared)} sizes give the same bits")
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if args.out is not None:
        try:
            output_files.write(args.out, report)
        except OSError as e:
            print(f"compare_bits.py: cannot write --out file '{args.out}': {e.strerror or e}.", file=sys.stderr)
            return 1
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
