#!/usr/bin/env python3
"""The reading budget: every chapter of the reader's path and the README within the
prose limits of scripts/prose_words.py, and the counter itself counts prose only
(code blocks, tables, markers, images and link addresses are not prose).

usage: python3 tests/host/test_prose_length.py     (or python3 -m pytest on this file)
"""
import re
import sys

import pytest

from conftest import ROOT

import prose_words as pw  # noqa: E402  (scripts/ is on the path: conftest.py)

ROWS = pw.budget(ROOT)
CHAPTERS = pw.reader_path(ROOT)[1:] + pw.part_two(ROOT)


def test_counter_counts_prose_only():
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
    # Headings, sentences, link text and a generated value count; code, tables, markers,
    # images and addresses do not.
    assert pw.words(sample) == 10


def test_the_path_has_the_readme_and_the_chapters():
    assert len(ROWS) > 10
    assert len([r for r in ROWS if r[1] > 0]) >= 10, "the stage chapters are found through the registry"


@pytest.mark.parametrize("rel, stages, count, limit", ROWS, ids=[r[0] for r in ROWS])
def test_within_its_limit(rel, stages, count, limit):
    assert count <= limit, f"{rel}: {count} words of prose, limit {limit}; shorten it (scripts/prose_words.py)"


@pytest.mark.parametrize("name, rows, limit", pw.path_totals(ROOT, ROWS), ids=["path", "part_two"])
def test_the_whole_path_within_its_total(name, rows, limit):
    total = sum(r[2] for r in rows)
    assert rows, f"{name}: no chapters"
    assert total <= limit, f"{name}: {total} words, limit {limit}"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.name for p in CHAPTERS])
def test_chapter_links_the_lab_once_and_shows_a_figure(path):
    text = path.read_text(encoding="utf-8")
    # The lab stays out of the reader's path: a chapter links to it at most once.
    lab_links = re.findall(r"\]\(([^)]*lab/(?:notes/|README\.md)[^)]*)\)", text)
    assert len(lab_links) <= 1, f"{len(lab_links)} links to the lab: {lab_links}"
    # A picture for every idea: a concept figure (chapters/figures/, drawn by scripts/diagrams.py).
    assert re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", text), "no ![..](figures/NAME.png) in it"


@pytest.mark.parametrize("this, following", list(zip(CHAPTERS, CHAPTERS[1:])), ids=[p.name for p in CHAPTERS[:-1]])
def test_chapter_ends_with_the_next_link(this, following):
    """One path from 00 to 28: a reader goes from 01 to 18 by one link a chapter, never through the lab."""
    last = [line for line in this.read_text(encoding="utf-8").splitlines() if line.strip()][-1]
    assert f"]({following.name})" in last, f"its last line is {last[:120]!r}"


if __name__ == "__main__":  # python3 tests/host/test_prose_length.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
