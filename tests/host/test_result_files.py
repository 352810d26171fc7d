#!/usr/bin/env python3
"""scripts/result_files.py is the one reader of result files:

  - the docs generator's views and the metric tables (docs_views.py, ncu_table.py,
    access_ncu.py) import result_files and, of the project's other scripts, only
    output_files; none imports update_docs.py or ncu_table.py (the figures, data plots
    included, read their CSVs through result_files in scripts/diagrams.py's registry);
    update_docs.py reads the result files through its views (docs_views.py) only;
  - no script but result_files.py uses the csv module or parses a metadata line or an
    ncu export's header itself;
  - what it reads and writes: a CSV it writes loads back with the same metadata, columns
    and rows; malformed files, missing files and missing columns raise its error with
    a sentence naming the file.

usage: python3 -m pytest tests/host/test_result_files.py
"""
import ast
import math
import sys
from pathlib import Path

import pytest

from conftest import ROOT

import result_files  # noqa: E402  (scripts/ is on the path: conftest.py)

SCRIPTS = ROOT / "scripts"
READERS = ["docs_views.py", "ncu_table.py", "access_ncu.py"]
# Names a reader may take from another script of the project, per script.
ALLOWED = {"output_files": None, "result_files": None}
RFE = result_files.ResultFileError


def project_imports(path: Path) -> list[tuple[str, set[str] | None]]:
    """(module, names taken or None for the whole module) for each import of a script in scripts/."""
    own = {p.stem for p in SCRIPTS.glob("*.py")}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names if a.name in own]
        elif isinstance(node, ast.ImportFrom) and node.module in own:
            found.append((node.module, {a.name for a in node.names}))
    return found


def stdlib_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


# ---- who reads result files through what ---------------------------------------------


@pytest.mark.parametrize("name", READERS)
def test_reader_imports_result_files_only(name):
    imports = project_imports(SCRIPTS / name)
    assert any(m == "result_files" for m, _ in imports), imports
    for module, names in imports:
        allowed = ALLOWED.get(module, set())
        assert module in ALLOWED and (allowed is None or (names is not None and names <= allowed)), \
            f"{name} imports {module} {names}: allowed {sorted(ALLOWED)}"
    assert "csv" not in stdlib_imports(SCRIPTS / name), "result_files reads and writes the CSVs"


def test_docs_generator_reads_through_its_views():
    imports = project_imports(SCRIPTS / "update_docs.py")
    assert {m for m, _ in imports} == {"docs_views", "output_files"}, imports


@pytest.mark.parametrize("path", sorted(p for p in SCRIPTS.glob("*.py") if p.name != "result_files.py"),
                         ids=lambda p: p.name)
def test_no_script_parses_results_itself(path):
    text = path.read_text(encoding="utf-8")
    assert "csv.reader(" not in text, "csv.reader is result_files.py's"
    assert "startswith('\"ID\"')" not in text, "the ncu table is found by result_files.py"
    assert "def load_result_csv(path" not in text or "result_files.load(" in text


# ---- what result_files reads and writes ----------------------------------------------


@pytest.fixture
def good(tmp_path):
    rows = [{"key": "01", "median_us": 12.5, "gbs": math.nan}, {"key": "cub", "median_us": 3.0, "gbs": 4000.0}]
    text = result_files.csv_text(["key", "median_us", "gbs"], rows, [("device", "Test GPU"), ("peak_gbs", "4800")])
    path = tmp_path / "good.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_written_csv_loads_back(good):
    r = result_files.load(good)
    assert r.meta == {"device": "Test GPU", "peak_gbs": "4800"}
    assert r.columns == ["key", "median_us", "gbs"]
    assert r.rows == [{"key": "01", "median_us": "12.5", "gbs": ""}, {"key": "cub", "median_us": "3", "gbs": "4000"}]
    assert math.isnan(r.number(r.rows[0], "gbs")) and r.number(r.rows[1], "gbs") == 4000.0
    assert r.peak_gbs() == 4800.0


def bad(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


@pytest.mark.parametrize("what, call, error, words", [
    ("a missing file is MissingFile", lambda d: result_files.load(d / "none.csv"), result_files.MissingFile,
     ["none.csv"]),
    ("read_table: a missing file names it", lambda d: result_files.read_table(str(d / "none.csv"), []), RFE,
     ["none.csv", "no such file"]),
    ("a bad metadata line", lambda d: result_files.load(bad(d, "m.csv", "# nothing here\nkey\n1\n")), RFE,
     ["m.csv:1", "# key: value"]),
    ("a '#' line after the header", lambda d: result_files.load(bad(d, "h.csv", "key\n# x: y\n")), RFE, ["h.csv:2"]),
    ("no header row", lambda d: result_files.load(bad(d, "e.csv", "# a: b\n")), RFE, ["e.csv", "no header row"]),
    ("a short row", lambda d: result_files.load(bad(d, "s.csv", "a,b\n1\n")), RFE, ["s.csv:2", "1 fields"]),
    ("a column twice", lambda d: result_files.load(bad(d, "d.csv", "a,a\n1,2\n")), RFE, ["d.csv", "'a'"]),
    ("read_table: no rows", lambda d: result_files.read_table(str(bad(d, "n.csv", "key\n")), ["key"]), RFE,
     ["n.csv", "no rows"]),
    ("peak_gbs: missing", lambda d: result_files.read_table(str(bad(d, "p.csv", "key\n1\n")), ["key"]).peak_gbs(),
     RFE, ["p.csv", "peak_gbs"]),
    ("ncu export without a table", lambda d: result_files.ncu_table(str(bad(d, "x.csv", "==PROF== hi\n"))), RFE,
     ["x.csv", "no ncu raw-page table"]),
    ("ncu number: text", lambda d: result_files.ncu_number("abc", "y.csv:4"), RFE, ["y.csv:4", "'abc'"]),
    ("ncu export: a duration in cycles", lambda d: result_files.ncu_kernels(
        str(bad(d, "c.csv", '"ID","Kernel Name","gpu__time_duration.sum"\n"","","cycle"\n"0","k","5"\n')),
        ["gpu__time_duration.sum"]), RFE, ["c.csv", "unexpected unit 'cycle'"]),
    ("ncu export: a metric missing", lambda d: result_files.ncu_kernels(
        str(bad(d, "q.csv", '"ID","Kernel Name"\n"",""\n"0","k"\n')), ["dram__bytes_read.sum"]), RFE,
     ["q.csv", "dram__bytes_read.sum"]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_refusals_name_the_file(tmp_path, what, call, error, words):
    with pytest.raises(error) as e:
        call(tmp_path)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_read_table_asks_for_columns(good):
    with pytest.raises(RFE, match="check"):
        result_files.read_table(str(good), ["key", "check"])
    with pytest.raises(RFE, match="'fast'"):
        result_files.load(good).number({"x": "fast"}, "x")


def test_ncu_exports(tmp_path):
    start, records = result_files.ncu_table(str(bad(tmp_path, "y.csv", '==PROF== x\n"ID","Kernel Name"\n"",""\n"0","k"\n')))
    assert start == 1 and records[2] == ["0", "k"]
    assert result_files.ncu_number("1,234.5", "w") == 1234.5 and math.isnan(result_files.ncu_number("n/a", "w"))
    export = bad(tmp_path, "u.csv", '"ID","Kernel Name","gpu__time_duration.sum","dram__bytes_read.sum","x"\n'
                 '"","","usecond","Mbyte",""\n"0","k","1.5","2","n/a"\n')
    [(line, name, values)] = result_files.ncu_kernels(str(export), ["gpu__time_duration.sum", "dram__bytes_read.sum", "x"])
    assert (line, name) == (3, "k")
    assert values["gpu__time_duration.sum"] == 1500.0 and values["dram__bytes_read.sum"] == 2e6, "units to ns and bytes"
    assert math.isnan(values["x"])


def test_text_table():
    columns = [("name", "name", 6, None), ("v", "value", 7, 2)]
    text = result_files.text_table(columns, [{"name": "a", "v": 1.234}, {"name": "bb", "v": math.nan}], rule=True)
    assert text.splitlines() == ["name     value", "--------------", "a         1.23", "bb         n/a"]


if __name__ == "__main__":  # python3 tests/host/test_result_files.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))


# ---- compare_result_files.py: the same names and columns in two folders ----------------


def _csv(path, columns, meta=("commit",)):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"# {k}: x\n" for k in meta) + ",".join(columns) + "\n" + ",".join("1" for _ in columns) + "\n")


def test_compare_result_files(tmp_path):
    import compare_result_files as c

    old, new = tmp_path / "old", tmp_path / "new"
    _csv(old / "reduce_2p24.csv", ["stage", "us"])
    _csv(old / "history" / "flush.csv", ["stage", "us"])
    (old / "ctest.txt").write_text("old\n")
    _csv(new / "reduce_2p20.csv", ["stage", "us"])  # another size: matched
    _csv(new / "flush.csv", ["stage", "us"])  # kept in history/
    (new / "ctest.txt").write_text("new\n")
    (new / "only_new.txt").write_text("x\n")
    (new / "profile").mkdir()
    (new / "profile" / "r.ncu-rep").write_bytes(b"\0")
    lines, bad = c.compare(old, new)
    assert bad == 0
    assert "ok       reduce_2p20.csv: same 2 columns and 1 metadata keys (as reduce_2p24.csv)" in lines
    assert any(line.startswith("ok       flush.csv") and "history/flush.csv" in line for line in lines)
    assert any(line.startswith("unkept   only_new.txt") for line in lines)
    assert any(line.startswith("working  profile/r.ncu-rep") for line in lines)

    _csv(new / "reduce_2p20.csv", ["stage", "ms"])  # a renamed column
    _csv(new / "flush.csv", ["stage", "us"], meta=("commit", "gpu"))  # a new metadata key
    lines, bad = c.compare(old, new)
    assert bad == 2
    assert any("DIFFERS  reduce_2p20.csv: columns (missing ['us'], new ['ms']" in line for line in lines)
    assert any("DIFFERS  flush.csv: metadata keys ['gpu']" in line for line in lines)
    assert c.main([str(old), str(new)]) == 1
    assert c.main([str(old), str(tmp_path / "none")]) == 2


def test_compare_counts_per_gpu_keys_as_one(tmp_path):
    import compare_result_files as c

    old, new = tmp_path / "old", tmp_path / "new"
    _csv(old / "multi_gpu.csv", ["gpus", "us"], meta=("commit", "gpu0", "gpu1", "gpu2", "gpu3"))
    _csv(new / "multi_gpu.csv", ["gpus", "us"], meta=("commit", "gpu0", "gpu1"))
    lines, bad = c.compare(old, new)
    assert bad == 0, lines
    _csv(new / "multi_gpu.csv", ["gpus", "us"], meta=("gpu0", "gpu1"))  # the commit line gone
    lines, bad = c.compare(old, new)
    assert bad == 1 and "metadata keys ['commit']" in lines[0]
