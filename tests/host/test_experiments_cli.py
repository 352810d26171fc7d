#!/usr/bin/env python3
"""experiments/single_pass_variants' command line: --help, and exit code 2 with one
sentence for a missing or unknown experiment and an unwritable --csv file. Runs with or
without a GPU (the refusals come before the device is looked for).

usage: test_experiments_cli.py PATH/TO/single_pass_variants
"""
import subprocess
import sys

program = sys.argv[1]
failures = []


def run(args):
    p = subprocess.run([program] + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


rc, out, err = run(["--help"])
if rc != 0 or any(mode not in out for mode in ("finish", "lastblock", "critical", "phases", "bulk", "shapes", "tiles")):
    failures.append(f"--help: exit {rc}, output {out!r}")
for args, needle in [
    ([], "name an experiment"),
    (["bogus"], "unexpected argument 'bogus'"),
    (["finish", "tiles"], "unexpected argument 'tiles'"),
    (["bulk", "shapes"], "unexpected argument 'shapes'"),
    (["lastblock", "phases"], "unexpected argument 'phases'"),
    (["critical", "finish"], "unexpected argument 'finish'"),
    (["finish", "--csv", "/nonexistent/dir/x.csv"], "/nonexistent/dir/x.csv"),
]:
    rc, out, err = run(args)
    if rc != 2 or needle not in err:
        failures.append(f"{args}: exit {rc} (expected 2), stderr {err!r} (expected {needle!r})")

for f in failures:
    print("FAIL:", f)
print(f"{8 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
