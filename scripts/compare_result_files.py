#!/usr/bin/env python3
"""Do two folders of result files hold the same files? For every file in NEW: is there one
of that name in OLD (or in OLD/history/, where earlier runs are kept; a profile/ export in
OLD/ncu/ or, for the ncu_metrics tables, in OLD), and for a CSV, are its columns and its
metadata keys the same? Sizes in a name (reduce_2p20) are matched against any committed
size, and metadata keys numbered per GPU or rank (gpu0, gpu1, rank0, ...) as one key
whatever the count. The profiler's working files (reports and logs in profile/) are never committed and
are listed as such.

    scripts/compare_result_files.py OLD NEW [--out FILE]

It compares names and columns, not numbers (NEW may be a quick run with fewer sizes).
A file of NEW that OLD has nowhere is listed as unkept (a file the run writes that was
never committed); it does not fail the comparison.
Exit codes: 0 every file of NEW that OLD has matches it; 1 a file differs; 2 bad usage.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import output_files  # noqa: E402  the checked, whole-file write
from result_files import ResultFileError, load  # noqa: E402

SIZE = re.compile(r"2p\d+")
PER_DEVICE = re.compile(r"^(gpu|rank)\d+$")  # one metadata key per GPU or rank: gpu0, gpu1, ...


def keys(meta: dict[str, str]) -> set[str]:
    """The metadata keys, a run's per-GPU and per-rank keys counted as one (runs on
    different GPU counts carry the same metadata)."""
    return {PER_DEVICE.sub(r"\1N", k) for k in meta}


def counterpart(old: Path, rel: Path) -> Path | None:
    """The file of OLD that NEW's `rel` is to match: the same name, else the same name with
    any size in it."""
    homes = [old / rel.parent, old / rel.parent / "history"]
    if rel.parts[0] == "profile":
        homes = [old / "ncu", old]
    for home in homes:
        found = sorted(home.glob(SIZE.sub("2p*", rel.name)))
        if found:
            return found[0]
    return None


def compare(old: Path, new: Path) -> tuple[list[str], int]:
    lines, bad = [], 0
    for path in sorted(p for p in new.rglob("*") if p.is_file()):
        rel = path.relative_to(new)
        if rel.parts[0] == "profile" and path.suffix in (".ncu-rep", ".log"):
            lines.append(f"working  {rel}: the profiler's report or log, not kept under results/")
            continue
        twin = counterpart(old, rel)
        if twin is None:
            lines.append(f"unkept   {rel}: no committed file of this name to compare with")
            continue
        verdict = "same name"
        if path.suffix == ".csv":
            try:
                a, b = load(twin), load(path)
            except ResultFileError as e:
                lines.append(f"DIFFERS  {rel}: {e}")
                bad += 1
                continue
            if a.columns != b.columns:
                gone, extra = [c for c in a.columns if c not in b.columns], [c for c in b.columns if c not in a.columns]
                lines.append(f"DIFFERS  {rel}: columns (missing {gone or 'none'}, new {extra or 'none'}, else order)")
                bad += 1
                continue
            if keys(a.meta) != keys(b.meta):
                lines.append(f"DIFFERS  {rel}: metadata keys {sorted(keys(a.meta) ^ keys(b.meta))}")
                bad += 1
                continue
            verdict = f"same {len(b.columns)} columns and {len(b.meta)} metadata keys"
        elif path.suffix == ".png" and not path.read_bytes().startswith(b"\x89PNG"):
            lines.append(f"DIFFERS  {rel}: not a PNG")
            bad += 1
            continue
        if twin != old / rel:
            verdict += f" (as {twin.relative_to(old)})"
        lines.append(f"ok       {rel}: {verdict}")
    return lines, bad


def main(argv: list[str]) -> int:
    p = output_files.Parser(prog="compare_result_files.py", description=__doc__.split("\n\n")[0])
    p.add_argument("old", help="the committed results, e.g. results/h200")
    p.add_argument("new", help="a folder a new run wrote")
    p.add_argument("--out", help="also write the report to this file")
    p.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                   help="a '# KEY: VALUE' line to head the report (the run's commit, its command)")
    args = p.parse_args(argv)
    for name in (args.old, args.new):
        if not Path(name).is_dir():
            return output_files.refuse(p.prog, f"'{name}' is not a folder of result files.")
    for item in args.meta:
        if "=" not in item:
            return output_files.refuse(p.prog, f"--meta '{item}' is not KEY=VALUE.")
    lines, bad = compare(Path(args.old), Path(args.new))
    lines = [f"# {k.strip()}: {v.strip()}" for k, v in (m.split("=", 1) for m in args.meta)] + lines
    compared = sum(1 for line in lines if line.startswith(("ok ", "DIFFERS")))
    lines.append(f"{compared - bad} of {compared} files compared match; {bad} differ")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        output_files.write(args.out, text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
