#!/usr/bin/env python3
"""scripts/result_files.py is the one reader of result files:

  - the docs generator's views, the figures and the metric tables (docs_views.py,
    plot.py, plot_access.py, ncu_table.py, access_ncu.py) import result_files and, of the
    project's other scripts, only output_files (plot_access.py also takes plot.py's two
    drawing helpers); none imports update_docs.py, plot.py's reader or ncu_table.py;
    update_docs.py reads the result files through its views (docs_views.py) only;
  - no script but result_files.py uses the csv module or parses a metadata line or an
    ncu export's header itself;
  - what it reads and writes: a CSV it writes loads back with the same metadata, columns
    and rows; malformed files, missing files and missing columns raise its error with
    a sentence naming the file.

usage: test_result_files.py SOURCE_DIR
"""
import ast
import math
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]))
SCRIPTS = ROOT / "scripts"
READERS = ["docs_views.py", "plot.py", "plot_access.py", "ncu_table.py", "access_ncu.py"]
# Names a reader may take from another script of the project, per script.
ALLOWED = {"output_files": None, "result_files": None, "plot": {"count_label", "pyplot", "save"}}

failures = []
passed = 0


def check(what, cond, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}" + (f"\n    {detail}" if detail else ""))


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


check("scripts/result_files.py exists", (SCRIPTS / "result_files.py").is_file())

# ---- who reads result files through what ---------------------------------------------
for name in READERS:
    path = SCRIPTS / name
    if not path.is_file():
        check(f"{name} exists", False)
        continue
    imports = project_imports(path)
    check(f"{name} imports result_files", any(m == "result_files" for m, _ in imports), str(imports))
    for module, names in imports:
        allowed = ALLOWED.get(module, set())
        ok = module in ALLOWED and (allowed is None or (names is not None and names <= allowed))
        check(f"{name}: imports {module}{'' if names is None else ' ' + ','.join(sorted(names))} "
              "only for what is not reading results", ok,
              f"allowed: {', '.join(sorted(ALLOWED))} (plot only for {', '.join(sorted(ALLOWED['plot']))})")
    check(f"{name} does not import the csv module (result_files reads and writes the CSVs)",
          "csv" not in stdlib_imports(path))

docs_imports = project_imports(SCRIPTS / "update_docs.py")
check("update_docs.py reads the result files through docs_views.py only",
      {m for m, _ in docs_imports} == {"docs_views", "output_files"}, str(docs_imports))

for path in sorted(SCRIPTS.glob("*.py")):
    if path.name == "result_files.py":
        continue
    text = path.read_text(encoding="utf-8")
    check(f"{path.name} parses no CSV itself (csv.reader is result_files.py's)", "csv.reader(" not in text)
    check(f"{path.name} finds no ncu table itself", "startswith('\"ID\"')" not in text)
    check(f"{path.name} defines no reader of its own", "def load_result_csv(path" not in text
          or "result_files.load(" in text)

# ---- what result_files reads and writes ----------------------------------------------
sys.path.insert(0, str(SCRIPTS))
try:
    import result_files  # noqa: E402
except ImportError as e:
    check("result_files imports", False, str(e))
    print(f"\n{passed} passed, {len(failures)} failed")
    sys.exit(1)

with tempfile.TemporaryDirectory() as tmp:
    tmp = Path(tmp)
    rows = [{"key": "01", "median_us": 12.5, "gbs": math.nan}, {"key": "cub", "median_us": 3.0, "gbs": 4000.0}]
    text = result_files.csv_text(["key", "median_us", "gbs"], rows, [("device", "Test GPU"), ("peak_gbs", "4800")])
    good = tmp / "good.csv"
    good.write_text(text, encoding="utf-8")
    r = result_files.load(good)
    check("load: metadata", r.meta == {"device": "Test GPU", "peak_gbs": "4800"}, str(r.meta))
    check("load: columns", r.columns == ["key", "median_us", "gbs"], str(r.columns))
    check("load: rows, NaN written as an empty cell", r.rows == [{"key": "01", "median_us": "12.5", "gbs": ""},
                                                                {"key": "cub", "median_us": "3", "gbs": "4000"}],
          str(r.rows))
    check("number: an empty cell is NaN", math.isnan(r.number(r.rows[0], "gbs")))
    check("number: a value", r.number(r.rows[1], "gbs") == 4000.0)
    check("peak_gbs from the metadata", r.peak_gbs() == 4800.0)

    def raises(what, call, error, words):
        try:
            call()
        except error as e:
            check(what, all(w in str(e) for w in words), f"message: {e}")
            return
        except Exception as e:  # noqa: BLE001  the wrong kind of error is a failure too
            check(what, False, f"raised {type(e).__name__}: {e}")
            return
        check(what, False, "nothing raised")

    def bad(name, body):
        p = tmp / name
        p.write_text(body, encoding="utf-8")
        return p

    RFE = result_files.ResultFileError
    raises("a missing file is MissingFile", lambda: result_files.load(tmp / "none.csv"), result_files.MissingFile,
           ["none.csv"])
    raises("read_table: a missing file names it", lambda: result_files.read_table(str(tmp / "none.csv"), []), RFE,
           ["none.csv", "no such file"])
    raises("a bad metadata line", lambda: result_files.load(bad("m.csv", "# nothing here\nkey\n1\n")), RFE,
           ["m.csv:1", "# key: value"])
    raises("a '#' line after the header", lambda: result_files.load(bad("h.csv", "key\n# x: y\n")), RFE,
           ["h.csv:2"])
    raises("no header row", lambda: result_files.load(bad("e.csv", "# a: b\n")), RFE, ["e.csv", "no header row"])
    raises("a short row", lambda: result_files.load(bad("s.csv", "a,b\n1\n")), RFE, ["s.csv:2", "1 fields"])
    raises("a column twice", lambda: result_files.load(bad("d.csv", "a,a\n1,2\n")), RFE, ["d.csv", "'a'"])
    raises("read_table: a missing column", lambda: result_files.read_table(str(good), ["key", "check"]), RFE,
           ["good.csv", "check"])
    raises("read_table: no rows", lambda: result_files.read_table(str(bad("n.csv", "key\n")), ["key"]), RFE,
           ["n.csv", "no rows"])
    raises("number: text in a number column", lambda: r.number({"x": "fast"}, "x"), RFE, ["'fast'"])
    raises("peak_gbs: missing", lambda: result_files.read_table(str(bad("p.csv", "key\n1\n")), ["key"]).peak_gbs(),
           RFE, ["p.csv", "peak_gbs"])
    raises("ncu export without a table", lambda: result_files.ncu_table(str(bad("x.csv", "==PROF== hi\n"))), RFE,
           ["x.csv", "no ncu raw-page table"])
    start, records = result_files.ncu_table(str(bad("y.csv", '==PROF== x\n"ID","Kernel Name"\n"",""\n"0","k"\n')))
    check("ncu export: the table starts at the ID line", start == 1 and records[2] == ["0", "k"], str(records))
    check("ncu number: thousands separator", result_files.ncu_number("1,234.5", "w") == 1234.5)
    check("ncu number: n/a is NaN", math.isnan(result_files.ncu_number("n/a", "w")))
    raises("ncu number: text", lambda: result_files.ncu_number("abc", "y.csv:4"), RFE, ["y.csv:4", "'abc'"])

print(f"\n{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
