#!/usr/bin/env python3
"""The tutorial text against the repository: every generated table and value in
README.md and chapters/*.md matches its result file (scripts/update_docs.py --check),
every relative link and image points to a file (and heading) that exists, every stage,
baseline, mixed-precision variant and occupancy program is covered by a chapter, and no
measured time is typed into the prose by hand. Then the generator itself, on small
temporary CSVs, including its refusals.

usage: python3 -m pytest tests/host/test_docs.py     (the repository holding this file)
"""
import io
import os
import re
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "update_docs.py"

sys.path.insert(0, str(Path(__file__).resolve().parent))
import host_tools  # noqa: E402
from host_tools import detail  # noqa: E402

docs = host_tools.load_script(SCRIPT, "update_docs")


def run_script(*args):
    return host_tools.run_script(SCRIPT, *args, timeout=300)


def markdown_files():
    lab = [ROOT / "lab" / "README.md"] + sorted((ROOT / "lab" / "notes").glob("*.md"))
    return ([ROOT / "README.md", ROOT / "REFERENCE.md"] + sorted((ROOT / "chapters").glob("*.md")) +
            [p for p in lab if p.is_file()])


# ---- the repository ----------------------------------------------------------------


def test_generated_parts_are_current():
    rc, out, err = run_script("--check", "--root", ROOT)
    assert rc == 0, f"update_docs.py --check over the repository: exit {rc}\n    {(out + err).strip()}"


def without_code(text):
    """The text with fenced code and inline code spans blanked (same length)."""
    chars = list(text)
    for a, b in docs.code_regions(text):
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(path):
    seen = {}
    out = set()
    for line in without_code(path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        count = seen.get(s, 0)
        seen[s] = count + 1
        out.add(s if count == 0 else f"{s}-{count}")
    return out


LINK_RE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def test_links_and_images():
    bad = []
    count = 0
    for md in markdown_files():
        if not md.is_file():
            bad.append(f"{md.relative_to(ROOT)} does not exist")
            continue
        text = without_code(md.read_text(encoding="utf-8"))
        targets = [m.group(1) for m in LINK_RE.finditer(text)]
        targets += re.findall(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", text, re.M)
        for target in targets:
            if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            count += 1
            path_part, _, anchor = target.partition("#")
            dest = (md.parent / path_part).resolve() if path_part else md
            where = f"{md.relative_to(ROOT)} -> {target}"
            if not dest.exists():
                bad.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors_of(dest):
                bad.append(f"{where}: no heading with that anchor")
    assert not bad, f"relative links and images ({count} checked)" + detail("\n    ".join(bad))


def test_readme_lists_every_chapter():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [c.name for c in sorted((ROOT / "chapters").glob("*.md")) if f"chapters/{c.name}" not in readme]
    assert not missing, "README.md links every chapter" + detail(", ".join(missing))


def chapter_texts():
    return {c: c.read_text(encoding="utf-8") for c in sorted((ROOT / "chapters").glob("*.md"))}


def test_every_stage_has_its_chapter():
    bad = []
    stages = docs.read_registry(ROOT)
    for s in stages:
        chapter = ROOT / s.chapter
        if not chapter.is_file():
            bad.append(f"{s.key}: chapter {s.chapter} does not exist")
        elif s.source not in chapter.read_text(encoding="utf-8"):
            bad.append(f"{s.key}: {s.chapter} never names {s.source}")
    assert not bad and stages, (
        f"every registered stage and baseline ({len(stages)}) is explained in its chapter" + detail("\n    ".join(bad)))


def test_other_programs_are_covered():
    texts = "\n".join(chapter_texts().values())
    sources = sorted((ROOT / "mixed_precision").glob("[0-9][0-9]_*.cu")) + sorted(
        (ROOT / "occupancy").glob("[0-9][0-9]_*.cu")
    ) + sorted((ROOT / "access_patterns").glob("[0-9][0-9]_*.cu"))
    missing = [str(p.relative_to(ROOT)) for p in sources if str(p.relative_to(ROOT)) not in texts]
    assert not missing, (
        f"every mixed-precision variant, occupancy and access-pattern program ({len(sources)}) is in a chapter" + detail(", ".join(missing)))


def prose_only(text):
    """The text without generated parts, code and HTML comments."""
    text = without_code(text)
    text = re.sub(r"<!-- (results|stages)\b.*?<!-- /\1 -->", " ", text, flags=re.S)
    text = re.sub(r"<!-- value:.*?<!-- /value -->", " ", text)
    return re.sub(r"<!--.*?-->", " ", text, flags=re.S)


HAND_NUMBER = re.compile(
    r"(?<![\w.^/])\d+(?:\.\d+)?\s*(?:us|µs|ms)\b"  # a time: always a measurement
    r"|(?<![\w.^/])\d+(?:\.\d+)?\s*x\s+(?:faster|slower)\b"  # a measured speed ratio
    r"|(?<![\w.^/])\d+(?:\.\d+)?\s*%\s+of\s+(?:the\s+)?(?:theoretical\s+)?peak"
)


def test_no_measured_numbers_in_prose():
    bad = []
    for md in markdown_files():
        if not md.is_file():
            continue
        text = prose_only(md.read_text(encoding="utf-8"))
        for m in HAND_NUMBER.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{md.relative_to(ROOT)}:{line}: {m.group(0)!r}")
    assert not bad, "no measured time or ratio typed into the prose" + detail("\n    ".join(bad))


# ---- the generator on temporary files ----------------------------------------------

META = """# device: Test GPU
# driver: 1.2.3
# commit: abc123
# date: 2026-01-01T00:00:00Z
# n: 1048576
# l2_flushed: yes
"""
HEADER = "n,key,stage,median_us,gbs,vs_cub,rel_error,check,book_v100_ms\n"
ROWS = (
    "1048576,01,\"naive, global\",100.04,41.9,0.25,2.9e-08,ok,4.609\n"
    "1048576,02,shared,50,83.8,0.5,3e-08,ok,\n"
    "1048576,cub,CUB,25,167.7,1,3.1e-08,ok,\n"
)
SWEEP = (
    HEADER
    + "1024,13,single,4.0,1.0,1.2,1e-08,ok,\n1024,cub,CUB,4.8,0.9,1,1e-08,ok,\n"
    + "1048576,13,single,7.2,580,1.236,1e-08,ok,\n1048576,cub,CUB,8.9,471,1,1e-08,ok,\n"
)


class Sandbox:
    """A repository-shaped temporary folder: results/h200/ and chapters/."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        (self.root / "results" / "h200").mkdir(parents=True)
        (self.root / "chapters").mkdir()
        self.write_result("r.csv", META + HEADER + ROWS)
        self.write_result("sweep.csv", META.replace("# n: 1048576", "# n: sweep") + SWEEP)

    def write_result(self, name, text):
        (self.root / "results" / "h200" / name).write_text(text, encoding="utf-8")

    def doc(self, text, name="c.md"):
        path = self.root / "chapters" / name
        path.write_text(text, encoding="utf-8")
        return path

    def run(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = docs.main(["--root", str(self.root), *args])
        return rc, out.getvalue(), err.getvalue()

    def close(self):
        self.tmp.cleanup()


def block(args, content=""):
    return f"<!-- results: {args} -->\n{content}<!-- /results -->\n"


def test_table_generation():
    box = Sandbox()
    path = box.doc(
        "# T\n\n"
        + block('r.csv rows=cub,01 columns="key:#,stage,median_us,gbs:GB per s,vs_cub" fmt=median_us:.2f', "stale\n")
        + "after\n"
    )
    rc, out, err = box.run()
    text = path.read_text(encoding="utf-8")
    assert rc == 0 and "updated chapters/c.md" in out, f"table: exit 0 and the file updated: {rc} {out} {err}"
    assert "stale" not in text and text.endswith("<!-- /results -->\nafter\n"), f"table: stale content replaced: {text}"
    assert "| # | stage | median (us) | GB per s | vs CUB |" in text, f"table: header and renamed columns: {text}"
    assert text.index("| cub |") < text.index("| 01 |"), f"table: rows in the order asked: {text}"
    assert "| 01 | naive, global | 100.04 | 42 | 0.25 |" in text, f"table: per-column format and defaults: {text}"
    assert "|:---|:---|---:|---:|---:|" in text, f"table: numbers right-aligned, text left: {text}"
    assert (("*Source: [results/h200/r.csv](../results/h200/r.csv) (Test GPU, driver 1.2.3, commit abc123, "
        "2026-01-01T00:00:00Z, n = 2^20, L2 flushed before each repetition).*" in text)), f"table: source note with file, device, driver, commit, date: {text}"
    rc, out, _ = box.run("--check")
    assert rc == 0 and "up to date" in out, f"table: --check passes right after generation: {out}"
    before = path.read_text(encoding="utf-8")
    rc, _, _ = box.run()
    assert rc == 0 and path.read_text(encoding="utf-8") == before, "table: a second run changes nothing"
    box.close()


def test_ranges_empty_cells_and_tiny_numbers():
    box = Sandbox()
    box.write_result(
        "r.csv", META + HEADER + ROWS + "1048576,03,third,0.0003,1,0.00004,,ok,\n1048576,11,eleventh,1,1,1,,ok,\n"
    )
    path = box.doc(block("r.csv rows=02-03 columns=key,median_us,vs_cub,book_v100_ms,rel_error"))
    rc, _, err = box.run()
    text = path.read_text(encoding="utf-8")
    assert ((rc == 0 and "| 02 |" in text and "| 03 |" in text
          and "| 01 |" not in text and "| 11 |" not in text)), f"range rows=02-03 selects 02 and 03 only: {text + err}"
    assert "| 02 | 50.0 | 0.50 | - | 3.0e-08 |" in text, f"an empty cell prints as -: {text}"
    assert "| 03 | 3.0e-04 | 4.0e-05 | - | - |" in text, (
        f"a number too small for its format is not printed as zero: {text}")
    box.close()


def test_sweep_and_pivot_views():
    box = Sandbox()
    path = box.doc(
        block("sweep.csv view=sweep stages=13,cub")
        + block('sweep.csv view=pivot row=n col=key columns="cub.median_us:CUB time,13.gbs" rows=2^20')
    )
    rc, _, err = box.run()
    text = path.read_text(encoding="utf-8")
    assert rc == 0, f"sweep view: exit 0: {err}"
    assert "| n | 13 (us) | 13 vs CUB | CUB (us) |" in text, f"sweep view: columns per stage: {text}"
    assert (("| 2^10 | 4.0 | 1.20 | 4.8 |" in text
          and "| 2^20 | 7.2 | 1.24 | 8.9 |" in text)), f"sweep view: one row per n, n as a power of two: {text}"
    assert (("| n | CUB time | 13 GB/s |" in text and "| 2^20 | 8.9 | 580 |" in text
          and "| 2^10 | 4.8" not in text)), f"pivot view: chosen columns and rows: {text}"
    box.close()


RUNNING = (
    META
    + "n,key,kind,stage,median_us,gbs,vs_previous,speedup_vs_01\n"
    + "1048576,01,stage,naive,100,40,,1\n"
    + "1048576,02,stage,\"shared, %\",200,20,0.5,0.5\n"
    + "1048576,03,stage,bitwise,80,50,2.5,1.25\n"
    + "1048576,04,stage,interleaved,40,100,2,2.5\n"
    + "1048576,cub,baseline,CUB,20,200,,5\n"
)


def write_registry(box, rows):
    """The sandbox's results/registry.csv, as `reduce --list --format csv` writes it."""
    (box.root / "scripts").mkdir(exist_ok=True)
    (box.root / "results" / "registry.csv").write_text(
        "# registry: test\nkey,id,kind,title,source,chapter\n" + "".join(r + "\n" for r in rows), encoding="utf-8"
    )


def running_sandbox():
    """A sandbox with a result file for the running view and a registry that puts
    stages 02 and 03 in chapters/c.md and the others elsewhere."""
    box = Sandbox()
    box.write_result("run.csv", RUNNING)
    names = {1: "one", 2: "two", 3: "three", 4: "four"}
    rows = []
    for number, name in names.items():
        chapter = "chapters/c.md" if number in (2, 3) else "chapters/other.md"
        rows.append(f"0{number},{name},stage,{name},reduction/0{number}_{name}.cu,{chapter}")
    write_registry(box, rows)
    return box


def test_running_view():
    box = running_sandbox()
    path = box.doc(block("run.csv view=running upto=03"))
    other = box.doc(block("run.csv view=running"), name="other.md")
    rc, _, err = box.run()
    text = path.read_text(encoding="utf-8")
    assert rc == 0, f"running view: exit 0: {err}"
    assert (("| # | stage | time (us) | GB/s | step speedup | cumulative speedup |\n"
          "|:---|:---|---:|---:|---:|---:|" in text)), f"running view: the header of the ladder table: {text}"
    assert "| 01 | naive | 100.0 | 40 | - | 1.00x |" in text, (
        f"running view: stage 01 has no step, and 1x cumulative: {text}")
    assert (("| **02** | **shared, %** | **200.0** | **20** | **0.50x** | **0.50x** |" in text
          and "| **03** | **bitwise** | **80.0** | **50** | **2.50x** | **1.25x** |" in text)), f"running view: this chapter's stages in bold, from the registry: {text}"
    assert "| 04 |" not in text and "**04**" not in text and "CUB" not in text, (
        f"running view: upto stops the table, baselines never appear: {text}")
    assert "in bold, this chapter's stages" in text, f"running view: the legend names the bold rows: {text}"
    text = other.read_text(encoding="utf-8")
    assert (("| 02 | shared, % | 200.0 | 20 | 0.50x | 0.50x |" in text and "| **04** | **interleaved** |" in text
          and "| **01** |" in text and "CUB" not in text)), f"running view: without upto every stage, bold only for the document's own: {text}"
    rc, out, _ = box.run("--check")
    assert rc == 0, f"running view: --check passes after generation: {out}"
    other.unlink()
    expect_error("running view: upto names no stage", box, block("run.csv view=running upto=09"),
                 "upto=09 names no stage row of run.csv (it has: 01, 02, 03, 04)")
    expect_error("running view: upto must be a number", box, block("run.csv view=running upto=cub"),
                 "upto=cub must be a stage number")
    expect_error("running view: an unknown option", box, block("run.csv view=running rows=01"),
                 "unknown option 'rows'")
    expect_error("running view: a file without the speedup columns", box, block("r.csv view=running"),
                 "r.csv has no column 'kind'")
    box.close()


def test_inline_values_and_text_view():
    box = Sandbox()
    box.write_result("log.txt", "line one\nsanitize 01 ok\nsanitize 02 ok\nend\n")
    path = box.doc(
        "Stage 13 is <!-- value: sweep.csv n=2^20 key=13 col=vs_cub fmt=.2f -->?<!-- /value -->x CUB's speed "
        "on <!-- value: r.csv meta=device --><!-- /value -->.\n\n"
        + block("log.txt view=text match=^sanitize")
        + "```\n<!-- value: nothing.csv col=x -->\n```\nand `<!-- results: none.csv -->` in code.\n"
    )
    rc, _, err = box.run()
    text = path.read_text(encoding="utf-8")
    assert rc == 0, f"value: exit 0 (markers in code are ignored): {err}"
    assert (("fmt=.2f -->1.24<!-- /value -->x" in text
          and "meta=device -->Test GPU<!-- /value -->" in text)), f"value: the number and the metadata: {text}"
    assert "```text\nsanitize 01 ok\nsanitize 02 ok\n```" in text, f"text view: the matching lines in a fence: {text}"
    box.close()


def test_check_reports_stale_parts():
    box = Sandbox()
    path = box.doc("intro\n" + block("r.csv columns=key,median_us"))
    box.run()
    path.write_text(path.read_text(encoding="utf-8").replace("| 100.0 |", "| 99.0 |"), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    rc, out, _ = box.run("--check")
    assert rc == 1, f"--check: a hand-edited table is stale (exit 1): exit {rc}"
    assert "chapters/c.md:2: <!-- results: r.csv columns=key,median_us --> is stale" in out, (
        f"--check: names the file, line and marker: {out}")
    assert path.read_text(encoding="utf-8") == before, "--check: changes nothing"
    box.write_result("r.csv", META + HEADER + ROWS.replace("100.04", "101"))
    box.run()
    rc, out, _ = box.run("--check")
    assert ((rc == 0 and "| 101.0 |" in path.read_text(
        encoding="utf-8"))), f"--check: a new CSV makes the table stale until regenerated: {out}"
    box.close()


def expect_error(name, box, text, *needles, check_mode=False, code=2):
    path = box.doc(text)
    rc, out, err = box.run(*(["--check"] if check_mode else []))
    lines = [line for line in err.splitlines() if line.strip()]
    problems = []
    if rc != code:
        problems.append(f"exit {rc}, expected {code}")
    if len(lines) != 1:
        problems.append(f"expected one line on stderr, got {len(lines)}")
    for needle in needles:
        if needle not in err:
            problems.append(f"stderr lacks {needle!r}")
    if path.read_text(encoding="utf-8") != text:
        problems.append("the document was modified")
    assert not problems, str(name) + detail("; ".join(problems) + f"\n    stderr: {err.strip()}")


def test_refusals():
    box = Sandbox()
    box.write_result("ragged.csv", META + HEADER + "1,01,x,1,1,1,1,ok\n")
    box.write_result("noheader.csv", META)
    box.write_result("badmeta.csv", "# device NVIDIA\n" + HEADER + ROWS)
    box.write_result("dup.csv", META + "n,key,key\n1,01,02\n")
    box.write_result("late.csv", META + HEADER + ROWS + "# commit: late\n")
    box.write_result("words.csv", META + HEADER + "1,01,x,fast,1,1,1,ok,\n")
    expect_error("a ragged CSV is malformed", box, block("ragged.csv columns=key"), "ragged.csv:8 is malformed",
                 "has 8 fields, the header 9")
    expect_error("a CSV without a header is malformed", box, block("noheader.csv columns=key"), "no header row")
    expect_error("a bad metadata line is malformed", box, block("badmeta.csv columns=key"), "'# key: value'")
    expect_error("a duplicated column is malformed", box, block("dup.csv columns=key"), "appears twice")
    expect_error("metadata after the header is malformed", box, block("late.csv columns=key"), "follows the header")
    expect_error("an unknown column", box, block("r.csv columns=key,speed"), "has no column 'speed'")
    expect_error("an unknown row key", box, block("r.csv rows=01,99 columns=key"), "no row with key = '99'")
    expect_error("an unknown stage in a sweep", box, block("sweep.csv view=sweep stages=14"), "no row with key = '14'")
    expect_error("an unknown option", box, block("r.csv columns=key colour=red"), "unknown option 'colour'")
    expect_error("an unknown view", box, block("r.csv view=chart"), "unknown view 'chart'")
    expect_error("a table without columns", box, block("r.csv"), "needs columns=")
    expect_error("a non-numeric value with a number format", box, block("words.csv columns=median_us"),
                 "'fast', which is not a number")
    expect_error("a bad format spec", box, block("r.csv columns=gbs fmt=gbs:zz"), "not a number format")
    expect_error("an unclosed marker", box, "<!-- results: r.csv columns=key -->\ntext\n",
                 "c.md:1", "has no <!-- /results -->")
    expect_error("a stray closing marker", box, "text\n<!-- /results -->\n", "c.md:2", "no opening marker")
    expect_error("a value selecting two rows", box, "x <!-- value: r.csv col=gbs --><!-- /value -->\n",
                 "select 3 rows")
    expect_error("a malformed CSV also stops --check", box, block("ragged.csv columns=key"), "malformed",
                 check_mode=True)
    # Nothing is written when any document has an error, even the good ones.
    good = box.doc(block("r.csv columns=key"), name="good.md")
    bad_text = block("r.csv columns=nope")
    box.doc(bad_text, name="z.md")
    rc, _, _ = box.run()
    assert rc == 2 and "| 01 |" not in good.read_text(encoding="utf-8"), "an error in one document writes no document"
    box.close()


def test_missing_result_file():
    box = Sandbox()
    text = "a\n" + block("later.csv columns=key", "placeholder\n") + block("r.csv columns=key")
    path = box.doc(text)
    rc, out, err = box.run()
    new = path.read_text(encoding="utf-8")
    assert rc == 0 and "warning: results/h200/later.csv does not exist" in err, (
        f"missing file: normal mode exits 0 with a warning naming it: {rc} {err}")
    assert "placeholder\n<!-- /results -->" in new and "| 01 |" in new, (
        f"missing file: its block is left unchanged, the others are generated: {new}")
    rc, out, err = box.run("--check")
    assert rc == 2 and "results/h200/later.csv" in err and "chapters/c.md:2" in err and len(err.strip().splitlines()) == 1, (
        f"missing file: --check exits 2 naming the file and where it is used: {rc} {err}")
    box.close()


def test_a_check_that_checks_nothing_fails():
    rc, out, err = run_script("--check", "--root", "/nonexistent/repository")
    assert ((rc == 2 and "--root '/nonexistent/repository' is not a "
          "directory" in err and len(err.strip().splitlines()) == 1)), f"--check --root /nonexistent: exit 2 naming it: exit {rc}: {(out + err).strip()}"
    with tempfile.TemporaryDirectory() as empty:
        rc, out, err = run_script("--check", "--root", empty)
        assert rc == 2 and "nothing was checked" in err, (
            f"--check on a folder with no document fails (nothing was checked): exit {rc}: {(out + err).strip()}")
    box = Sandbox()
    box.doc("a chapter without a generated part\n")
    rc, out, err = box.run("--check")
    assert rc == 2 and "nothing was checked" in err, (
        f"--check over documents without a generated part fails (nothing was checked): exit {rc}: {(out + err).strip()}")
    box.close()


def test_rewriting_touches_no_other_file():
    box = Sandbox()
    path = box.doc("intro\n" + block("r.csv columns=key"))
    mine = path.with_name(path.name + ".tmp")
    mine.write_text("the user's own file\n", encoding="utf-8")
    rc, _, err = box.run()
    assert ((rc == 0 and mine.read_text(encoding="utf-8") ==
          "the user's own file\n" and "| 01 |" in path.read_text(encoding="utf-8"))), f"a rewrite leaves the user's FILE.tmp alone: {err}"
    assert sorted(p.name for p in path.parent.iterdir()) == ["c.md", "c.md.tmp"], (
        f"a rewrite leaves nothing else behind: {str(sorted(p.name for p in path.parent.iterdir()))}")
    box.close()


def test_stage_list():
    box = Sandbox()
    write_registry(box, [
        "01,first,stage,the first,reduction/01_first.cu,chapters/c.md",
        "lib,lib,baseline,a library,reduction/baselines/lib.cu,chapters/c.md",
    ])
    path = box.doc("<!-- stages: kind=all -->\n<!-- /stages -->\n")
    rc, _, err = box.run()
    text = path.read_text(encoding="utf-8")
    assert ((rc == 0 and "| 01 | the first | [reduction/01_first.cu](../reduction/01_first.cu) | [chapters/c.md](c.md) |"
          in text and text.index("| 01 |") < text.index("| lib |"))), f"stage list: generated from the registry in its order: {text + err}"
    (box.root / "results" / "registry.csv").unlink()
    rc, _, err = box.run()
    assert rc == 2 and "reduce --list --format csv" in err, (
        f"stage list: a missing registry snapshot is an error that names the command writing it: {err}")
    box.close()


def test_markers_do_not_split_paragraphs():
    """A line that starts with an HTML comment starts an HTML block in Markdown, which
    would cut a sentence in two: value markers must sit inside a line of text, and a
    claim on a line of its own must end its paragraph."""
    bad = []
    for md in markdown_files():
        if not md.is_file():
            continue
        lines = without_code(md.read_text(encoding="utf-8")).split("\n")
        for i, line in enumerate(lines):
            # Indented too: inside a list item the indentation is the item's own.
            if line.lstrip().startswith("<!-- value:"):
                bad.append(f"{md.relative_to(ROOT)}:{i + 1}: a value marker starts the line")
            if re.fullmatch(r"<!-- claim:.*-->", line.strip()) and i + 1 < len(lines):
                following = lines[i + 1]
                if following.strip() and not following.lstrip().startswith(("<!--", "#", "|", "-", "*", "`")):
                    bad.append(f"{md.relative_to(ROOT)}:{i + 1}: a claim line splits a paragraph")
    assert not bad, "markers keep paragraphs whole" + detail("\n    ".join(bad))


def test_code_excerpts():
    box = Sandbox()
    src = box.root / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "// header\ntemplate <int N>\n__global__ void k(float* p) {\n  if (p) {\n#pragma unroll\n"
        "    p[0] = 1;  // a } in a comment\n  }\n}\nint after;\n",
        encoding="utf-8",
    )
    path = box.doc(
        "<!-- code: src/k.cu start=__global__ before=1 -->\n<!-- /code -->\n"
        "<!-- code: src/k.cu start=\"if \\(p\\)\" end=\"^  \\}\" -->\n<!-- /code -->\n"
        "<!-- code: src/k.cu start=after lines=1 -->\n<!-- /code -->\n"
    )
    rc, _, err = box.run()
    text = path.read_text(encoding="utf-8")
    assert rc == 0, f"code: exit 0: {err}"
    assert (("[src/k.cu](../src/k.cu), lines 2-8:\n\n```cuda\ntemplate <int N>\n__global__ void k(float* p) {" in text
          and "\n  }\n}\n```" in text)), f"code: a whole block by braces, with the line before: {text}"
    assert "lines 4-7:\n\n```cuda\nif (p) {\n#pragma unroll\n  p[0] = 1;  // a } in a comment\n}\n```" in text, (
        f"code: start..end, dedented, #pragma kept in column 0: {text}")
    assert "line 9:\n\n```cuda\nint after;\n```" in text, f"code: one line: {text}"
    (src / "k.cu").write_text("// a new first line\n" + (src / "k.cu").read_text(encoding="utf-8"), encoding="utf-8")
    rc, out, _ = box.run("--check")
    assert rc == 1 and "is stale" in out, f"code: an edited source makes its excerpt stale: {out}"
    expect_error("code: a start pattern that matches nothing", box,
                 "<!-- code: src/k.cu start=nothing_here -->\n<!-- /code -->\n", "no line matching start=")
    expect_error("code: a missing source file", box, "<!-- code: src/none.cu start=x -->\n<!-- /code -->\n",
                 "src/none.cu does not exist")
    box.close()


def test_claims():
    box = Sandbox()
    path = box.doc(
        "Stage 02 is faster. <!-- claim: r.csv median_us[key=02] < median_us[key=01] -->\n"
        "All checks are fast enough. <!-- claim: r.csv median_us[] <= 100.04 -->\n"
        "Close. <!-- claim: sweep.csv median_us[n=2^20,key=13] ~20% median_us[n=2^20,key=cub] -->\n"
    )
    rc, out, err = box.run("--check")
    assert rc == 0 and "all 3 claims hold" in out, f"claim: true claims pass --check: {out + err}"
    path.write_text(path.read_text(encoding="utf-8") + "Wrong. <!-- claim: r.csv gbs[key=cub] < 100 -->\n",
                    encoding="utf-8")
    rc, out, err = box.run("--check")
    assert ((rc == 1 and "c.md:4: <!-- claim: r.csv gbs[key=cub] < 100 --> no longer holds (gbs[key=cub] = 167.7, 100 = 100)"
          in out)), f"claim: a false claim fails --check (exit 1) naming it and the values: {out + err}"
    rc, out, err = box.run()
    assert rc == 1 and "no longer holds" in out, f"claim: a false claim also fails a normal run (exit 1): {out + err}"
    expect_error("claim: an unknown column", box, "x <!-- claim: r.csv speed[key=01] > 1 -->\n", "no column 'speed'")
    expect_error("claim: an unknown operator", box, "x <!-- claim: r.csv gbs[key=01] >> 1 -->\n",
                 "unknown operator '>>'")
    expect_error("claim: a filter that selects nothing", box, "x <!-- claim: r.csv gbs[key=99] > 1 -->\n",
                 "selects no row")
    expect_error("claim: the wrong shape", box, "x <!-- claim: r.csv gbs[key=01] > -->\n", "FILE LEFT OPERATOR RIGHT")
    path.write_text("Two files. <!-- claim: r.csv median_us[key=cub] < sweep.csv:median_us[n=2^20,key=13] -->\n",
                    encoding="utf-8")
    rc, out, err = box.run("--check")
    assert rc in (0, 1) and "claim" in out + err, f"claim: a side may read another result file: {out + err}"
    holds = rc == 0
    path.write_text("Two files. <!-- claim: r.csv median_us[key=cub] >= sweep.csv:median_us[n=2^20,key=13] -->\n",
                    encoding="utf-8")
    rc2, out2, err2 = box.run("--check")
    assert holds != (rc2 == 0) and ("sweep.csv:median_us[n=2^20,key=13]" in out + out2), (
        f"claim: the other file's value decides the claim (one of < and >= fails): {out + err + out2 + err2}")
    box.close()


def test_claim_lists_ranges_chains():
    box = Sandbox()
    box.doc(
        "Size by size. <!-- claim: sweep.csv median_us[n=2^10..2^20,key=13] < median_us[key=cub] -->\n"
        "A list. <!-- claim: sweep.csv vs_cub[n=1024|2^20,key=13] > 1.1 -->\n"
        "A range. <!-- claim: r.csv 40 < gbs[key=01] <= 42 -->\n"
        "Equal. <!-- claim: r.csv vs_cub[key=cub] == 1 -->\n"
    )
    rc, out, err = box.run("--check", "--stats")
    assert rc == 0 and "all 4 claims hold" in out, f"claim forms: lists, ranges, chains and == hold: {out + err}"
    assert re.search(r"chapters/c\.md +0 +0 +0 +0 +4 +0 +7\n", out) is not None, (
        f"claim forms: --stats counts the number pairs compared (2 + 2 + 2 + 1): {out}")
    for claim, needle in [
        ("sweep.csv median_us[n=2^10|2^20,key=13] > median_us[key=cub]", "median_us[key=cub] = 4.8"),
        ("r.csv 42 < gbs[key=01] < 50", "42 = 42, gbs[key=01] = 41.9"),
        ("r.csv vs_cub[key=02] == 1", "vs_cub[key=02] = 0.5"),
        ("sweep.csv median_us[n=2^10..2^20,key=13] <= 7", "= 7.2"),
    ]:
        box.doc(f"False. <!-- claim: {claim} -->\n")
        rc, out, err = box.run("--check")
        assert rc == 1 and needle in out, f"claim forms: {claim} fails (exit 1) naming the values: {out + err}"
    expect_error("claim forms: both sides several rows, nothing to pair them by", box,
                 "x <!-- claim: sweep.csv median_us[key=13] < median_us[key=cub] -->\n", "both sides select several rows")
    expect_error("claim forms: a range of words", box,
                 "x <!-- claim: sweep.csv median_us[n=a..b] < 1 -->\n", "must read A..B with two numbers")
    expect_error("claim forms: a chain that ends in an operator", box,
                 "x <!-- claim: r.csv 1 < gbs[key=01] < -->\n", "FILE LEFT OPERATOR RIGHT")
    box.close()


def test_helpers():
    assert docs.format_value("16777216", "pow2", "n", "") == "2^24", "format: pow2"
    assert docs.format_value("1000", "pow2", "n", "") == "1000", "format: pow2 of a non-power"
    assert docs.format_value("256", None, "grid", "") == "256", "format: default for an unknown integer column"
    assert docs.format_value("3.14159265", None, "x", "") == "3.142", "format: default for an unknown float column"
    assert docs.format_value("3*", None, "reps", "") == "3*", "format: text kept"
    assert docs.same_value("1048576", "2^20") and not docs.same_value("01", "cub"), "values: 2^k equals its number"
    assert docs.markdown_cell("a|b") == "a\\|b", "markdown: a pipe in a cell is escaped"


if __name__ == "__main__":  # python3 tests/host/test_docs.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
