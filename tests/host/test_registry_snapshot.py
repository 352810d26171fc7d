#!/usr/bin/env python3
"""results/registry.csv is exactly what `reduce --list --format csv` prints: the docs
generator reads that committed copy (so the docs check needs no build), and this test
keeps it in step with the registry the program is built from.

usage: REDUCE=PATH/TO/reduce SNAPSHOT=PATH/TO/results/registry.csv python3 -m pytest tests/host/test_registry_snapshot.py
   or: test_registry_snapshot.py PATH/TO/reduce PATH/TO/results/registry.csv
"""
import difflib
import subprocess
import sys

from conftest import env_arg, run_as_script


def test_snapshot_matches_reduce_list():
    reduce_bin, snapshot = env_arg("REDUCE", "PATH/TO/reduce"), env_arg("SNAPSHOT", "PATH/TO/results/registry.csv")
    p = subprocess.run([reduce_bin, "--list", "--format", "csv"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, f"{reduce_bin} --list --format csv exited {p.returncode}: {p.stderr.strip()}"
    with open(snapshot, encoding="utf-8") as f:
        committed = f.read()
    diff = difflib.unified_diff(committed.splitlines(True), p.stdout.splitlines(True), snapshot, "reduce --list")
    assert committed == p.stdout, (f"{snapshot} differs from the registry; run build/reduction/reduce --list --format "
                                   f"csv > results/registry.csv\n" + "".join(diff))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: test_registry_snapshot.py PATH/TO/reduce PATH/TO/results/registry.csv", file=sys.stderr)
        sys.exit(2)
    sys.exit(run_as_script(__file__, {"REDUCE": sys.argv[1], "SNAPSHOT": sys.argv[2]}))
