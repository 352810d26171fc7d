#!/usr/bin/env python3
"""Counts the words of prose a reader meets in the README and each chapter, and checks
them against the reading budget.

    scripts/prose_words.py            a table: file, stages, prose words, limit
    scripts/prose_words.py --check    the same, and exit 1 naming every file over its limit

Prose is what is left of a Markdown file without fenced code blocks, tables (lines that
start with '|'), HTML comments (the docs' markers), images and the addresses of links
(a link counts its text). Words are runs of non-space characters.

The budget (a stage chapter explains one stage in about ten minutes of reading):
  a stage chapter        1,600 words a stage it explains (about 1,200 is the aim); the
                         stages come from the registry (results/registry.csv)
  a topic chapter        1,800 (00, 00a, 20 and later)
  README.md              1,500
  the reader's path      30,000 (README.md and every chapter together)

Options: --root DIR (the repository; default this script's parent folder).
Exit codes: 0 within budget (or no --check); 1 --check found a file over its limit;
2 bad usage or a missing file (one sentence on stderr).
"""
from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import output_files  # noqa: E402  the scripts' shared refusals (one sentence, exit 2)

PROGRAM = "prose_words.py"
PER_STAGE = 1600
AIM_PER_STAGE = 1200
TOPIC = 1800
README = 1500
PATH_TOTAL = 30000
LAST_OF_PATH = 26  # the reduction's path ends at chapter 26
PART_TWO_TOTAL = 4000  # chapters 27-89: the ladder's lessons on other primitives

FENCE = re.compile(r"^\s*(```|~~~)")
COMMENT = re.compile(r"<!--.*?-->", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def prose(text: str) -> str:
    """The prose of a Markdown text, as defined above."""
    text = COMMENT.sub(" ", text)
    kept, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith("|"):
            continue
        line = IMAGE.sub(" ", line)
        line = LINK.sub(r"\1", line)
        kept.append(line)
    return "\n".join(kept)


def words(text: str) -> int:
    return sum(1 for w in prose(text).split() if re.search(r"\w", w))


def stages_per_chapter(root: Path) -> dict[str, int]:
    registry = root / "results" / "registry.csv"
    if not registry.is_file():
        raise FileNotFoundError(f"{registry} is missing")
    counts: dict[str, int] = {}
    with registry.open(encoding="utf-8") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        for row in rows:
            if row["kind"] == "stage":
                counts[row["chapter"]] = counts.get(row["chapter"], 0) + 1
    return counts


def chapter_number(path: Path) -> int:
    return int(re.match(r"\d+", path.name).group(0))


def reader_path(root: Path) -> list[Path]:
    """README.md and chapters/NN*.md up to LAST_OF_PATH: the reduction, stage by stage."""
    chapters = sorted(p for p in (root / "chapters").glob("[0-8]*.md") if chapter_number(p) <= LAST_OF_PATH)
    return [root / "README.md"] + chapters


def part_two(root: Path) -> list[Path]:
    """chapters/NN*.md from LAST_OF_PATH + 1 below 90: the other primitives (histogram, scan)."""
    return sorted(p for p in (root / "chapters").glob("[0-8]*.md") if chapter_number(p) > LAST_OF_PATH)


def budget(root: Path) -> list[tuple[str, int, int, int]]:
    """(file, stages, words, limit) for every file of the reader's path."""
    stages = stages_per_chapter(root)
    out = []
    for path in reader_path(root) + part_two(root):
        rel = path.relative_to(root).as_posix()
        count = words(path.read_text(encoding="utf-8"))
        k = stages.get(rel, 0)
        limit = README if rel == "README.md" else (PER_STAGE * k if k else TOPIC)
        out.append((rel, k, count, limit))
    return out


def path_totals(root: Path, rows: list[tuple[str, int, int, int]]) -> list[tuple[str, list, int]]:
    """(name, rows, limit) for the reader's path and for part two."""
    second = {p.relative_to(root).as_posix() for p in part_two(root)}
    return [("the reader path", [r for r in rows if r[0] not in second], PATH_TOTAL),
            ("part two (other primitives)", [r for r in rows if r[0] in second], PART_TWO_TOTAL)]


def main(argv: list[str] | None = None) -> int:
    p = output_files.Parser(prog=PROGRAM, description="Prose words per chapter against the reading budget.")
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    p.add_argument("--check", action="store_true", help="exit 1 when a file or the whole path is over its limit")
    args = p.parse_args(argv)
    root = args.root.resolve()
    if not (root / "README.md").is_file() or not (root / "chapters").is_dir():
        print(f"{PROGRAM}: --root {args.root} is not the repository (no README.md and chapters/).", file=sys.stderr)
        return 2
    try:
        rows = budget(root)
    except (OSError, KeyError) as e:
        print(f"{PROGRAM}: cannot read the registry or a chapter ({e}).", file=sys.stderr)
        return 2
    over = []
    print(f"{'file':48} {'stages':>6} {'words':>6} {'limit':>6}")
    for rel, k, count, limit in rows:
        flag = "  OVER" if count > limit else ""
        print(f"{rel:48} {k or '-':>6} {count:>6} {limit:>6}{flag}")
        if count > limit:
            over.append(f"{rel}: {count} words of prose, over its limit of {limit}")
    for name, files, limit in path_totals(root, rows):
        total = sum(r[2] for r in files)
        print(f"{name:48} {'':>6} {total:>6} {limit:>6}{'  OVER' if total > limit else ''}")
        if total > limit:
            over.append(f"{name}: {total} words of prose, over its limit of {limit}")
    if args.check and over:
        for line in over:
            print(line, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
