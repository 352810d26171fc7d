#!/usr/bin/env python3
"""The reading budget: every chapter of the reader's path and the README within the
prose limits of scripts/prose_words.py, and the counter itself counts prose only
(code blocks, tables, markers, images and link addresses are not prose).

usage: test_prose_length.py [REPOSITORY_ROOT]
Prints one line per failure and "N checks passed, M failed"; exits 1 on any failure.
"""
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]).resolve()
sys.path.insert(0, str(Path(__file__).resolve().parent))
import host_checks  # noqa: E402

pw = host_checks.load_script(ROOT / "scripts" / "prose_words.py", "prose_words")
check = host_checks.named_check

# The counter.
sample = """# Title here

One two three.

```cuda
int not_prose = 1;
```

| a | table | row |
|---|---|---|
<!-- claim: x.csv a < b -->
See [the chapter](13_last_block.md) and ![a figure](figures/x.png).
<!-- value: x.csv meta=device -->H200<!-- /value -->
"""
check("counter: headings, sentences, link text and a generated value count; code, tables, markers, "
      "images and addresses do not", pw.words(sample) == 10, f"counted {pw.words(sample)}")

# The budget.
rows = pw.budget(ROOT)
check("the reader's path has the README and the chapters", len(rows) > 10, f"{len(rows)} files")
for rel, stages, count, limit in rows:
    check(f"{rel}: {count} words of prose within {limit}", count <= limit,
          f"{count} words; shorten it (scripts/prose_words.py lists every file)")
total = sum(r[2] for r in rows)
check(f"the reader's path: {total} words within {pw.PATH_TOTAL}", total <= pw.PATH_TOTAL, f"{total} words")
# The lab stays out of the reader's path: a chapter links to it at most once.
import re  # noqa: E402
for path in pw.reader_path(ROOT)[1:]:
    lab_links = re.findall(r"\]\(([^)]*experiments/(?:notes/|README\.md)[^)]*)\)", path.read_text(encoding="utf-8"))
    check(f"{path.name} links to the lab at most once", len(lab_links) <= 1, f"{len(lab_links)} links: {lab_links}")
# A picture for every idea: every chapter of the path shows at least one concept figure
# (chapters/figures/, drawn by scripts/diagrams.py, whose test checks that each is current).
for path in pw.reader_path(ROOT)[1:]:
    text = path.read_text(encoding="utf-8")
    figures = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", text)
    check(f"{path.name} shows a concept figure", len(figures) >= 1, "no ![..](figures/NAME.png) in it")

# One path from 00 to 26: each chapter's last line links the next chapter in reading order,
# so a reader goes from 01 to 18 by one link a chapter, never through the lab.
chapters = pw.reader_path(ROOT)[1:]
for this, following in zip(chapters, chapters[1:]):
    last = [line for line in this.read_text(encoding="utf-8").splitlines() if line.strip()][-1]
    check(f"{this.name} ends with a link to {following.name}", f"]({following.name})" in last,
          f"its last line is {last[:120]!r}")

stage_rows = [r for r in rows if r[1] > 0]
check("the stage chapters are found through the registry", len(stage_rows) >= 10, f"{len(stage_rows)}")
host_checks.finish()
