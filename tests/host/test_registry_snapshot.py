#!/usr/bin/env python3
"""scripts/registry.csv is exactly what `reduce --list --format csv` prints: the docs
generator reads that committed copy (so the docs check needs no build), and this test
keeps it in step with the registry the program is built from.

usage: test_registry_snapshot.py PATH/TO/reduce PATH/TO/scripts/registry.csv
"""
import difflib
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: test_registry_snapshot.py PATH/TO/reduce PATH/TO/scripts/registry.csv", file=sys.stderr)
        return 2
    reduce_bin, snapshot = sys.argv[1], sys.argv[2]
    p = subprocess.run([reduce_bin, "--list", "--format", "csv"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        print(f"FAIL: {reduce_bin} --list --format csv exited {p.returncode}: {p.stderr.strip()}")
        return 1
    with open(snapshot, encoding="utf-8") as f:
        committed = f.read()
    if committed != p.stdout:
        diff = difflib.unified_diff(committed.splitlines(True), p.stdout.splitlines(True), snapshot, "reduce --list")
        print(f"FAIL: {snapshot} differs from the registry; run build/reduction/reduce --list --format csv > "
              f"scripts/registry.csv\n" + "".join(diff))
        return 1
    print(f"ok: {snapshot} matches reduce --list --format csv ({len(p.stdout.splitlines()) - 2} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
