#!/usr/bin/env python3
"""Runs every command the README and the chapters show, as a reader would, and reports
each one's exit code: the check that the text and the programs agree.

    scripts/run_doc_commands.py [--list] [--exclude REGEX] [--timeout S] [--out FILE]
    scripts/run_doc_commands.py --check-programs BUILD_DIR   (no GPU: the programs exist)

A command is an inline code span or a line of a fenced block that starts with
build/, scripts/, cmake, ctest, ncu, nsys, compute-sanitizer or python3 scripts/.
Fragments that cannot run as they stand are listed as skipped, with the reason: a bare
program name, a folder in a listing, a script named in a sentence, a placeholder
(<...>, ...), and commands of a profiler or sanitizer that is not installed. Commands
run from the repository root in the order the documents give them (README.md first,
then chapters/ by name), so the build commands come before the programs; files they
write under a bare name (my_run.csv, a.csv) go to a scratch folder that is removed
afterwards. This script does not run itself.

Exit codes: 0 every command ran and exited 0; 1 a command failed or timed out;
2 bad usage (one sentence on stderr, before anything runs: an --out that cannot be
written, a --timeout that is not a positive number of seconds). Needs a GPU (and ncu,
nsys, compute-sanitizer) for a full run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import output_files  # scripts/output_files.py: checked first, then written whole

ROOT = Path(__file__).resolve().parent.parent
START = re.compile(r"(build/|scripts/|cmake |ctest|ncu |nsys |compute-sanitizer|python3 scripts/)")


def commands(root: Path) -> list[tuple[str, str, bool]]:
    docs = ([root / "README.md", root / "REFERENCE.md"] + sorted((root / "chapters").glob("*.md")) + [root / "lab" / "README.md"]
            + sorted((root / "lab" / "notes").glob("*.md")))
    docs = [d for d in docs if d.is_file()]
    found: list[tuple[str, str, bool]] = []
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        name = doc.relative_to(root).as_posix()
        for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
            # A line ending in a backslash continues on the next one.
            for line in re.sub(r"\\\n\s*", " ", block).splitlines():
                if START.match(line.strip()):
                    found.append((name, line.strip(), False))
        outside = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
        for span in re.findall(r"`([^`\n]+)`", outside):
            if START.match(span.strip()):
                found.append((name, span.strip(), True))
    seen: set[str] = set()
    unique = []
    for name, cmd, inline in found:
        cmd = re.sub(r"\s+#.*$", "", cmd).strip()  # a trailing comment
        if cmd not in seen:
            seen.add(cmd)
            unique.append((name, cmd, inline))
    return unique


def why_not_runnable(cmd: str, inline: bool = False) -> str:
    first = cmd.split()[0]
    if first.endswith("run_doc_commands.py"):
        return "this script"
    if first.endswith("/") and len(cmd.split()) > 1:
        return "a folder in a listing"
    if inline and " " not in cmd and cmd.startswith("scripts/") and cmd.endswith(".py"):
        return "a script's name in a sentence"
    if cmd.endswith("\\"):
        return "a continued line"
    if "<" in cmd or "..." in cmd:
        return "a placeholder"
    if re.fullmatch(r"[\w./-]+/?", cmd) and (cmd.endswith("/") or cmd in ("cmake", "ctest", "compute-sanitizer")):
        return "a bare name"
    if cmd.startswith("compute-sanitizer") and not re.search(r"\s(build|scripts)/", cmd):
        return "a tool option without a program"
    return ""


def missing_tool(cmd: str) -> str:
    tool = cmd.split()[0]
    if tool in ("ncu", "nsys", "compute-sanitizer") and shutil.which(tool) is None:
        return f"{tool} is not installed here"
    return ""


def main() -> int:
    parser = output_files.Parser(prog="run_doc_commands.py", description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print the commands and exit")
    parser.add_argument("--exclude", default="", help="skip commands matching this regular expression")
    parser.add_argument("--timeout", default="300", help="seconds per command (default 300)")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument("--check-programs", type=Path, metavar="BUILD_DIR",
                        help="run nothing; check that every build/... program the commands name exists in BUILD_DIR")
    args = parser.parse_args()
    try:
        exclude = re.compile(args.exclude) if args.exclude else None
    except re.error as e:
        print(f"run_doc_commands.py: --exclude is not a regular expression ({e})", file=sys.stderr)
        return 2
    if not re.fullmatch(r"\d+(\.\d+)?", args.timeout.strip()) or float(args.timeout) <= 0:
        print(f"run_doc_commands.py: --timeout '{args.timeout}' is not a number of seconds above 0 (such as 300 or "
              "2.5).", file=sys.stderr)
        return 2
    args.timeout = float(args.timeout)
    if args.out is not None:
        problem = output_files.problem(str(args.out), "--out")
        if problem:
            print(f"run_doc_commands.py: {problem}", file=sys.stderr)
            return 2
    if args.check_programs is not None and not args.check_programs.is_dir():
        print(f"run_doc_commands.py: --check-programs '{args.check_programs}' is not a directory: give the build "
              "directory.", file=sys.stderr)
        return 2
    if args.check_programs is not None and not (args.check_programs / "CMakeCache.txt").is_file():
        print(f"run_doc_commands.py: --check-programs '{args.check_programs}' is not a build directory (it has no "
              "CMakeCache.txt): give the folder the project was built in, such as build.", file=sys.stderr)
        return 2

    cmds = commands(ROOT)
    if args.check_programs:
        missing = []
        checked = 0
        # Programs the build leaves out, by design, where a library they need was not found:
        # the configure lists them in left_out.txt (CMakeLists.txt, reduction_left_out).
        listed = args.check_programs / "left_out.txt"
        lines = listed.read_text(encoding="utf-8").splitlines() if listed.is_file() else []
        left_out = dict(line.split("\t", 1) for line in lines if "\t" in line)
        for name, cmd, inline in cmds:
            if why_not_runnable(cmd, inline):
                continue
            for token in re.findall(r"(?:^|\s)build/(\S+)", cmd):
                if "/" not in token:  # build/ as a folder, not a program
                    continue
                if token in left_out:
                    print(f"not checked: {name}: {token} (this build has no {left_out[token]}, so it leaves it out)")
                    continue
                checked += 1
                path = args.check_programs / token
                if not (path.is_file() and os.access(path, os.X_OK)):
                    missing.append(f"{name}: {cmd}: {path} is not a program of the build")
        for m in missing:
            print("FAIL:", m)
        print(f"{checked} program paths checked, {len(missing)} missing")
        return 1 if missing or checked == 0 else 0
    if args.list:
        for name, cmd, inline in cmds:
            reason = why_not_runnable(cmd, inline)
            print(f"{name}\t{cmd}" + (f"\t(skipped: {reason})" if reason else ""))
        return 0

    scratch = Path(tempfile.mkdtemp(prefix="doc_commands_"))
    env = dict(os.environ)
    lines = []
    failed = 0
    try:
        for name, cmd, inline in cmds:
            reason = why_not_runnable(cmd, inline) or missing_tool(cmd)
            if not reason and exclude and exclude.search(cmd):
                reason = "excluded by --exclude"
            if reason:
                lines.append(f"skip  {name}: {cmd}  ({reason})")
                print(lines[-1], flush=True)
                continue
            # Files a command writes by a bare name land in the scratch folder.
            run = re.sub(r"(--csv|--json|-o|--out)\s+(?!/)(\S+)", lambda m: f"{m.group(1)} {scratch / m.group(2)}", cmd)
            t0 = time.time()
            try:
                p = subprocess.run(["bash", "-c", run], cwd=ROOT, env=env, capture_output=True, text=True,
                                   timeout=args.timeout)
                rc = p.returncode
                tail = (p.stdout + p.stderr).strip().splitlines()[-1:] if rc != 0 else []
            except subprocess.TimeoutExpired:
                rc, tail = 124, [f"timed out after {args.timeout:.0f} s"]
            seconds = time.time() - t0
            status = "ok" if rc == 0 else f"FAIL (exit {rc})"
            if rc != 0:
                failed += 1
            lines.append(f"{status:<4}  {name}: {cmd}  [{seconds:.1f} s]" + (f"  -- {tail[0]}" if tail else ""))
            print(lines[-1], flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    ran = sum(1 for line in lines if not line.startswith("skip"))
    lines.append(f"{ran} commands run, {failed} failed, {len(lines) - ran} skipped")
    print(lines[-1])
    if args.out is not None:
        output_files.write(str(args.out), "\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
