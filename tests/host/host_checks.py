"""The tally the host test scripts share: check() counts a passed check or records a
failure (fail() records one directly), and finish() prints the count and every failure,
then exits 1 if there was one, else 0."""
import sys

failures = []
_passed = [0]


def check(cond, what):
    if cond:
        _passed[0] += 1
    else:
        failures.append(what)


def fail(what):
    failures.append(what)


def finish():
    print(f"{_passed[0]} checks passed, {len(failures)} failed")
    for f in failures:
        print("FAILED:", f)
    sys.exit(1 if failures else 0)
