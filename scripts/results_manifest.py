#!/usr/bin/env python3
"""results/MANIFEST.md: every committed result file (git ls-files results/), what made it
and the commit of the code it was made from.

    scripts/results_manifest.py [--check] [--root DIR]

The commit is the one the file records: a '# commit:' metadata line (the runners, the
Python timers, profile.sh, ...), else "commit HASH" or "built from HASH" in its header.
A .txt that records none takes the commit of the .csv of the same name when both were
last changed by the same git commit (the table the CSV's run printed). Otherwise the
manifest says "not recorded" and names the git commit that last changed the file: when
it was committed, not the code it was made from (so commit a new result file first, then
write the manifest and commit it).
What made it: the file's '# command:' line, else the first row of WRITERS below whose
pattern matches its path; a file in a history/ folder that no row matches is an earlier
or A/B run. For a history/ file the manifest also names the documents that mention it.
Without --check, MANIFEST.md is written (to a new file renamed into place). With --check
nothing is written. Either way, a file that records no command and matches no row is a
problem (nothing is written); --check also fails when MANIFEST.md is not what this
script writes now. Each problem is one sentence on stderr.
Exit codes: 0 done; 1 a problem above; 2 bad usage; 77 no git history to read (not a
git checkout, or a shallow clone, where the commits that changed the files are unknown).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import output_files  # noqa: E402  the checked, whole-file write
from result_files import METADATA_RE  # noqa: E402  the '# key: value' lines, read as load() reads them

MANIFEST = "results/MANIFEST.md"
ANY, MULTI = r"[^/]+/", r"[^/]+x\d+/"  # a GPU folder; a multi-GPU one (results/<gpu>x<N>)
# (pattern, fullmatched against the path below results/; what made it, with \1... the
# pattern's groups and {gpu} the GPU folder). The first row that matches wins.
WRITERS = [
    (r"build/cuda12_build\.txt", "`scripts/cuda12_build.sh`"),
    (r"registry\.csv", "`build/reduction/reduce --list --format csv` (the registry; the ctest registry_snapshot keeps it current)"),
    (ANY + r"ctest\.txt", "`scripts/device.sh test`"),
    (ANY + r"ctest_gpu_arch_([\w-]+)\.txt", r"`ARCHS=\1 scripts/device.sh arch`"),
    (ANY + r"ctest_gpu\.txt", "by hand: `ctest -L gpu` in the build of `scripts/device.sh build`"),
    (ANY + r"reduce_2p(\d+)\.(csv|txt)", r"`TABLE_SIZES=\1 scripts/device.sh table`"),
    (ANY + r"sweep\.(csv|txt)", "`scripts/device.sh sweep`"),
    (ANY + r"(library_sweep\.(csv|txt)|library_ctest\.txt|sanitize_library\.txt)", "`scripts/device.sh library`"),
    (ANY + r"(history/)?reduce_2p(\d+)_write_flush\.(csv|txt)", "`scripts/device.sh flush`"),
    (ANY + r"(history/)?sanitize\.txt", "`scripts/device.sh sanitize` (its runner, sizes and tools head the file)"),
    (ANY + r"(history/)?sanitize_\w+\.txt",
     "`SANITIZE_STAGES=STAGES scripts/device.sh sanitize`, its sanitize.txt renamed (its runner, sizes and tools"
     " head the file)"),
    (ANY + r"ncu_metrics(_\w+)?\.(csv|txt)", "`scripts/profile.sh` (`scripts/device.sh profile`)"),
    (ANY + r"ncu/(mixed_precision|occupancy)_(\w+)\.csv", r"`scripts/profile.sh --program \1`: its export of \2"),
    (ANY + r"(experiment_warp_tools|racecheck_volatile_warp)\.(csv|txt)", "`scripts/device.sh warp_tools`"),
    (ANY + r"experiment_(\w+)\.(csv|txt)", r"`LAB_EXPERIMENTS=\1 scripts/device.sh lab`"),
    (ANY + r"history/ab_([\w.-]+)\.csv", r"`AB_TAG=\1 scripts/device.sh ab`"),
    (ANY + r"access_(\d\d_\w+|ncu|sass_index|device)\.(csv|txt)", "`scripts/device.sh access`"),
    (ANY + r"access_\w+\.png", "`scripts/plot_access.py` (`scripts/device.sh access`)"),
    (ANY + r"(ladder|sweep|mixed_precision)\.png", "`scripts/plot.py --results results/{gpu}`"),
    (ANY + r"histogram_(256|4096|sanitize|device)\.(csv|txt)", "`scripts/device.sh histogram`"),
    (ANY + r"histogram_torch\.(csv|txt)", "`scripts/time_torch_histogram.py` (`scripts/device.sh histogram`)"),
    (ANY + r"mixed_precision_(2p\d+\.csv|device\.txt)", "`scripts/device.sh mixed_precision`"),
    (MULTI + r"device_multi_gpu\.log", "by hand: the console output of `scripts/device.sh multi_gpu`"),
    (MULTI + r"(topology|multi_gpu\w*|nccl_transports)\.(csv|txt)", "`scripts/device.sh multi_gpu`"),
    (ANY + r"multi_gpu\w*_1gpu\.(csv|txt)", "`scripts/device.sh multi_gpu` on one GPU"),
    (ANY + r"multi_gpu_test\.txt", "by hand: `gpu_multi_gpu_tests` on one GPU"),
    (ANY + r"occupancy_\w+\.(csv|txt)", "`scripts/device.sh occupancy`"),
    (ANY + r"peers_(ceiling|cub_modes)\.(csv|txt)", r"`scripts/device.sh peers` (peers/\1)"),
    (ANY + r"peers_torch_cupy\.(csv|txt)", "`scripts/time_torch_cupy.py` (`scripts/device.sh peers`)"),
    (ANY + r"scan_(tests|sanitize|int_inclusive|int_exclusive|float_inclusive|bounds_int_\w+)\.(csv|txt)",
     "`scripts/device.sh scan`"),
    (ANY + r"scan_torch\.(csv|txt)", "`scripts/time_torch_scan.py` (`scripts/device.sh scan`)"),
    (ANY + r"scan_ncu_2p26\.csv", "by hand: Nsight Compute over the scan runner at 2^26 (its console output)"),
    (ANY + r"stage(\d+)_bits_vs_(\w+)\.txt",
     r"`scripts/compare_bits.py results/\2/sweep.csv results/{gpu}/sweep.csv --key \1 --out FILE`"),
    (ANY + r"sass_\w+\.txt", "by hand: `nvcc -cubin` and `cuobjdump -sass` (the commands head the file)"),
    (ANY + r"test_ci_preset\.txt", "by hand: `PRESET=ci scripts/test.sh`"),
    (ANY + r"(history/)?doc_commands\.txt", "`scripts/run_doc_commands.py --out FILE`"),
]
# "commit HASH" or "built from HASH" in a file's first lines or its '#' header.
COMMIT_TEXT = re.compile(r"\b(?:commit|built from) ([0-9a-f]{7,40}(?:-dirty)?)\b")
HASH = re.compile(r"\b(?=[a-f]*\d)[0-9a-f]{7,40}\b")  # a commit hash in a '# commit:' line


class NoHistory(Exception):
    """No git history to read; the message says why."""


def git(root: Path, *args: str, found_nothing: int = 0) -> str:
    """git's output; `found_nothing` is an exit code that means an empty answer (git grep's 1)."""
    r = subprocess.run(["git", "-C", str(root), "-c", "core.quotePath=false", *args], capture_output=True, text=True)
    if r.returncode not in (0, found_nothing):
        raise NoHistory(f"'{root}' is not a git checkout (git {args[0]}: {r.stderr.strip()})")
    return r.stdout


def header(path: Path) -> tuple[dict[str, str], list[str]]:
    """The file's leading '# key: value' lines (as result_files.load reads them), and its
    header text: the leading '#' lines and the first three lines. Nothing for a binary file."""
    try:
        lines = path.read_bytes()[:65536].decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}, []
    meta, text = {}, lines[:3]
    for line in lines:
        if not line.startswith("#"):
            break
        text.append(line)
        m = METADATA_RE.match(line)
        if m:
            meta[m.group(1)] = m.group(2).strip()
    return meta, text


def cell(text: str, limit: int = 70) -> str:
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("|", "\\|")


def recorded(path: Path) -> tuple[str, str, str]:
    """(commit, command, other) as the file records them: its commit line or the hashes its
    header names, its command line, and a commit line naming no hash ("ab", "unknown"),
    each "" when there is none."""
    meta, text = header(path)
    commit, other = meta.get("commit", ""), ""
    if commit and not HASH.search(commit):
        commit, other = "", commit
    commit = f"`{cell(commit)}`" if commit else ""
    if not commit:
        found = list(dict.fromkeys(COMMIT_TEXT.findall("\n".join(text))))  # in order, once each
        commit = f"`{', '.join(found)}` (in its header)" if found else ""
    return commit, f"`{cell(meta['command'])}`" if meta.get("command") else "", other


def mentions(root: Path, rel: str) -> list[str]:
    """The tracked Markdown files outside results/ that name results/REL (a history file) as
    history/NAME, after its GPU folder or after none."""
    gpu, name = rel.split("/")[0], rel.split("/")[-1]
    tail = "history/" + name
    out = git(root, "grep", "-o", "-E", "[A-Za-z0-9_]*/?" + tail.replace(".", "[.]"), "--", "*.md", ":!results",
              found_nothing=1)
    docs = [doc for doc, _, match in (line.partition(":") for line in out.splitlines())
            if match[: -len(tail)] in ("", "/", gpu + "/")]
    return sorted(set(docs))


def build(root: Path) -> tuple[str, list[str]]:
    """MANIFEST.md's text, and the problems (files nothing says what made them)."""
    if git(root, "rev-parse", "--is-shallow-repository").strip() == "true":
        raise NoHistory(f"'{root}' is a shallow clone: the commits that changed the result files are unknown "
                        "(git fetch --unshallow)")
    files = sorted(f for f in git(root, "ls-files", "-z", "--", "results/").split("\0") if f and f != MANIFEST)
    last: dict[str, str] = {}
    for line in git(root, "log", "--format=@%H", "--name-only", "--", "results/").splitlines():
        if line.startswith("@"):
            commit = line[1:8]
        elif line:
            last.setdefault(line, commit)
    own = {f: recorded(root / f) for f in files}
    sections: dict[str, list[str]] = {}
    problems, counts = [], [0, 0, 0]
    for f in files:
        rel = f[len("results/"):]
        commit, command, other = own[f]
        twin = f[:-4] + ".csv" if f.endswith(".txt") else ""
        kind = 0 if commit else 2
        if not commit and twin in own and own[twin][0] and last.get(f) and last.get(f) == last.get(twin):
            commit, kind = f"{own[twin][0]} (its CSV's: committed with it)", 1
            command = command or own[twin][1]
        counts[kind] += 1
        if not commit:
            said = f"`{cell(other)}` in the file; " if other else ""
            commit = f"not recorded ({said}" + (f"committed in `{last[f]}`)" if f in last else "not committed yet)")
        for pattern, what in WRITERS if not command else []:
            m = re.fullmatch(pattern, rel)
            if m:
                command = m.expand(what.replace("{gpu}", rel.split("/")[0]))
                break
        if "/history/" in f:
            docs, whose = mentions(root, rel), "named in "
            if not docs and twin in own:
                docs, whose = mentions(root, twin[len("results/"):]), "its CSV named in "
            command = (command or "an earlier or A/B run kept in history/") + "; " + (
                whose + ", ".join(f"[{Path(d).name}](../{d})" for d in docs) if docs else "named in no document")
        if not command:
            problems.append(f"{f} records no command and matches no row of WRITERS in scripts/results_manifest.py: "
                            "add a row that says what writes it.")
        folder, name = rel.rsplit("/", 1) if "/" in rel else (".", rel)
        sections.setdefault(folder, []).append(f"| [{name}]({rel}) | {command} | {commit} |")
    out = ["# Results manifest", "",
           "Written by `scripts/results_manifest.py` from `git ls-files results/`; `--check` (a test) fails when it",
           "is out of date. For each committed result file: what made it, and the commit of the code it was made",
           "from as the file records it (a `# commit:` line or its header; a table printed beside a CSV takes the",
           "CSV's when both were committed together). Where the file records none, the manifest names the git",
           "commit that last changed it: when it was committed, not the code it was made from.", "",
           f"{len(files)} files: {counts[0]} record their commit, {counts[1]} take their CSV's, "
           f"{counts[2]} record none."]
    for folder in sorted(sections):
        out += ["", f"## {folder}", "", "| File | Made by | Commit |", "|---|---|---|"] + sections[folder]
    return "\n".join(out) + "\n", problems


def main(argv: list[str]) -> int:
    p = output_files.Parser(prog="results_manifest.py", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when MANIFEST.md is out of date")
    p.add_argument("--root", default=str(Path(__file__).resolve().parent.parent),
                   help="the repository (default: the one holding this script)")
    args = p.parse_args(argv)
    root = Path(args.root)
    problem = output_files.input_problem(args.root, "--root", needs="of a git checkout of the repository")
    if problem:
        return output_files.refuse("results_manifest.py", problem)
    try:
        text, problems = build(root)
    except NoHistory as e:
        print(f"results_manifest.py: {e}: nothing to check.", file=sys.stderr)
        return 77
    target = root / MANIFEST
    if args.check:
        old = target.read_text(encoding="utf-8") if target.is_file() else None
        if old is None:
            problems.append(f"{MANIFEST} does not exist: run scripts/results_manifest.py to write it.")
        elif old != text:
            line = next((i for i, (a, b) in enumerate(zip(old.splitlines(), text.splitlines()), 1) if a != b),
                        min(len(old.splitlines()), len(text.splitlines())) + 1)
            problems.append(f"{MANIFEST} differs from what it should say from line {line} on: run "
                            "scripts/results_manifest.py to write it again.")
    for sentence in problems:
        print(f"results_manifest.py: {sentence}", file=sys.stderr)
    if problems or args.check:
        return 1 if problems else 0
    problem = output_files.problem(str(target), "the manifest")
    if problem:
        return output_files.refuse("results_manifest.py", problem)
    output_files.write(str(target), text)
    print(f"wrote {MANIFEST}: {text.count(chr(10) + '| [')} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
