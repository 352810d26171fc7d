#!/usr/bin/env python3
"""scripts/results_manifest.py on small git repositories made here: the commit a file
records is shown, a file that records none names the git commit that last changed it
(and says it is not the recorded one), a table printed beside its CSV takes the CSV's
commit only when both were committed together, a file nothing accounts for and a stale
MANIFEST.md make --check fail, and a shallow clone is refused with exit 77.

usage: python3 -m pytest tests/host/test_results_manifest.py
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "results_manifest.py"
ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
           GIT_COMMITTER_EMAIL="t@example.com")
TABLE = "# device: GPU\n# commit: 0123456789ab\n# date: 2026-01-01T00:00:00Z\nn,key,median_us\n16777216,01,12.5\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=ENV).stdout


def commit(repo: Path, files: dict[str, str], message: str = "results") -> str:
    """Writes the files, commits them, returns the commit's short hash (7 characters)."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", *files)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()[:7]


def run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(repo), *args], capture_output=True, text=True)


def row(repo: Path, rel: str) -> str:
    """The manifest's row of results/REL."""
    rows = [line for line in (repo / "results/MANIFEST.md").read_text().splitlines() if f"]({rel})" in line]
    assert len(rows) == 1, f"{rel}: {rows}"
    return rows[0]


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q")
    return tmp_path


def test_recorded_commit_and_command(repo):
    made = commit(repo, {"results/h200/reduce_2p24.csv": TABLE, "results/h200/reduce_2p24.txt": "the table\n",
                         "results/h200/ctest.txt": "Test project /tmp/build-gpu\n"})
    r = run(repo)
    assert r.returncode == 0, r.stderr
    csv = row(repo, "h200/reduce_2p24.csv")
    assert "`0123456789ab`" in csv and "`TABLE_SIZES=24 scripts/device.sh table`" in csv
    assert made not in csv, "a file that records its commit is shown with that commit only"
    assert "`0123456789ab` (its CSV's: committed with it)" in row(repo, "h200/reduce_2p24.txt")
    ctest = row(repo, "h200/ctest.txt")
    assert f"not recorded (committed in `{made}`)" in ctest and "`scripts/device.sh test`" in ctest
    assert "3 files: 1 record their commit, 1 take their CSV's, 1 record none." in (
        repo / "results/MANIFEST.md").read_text()
    assert run(repo, "--check").returncode == 0


def test_command_line_and_header_text(repo):
    commit(repo, {"results/h200/extra.csv": "# command: reduce --n 2^20\n# commit: abcdef1234\nn\n1\n",
                  "results/h200/sass_x.txt": "$ cuobjdump x.o (sm_90, built from commit 4d1aed3)\n",
                  "results/h200/history/ab_z.csv": "# commit: ab\nn\n1\n"})
    assert run(repo).returncode == 0
    assert "| `reduce --n 2^20` | `abcdef1234` |" in row(repo, "h200/extra.csv")
    assert "`4d1aed3` (in its header)" in row(repo, "h200/sass_x.txt")
    ab = row(repo, "h200/history/ab_z.csv")  # "ab" names no commit: not shown as one
    assert "`AB_TAG=z scripts/device.sh ab`" in ab and "not recorded (`ab` in the file; committed in" in ab


def test_table_committed_apart_from_its_csv(repo):
    commit(repo, {"results/h200/sweep.csv": TABLE})
    later = commit(repo, {"results/h200/sweep.txt": "an older table\n"})
    assert run(repo).returncode == 0
    assert f"not recorded (committed in `{later}`)" in row(repo, "h200/sweep.txt")


def test_unaccounted_file_fails(repo):
    commit(repo, {"results/h200/sweep.csv": TABLE, "results/h200/mystery.txt": "no header\n"})
    r = run(repo)
    assert r.returncode == 1 and "results/h200/mystery.txt records no command" in r.stderr, r.stderr
    assert not (repo / "results/MANIFEST.md").exists(), "nothing is written while a file is unaccounted for"
    r = run(repo, "--check")
    assert r.returncode == 1 and "results/h200/mystery.txt" in r.stderr, r.stderr


def test_stale_or_missing_manifest_fails_check(repo):
    commit(repo, {"results/h200/sweep.csv": TABLE})
    r = run(repo, "--check")
    assert r.returncode == 1 and "results/MANIFEST.md does not exist" in r.stderr, r.stderr
    assert run(repo).returncode == 0 and run(repo, "--check").returncode == 0
    manifest = (repo / "results/MANIFEST.md").read_text()
    commit(repo, {"results/h200/reduce_2p28.csv": TABLE})  # a new result file: the manifest is stale
    r = run(repo, "--check")
    assert r.returncode == 1 and "results/MANIFEST.md differs from what it should say" in r.stderr, r.stderr
    assert (repo / "results/MANIFEST.md").read_text() == manifest, "--check writes nothing"
    assert run(repo).returncode == 0 and run(repo, "--check").returncode == 0
    (repo / "results/MANIFEST.md").write_text(manifest.replace("0123456789ab", "0123456789ac"))
    assert run(repo, "--check").returncode == 1, "an edited manifest fails too"


def test_history_names_the_documents(repo):
    commit(repo, {"results/h200/history/old_run.csv": TABLE, "results/h200/history/other.csv": TABLE,
                  "notes/a.md": "see results/h200/history/old_run.csv\n", "notes/b.md": "h100/history/other.csv\n"})
    assert run(repo).returncode == 0
    assert "named in [a.md](../notes/a.md)" in row(repo, "h200/history/old_run.csv")
    assert "named in no document" in row(repo, "h200/history/other.csv"), "another GPU's file is not this one"


def test_shallow_clone_is_refused(repo, tmp_path_factory):
    commit(repo, {"results/h200/sweep.csv": TABLE})
    commit(repo, {"results/h200/sweep.txt": "table\n"})
    clone = tmp_path_factory.mktemp("clone") / "c"
    git(repo, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    r = run(clone, "--check")
    assert r.returncode == 77 and "shallow clone" in r.stderr, r.stderr


def test_usage():
    assert subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True).returncode == 0
    r = subprocess.run([sys.executable, str(SCRIPT), "--root", "/nonexistent/x"], capture_output=True, text=True)
    assert r.returncode == 2 and "--root '/nonexistent/x' does not exist" in r.stderr, r.stderr
