#!/usr/bin/env python3
"""The scripts keep the programs' promises, tried as a new user would on a machine
without a GPU: every bad input gets exit 2 and one sentence on stderr (no traceback),
no GPU gets exit 3 before anything is built or written, no file or folder the script
was not asked to write is created, changed or removed, and the build directory's
CMake cache follows CMAKE_ARGS.

Each case runs in a copy of the repository's tracked files (a fresh clone, as far as the
scripts can tell) beside a sandbox of the user's own files (a plain file, a read-only
CSV, a folder that is not a build). Every file and folder of both is hashed before and
after each case; a case fails on any difference outside the paths it asked a script to
write. The build tools (cmake, ctest, nvcc) and nvidia-smi are stand-ins on PATH, so
nothing is built and no GPU is found even on a GPU machine; the stand-in cmake keeps a
cache as CMake does (-D values stay until --fresh).

With BUILD_DIR (the project's build directory), every program there is also asked for
--help, and its "--help, -h" line must sit in the options' column.

usage: [SOURCE_DIR=...] [BUILD_DIR=...] python3 -m pytest tests/host/test_script_promises.py
   or: test_script_promises.py SOURCE_DIR [BUILD_DIR]
SOURCE_DIR defaults to the repository holding this file. The replayed invocations are one
test, which fails naming every failed case; the programs' --help is another, skipped
without BUILD_DIR.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import run_as_script

SOURCE = Path(os.path.abspath(os.environ.get("SOURCE_DIR") or Path(__file__).resolve().parents[2]))
BUILD = Path(os.path.abspath(os.environ["BUILD_DIR"])) if os.environ.get("BUILD_DIR") else None
REAL_PYTHON = sys.executable

# The replay collects every failed case before its test fails, naming them all.
passed = 0
invocations = 0
failures: list[str] = []


def check(ok: bool, what: str) -> None:
    global passed
    if ok:
        passed += 1
    else:
        failures.append(what)


# ---- the repository copy and the sandbox ---------------------------------------------

def executable(path: Path, text: str) -> Path:
    """`text` written to `path` (its folders made) as a program anyone may run: the stand-in
    programs the scripts are run against."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def tracked_files(root: Path) -> list[str]:
    """The repository's tracked files (git ls-files), or every file outside build*/,
    .git and .deps where there is no git."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
        names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
        if names:
            return names
    except (OSError, subprocess.CalledProcessError):
        pass
    names = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        if rel == ".":
            dirs[:] = [d for d in dirs if not d.startswith(("build", ".git", ".deps"))]
        names += [os.path.normpath(os.path.join(rel, f)) for f in files]
    return names


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file (its hash and mode), folder and link under the roots."""
    state = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for d in dirs:
                p = os.path.join(folder, d)
                state[p] = "dir" if not os.path.islink(p) else f"link {os.readlink(p)}"
            for f in files:
                p = os.path.join(folder, f)
                if os.path.islink(p):
                    state[p] = f"link {os.readlink(p)}"
                    continue
                h = hashlib.sha256()
                with open(p, "rb") as fh:
                    h.update(fh.read())
                state[p] = f"{h.hexdigest()} {stat.S_IMODE(os.lstat(p).st_mode):o}"
    return state


def replay():
    """Every invocation of the issue, in a copy of the repository beside a sandbox."""
    work = Path(tempfile.mkdtemp(prefix="script_promises.")).resolve()
    repo = work / "repo"
    sandbox = work / "sandbox"
    bin_dir = work / "bin"  # the stand-ins
    state_dir = work / "state"  # their call log
    tmp_dir = sandbox / "tmp"  # TMPDIR: scratch files must not outlive a refused run
    for d in (repo, sandbox, bin_dir, state_dir, tmp_dir):
        d.mkdir(parents=True)
    for name in tracked_files(SOURCE):
        src, dst = SOURCE / name, repo / name
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)

    user_file = sandbox / "mine.txt"
    user_file.write_text("the user's own file\n")
    read_only = sandbox / "ro.csv"
    read_only.write_text("a,b\n1,2\n")
    read_only.chmod(0o444)
    (sandbox / "notbuild").mkdir()
    (sandbox / "notbuild" / "notes.txt").write_text("not a build\n")
    (sandbox / "results").mkdir()
    # Two result files with stage 16's bits, for compare_bits.py.
    for name in ("a.csv", "b.csv"):
        (sandbox / "results" / name).write_text("# device: GPU\n# pattern: uniform\n# seed: 1\nn,key,result\n"
                                                "1024,16,512.5\n2048,16,1024.25\n")


    def stand_in(name: str, body: str) -> None:
        executable(bin_dir / name, "#!/usr/bin/env bash\n" + body)


    # nvidia-smi that finds no GPU (on a GPU machine too).
    stand_in("nvidia-smi", 'echo "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver." >&2\n'
                           'exit 9\n')
    # cmake with a cache: -D values are kept in BUILD/CMakeCache.txt until --fresh; a bogus
    # CMAKE_CUDA_ARCHITECTURES in the cache fails the configure (after writing the cache, as
    # CMake does). --build makes a runner that finds no GPU, where there is no runner yet.
    stand_in("cmake", r'''
    echo "cmake $*" >> "$STATE/calls.log"
    # Nothing is written outside the test's folder, whatever a script asks for.
    inside() {
      local p=$1
      while [ ! -d "$p" ]; do p=$(dirname "$p"); done
      case "$(cd "$p" && pwd -P)/" in "$WORK"/*) return 0 ;; esac
      return 1
    }
    if [ "$1" = --build ]; then
      inside "$2" || { echo "stand-in cmake: not building outside the test's folder ($2)" >&2; exit 1; }
      mkdir -p "$2/reduction"
      [ -x "$2/reduction/reduce" ] && exit 0
      printf '#!/bin/sh\necho "reduce: No CUDA device was found: this program needs an NVIDIA GPU and its driver." >&2\nexit 3\n' > "$2/reduction/reduce"
      chmod +x "$2/reduction/reduce"
      exit 0
    fi
    src="" build="" fresh=0 defs=() preset=""
    while [ $# -gt 0 ]; do
      case "$1" in
        -S) src=$2; shift ;;
        -B) build=$2; shift ;;
        --fresh) fresh=1 ;;
        --preset) preset=$2; shift ;;
        -D*) defs+=("${1#-D}") ;;
      esac
      shift
    done
    if grep -qs catch2_probe "$src/CMakeLists.txt"; then exit 0; fi
    inside "$build" || { echo "stand-in cmake: not configuring outside the test's folder ($build)" >&2; exit 1; }
    mkdir -p "$build/CMakeFiles"
    cache="$build/CMakeCache.txt"
    [ "$fresh" -eq 0 ] || rm -f "$cache"
    touch "$cache"
    grep -q '^CMAKE_GENERATOR:INTERNAL=' "$cache" || echo "CMAKE_GENERATOR:INTERNAL=Ninja" >> "$cache"
    for d in "${defs[@]}"; do
      key=${d%%=*}; key=${key%%:*}
      grep -v "^$key[:=]" "$cache" > "$cache.new"; mv "$cache.new" "$cache"
      echo "$key:UNINITIALIZED=${d#*=}" >> "$cache"
    done
    if grep -q '^CMAKE_CUDA_ARCHITECTURES:UNINITIALIZED=bogus$' "$cache"; then
      echo "CMake Error: CMAKE_CUDA_ARCHITECTURES: bogus is not a CUDA architecture" >&2
      exit 1
    fi
    touch "$build/build.ninja"
    exit 0
    ''')
    stand_in("ctest", 'echo "ctest $*" >> "$STATE/calls.log"\nexit 0\n')
    stand_in("nvcc", r'''
    if [ "$1" = --list-gpu-code ]; then printf 'sm_80\nsm_86\nsm_90\n'; exit 0; fi
    echo "nvcc $*" >> "$STATE/calls.log"
    exit 1
    ''')
    # python3 as the scripts call it, with matplotlib "installed" for test.sh's set-up check.
    stand_in("python3", f'''
    if [ "$1" = -c ] && [ "$2" = "import matplotlib" ]; then exit 0; fi
    exec "{REAL_PYTHON}" "$@"
    ''')
    for tool in ("apt-get", "sudo", "pip"):
        stand_in(tool, f'echo "{tool} $*" >> "$STATE/calls.log"\nexit 1\n')

    BASE_ENV = {k: v for k, v in os.environ.items()
                if k not in ("BUILD_DIR", "CMAKE_ARGS", "PRESET", "JOBS", "OUT", "ARCH", "NVCC", "TABLE_SIZES", "STEPS",
                             "EXPERIMENTS", "LAB_EXPERIMENTS", "ARCHS", "AB_BASE", "AB_TAG", "AB_ROUNDS", "SWEEP", "GPU_COUNTS",
                             "SANITIZE_SIZES", "COMPUTE_SANITIZER", "NCU", "REDUCTION_NO_INSTALL", "CUDA_HOME")}
    BASE_ENV.update({"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}", "STATE": str(state_dir),
                     "WORK": str(work),
                     "TMPDIR": str(tmp_dir), "PYTHONDONTWRITEBYTECODE": "1", "REDUCTION_NO_INSTALL": "1"})


    def calls() -> list[str]:
        log = state_dir / "calls.log"
        return log.read_text().splitlines() if log.exists() else []


    def run(argv: list[str], env: dict | None = None, cwd: Path = repo) -> tuple[int, str, str]:
        e = dict(BASE_ENV)
        e.update(env or {})
        command = (["bash", str(repo / "scripts" / argv[0])] if argv[0].endswith(".sh")
                   else [REAL_PYTHON, str(repo / "scripts" / argv[0])]) + argv[1:]
        try:
            p = subprocess.run(command, cwd=cwd, env=e, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return -1, "", "timed out after 120 s"
        return p.returncode, p.stdout, p.stderr


    def rel(path: str) -> str:
        return os.path.relpath(path, work)


    def case(name: str, argv: list[str], rc: int, *, env: dict | None = None, needle: str = "",
             writes: tuple[Path, ...] = (), one_sentence: bool | None = None, tools: bool = False,
             cwd: Path = repo) -> tuple[int, str, str]:
        """Runs one invocation and checks it: the exit code, one sentence on stderr for exits
        2 and 3 (with `needle` in it), no traceback, no build tool run unless `tools`, and no
        change under the repository copy and the sandbox except below the `writes` paths."""
        global invocations
        invocations += 1
        (state_dir / "calls.log").unlink(missing_ok=True)
        before = snapshot(repo, sandbox)
        code, out, err = run(argv, env, cwd)
        after = snapshot(repo, sandbox)
        allowed = tuple(str(w) for w in writes)
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p)
                         and not any(p == a or p.startswith(a + os.sep) for a in allowed))
        lines = [line for line in err.splitlines() if line.strip()]
        problems = []
        if code != rc:
            problems.append(f"exit {code}, expected {rc}")
        if one_sentence is None:
            one_sentence = rc in (2, 3)
        if one_sentence and len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr, expected one sentence")
        if needle and needle not in err:
            problems.append(f"stderr lacks {needle!r}")
        if "Traceback" in err:
            problems.append("a traceback")
        if not tools and calls():
            problems.append(f"ran {calls()}")
        if changed:
            problems.append("changed " + ", ".join(f"{rel(p)} ({'removed' if p not in after else 'created' if p not in before else 'modified'})"
                                                   for p in changed[:8]))
        label = " ".join(f"{k}={v!r}" for k, v in (env or {}).items()) + (" " if env else "") + " ".join(argv)
        check(not problems, f"{label}: " + "; ".join(problems) + (f"\n    stderr: {err.strip()[:600]}" if problems else ""))
        return code, out, err


    def stand_in_build(root: Path) -> Path:
        """A build folder whose runner finds no GPU (as the stand-in cmake makes)."""
        executable(root / "reduction" / "reduce", '#!/bin/sh\necho "reduce: No CUDA device was found." >&2\nexit 3\n')
        (root / "build.ninja").touch()
        (root / "CMakeCache.txt").write_text("CMAKE_GENERATOR:INTERNAL=Ninja\n")
        return root


    NO_GPU = "no NVIDIA GPU is visible"

    try:
        # ---- 1. A BUILD_DIR that is a file is refused, never removed ------------------------
        for script in ("run_all.sh", "test.sh"):
            case(f"{script} BUILD_DIR=file", [script], 2, env={"BUILD_DIR": str(user_file)}, needle="is not a directory")
            case(f"{script} BUILD_DIR=file/sub", [script], 2, env={"BUILD_DIR": str(user_file / "sub")},
                 needle="is not a directory")
        # A configure that fails removes the folders it made (here three), nothing else.
        case("failed configure, new folders", ["run_all.sh"], 1, tools=True,
             env={"BUILD_DIR": str(sandbox / "new" / "deeper" / "build"), "CMAKE_ARGS": "-DCMAKE_CUDA_ARCHITECTURES=bogus"},
             one_sentence=False)
        check(any(c.startswith("cmake -S") for c in calls()) and not (sandbox / "new").exists(),
              f"the failed configure ran and the folders it made are gone: {calls()}")
        kept = stand_in_build(sandbox / "kept")
        (kept / "keep.txt").write_text("mine\n")
        case("failed configure, existing folder", ["run_all.sh"], 1, tools=True, writes=(kept / "CMakeCache.txt",
             kept / "CMakeFiles", kept / "scripts_cmake_args.txt"),
             env={"BUILD_DIR": str(kept), "CMAKE_ARGS": "-DCMAKE_CUDA_ARCHITECTURES=bogus"}, one_sentence=False)
        check((kept / "keep.txt").read_text() == "mine\n" and (kept / "build.ninja").exists(),
              "a failed reconfigure keeps the user's file and the build system")

        # ---- 2. The device driver: exit 3 with no GPU, nothing built or written ---------------
        device_runs = [["device.sh"], ["device.sh", "table"], ["device.sh", "build", "test", "table"],
                       ["device.sh", "sweep", "flush", "lab"], ["device.sh", "sanitize"], ["device.sh", "library"],
                       ["device.sh", "peers"], ["device.sh", "multi_gpu"], ["device.sh", "warp_tools"],
                       ["device.sh", "access"],
                       ["device.sh", "build", "test", "table", "sweep", "sanitize", "profile", "flush", "lab", "arch",
                        "peers", "library", "mixed_precision", "occupancy", "warp_tools", "access", "histogram", "scan",
                        "multi_gpu"]]
        for argv in device_runs:
            case("no GPU", argv, 3, needle=NO_GPU)
            case("no GPU, BUILD_DIR=build", argv, 3, env={"BUILD_DIR": "build"}, needle=NO_GPU)
            case("no GPU, OUT=results/h200", argv, 3, env={"OUT": "results/h200", "BUILD_DIR": str(sandbox / "b")},
                 needle=NO_GPU)
        sanitizer = executable(sandbox / "compute-sanitizer", "#!/bin/sh\nexit 0\n")
        # Its bad inputs: exit 2 first, whatever the GPU.
        for argv, env, needle in [
            (["device.sh", "bogus"], {}, "unknown step 'bogus'"),
            (["device.sh", "experiments"], {}, "unknown step 'experiments'"),
            (["device.sh", "table"], {"TABLE_SIZES": "24 x"}, "TABLE_SIZES item 'x'"),
            (["device.sh", "arch"], {"ARCHS": "sm_bogus"}, "ARCHS item 'sm_bogus'"),
            (["device.sh", "lab"], {"LAB_EXPERIMENTS": "finish ../x"}, "LAB_EXPERIMENTS item '../x'"),
            (["device.sh", "lab"], {"EXPERIMENTS": "../x"}, "LAB_EXPERIMENTS item '../x'"),
            (["device.sh", "ab"], {}, "AB_BASE"),
            (["device.sh", "ab"], {"AB_BASE": str(sandbox / "notbuild")}, "AB_BASE"),
            (["device.sh", "sanitize"], {"SANITIZE_STAGES": "12,99"}, "SANITIZE_STAGES item '99'"),
            (["device.sh"], {"OUT": str(user_file)}, "is not a directory"),
            (["device.sh", "occupancy"], {"OUT": str(user_file / "sub")}, "is not a directory"),
            (["device.sh", "library"], {"OUT": "/dev/null"}, "is not a directory"),
            (["device.sh", "access"], {"OUT": str(user_file)}, "is not a directory"),
            (["device.sh", "multi_gpu"], {"RESULTS_DIR": str(read_only)}, "is not a directory"),
            (["device.sh", "table"], {"PACK": str(user_file)}, "is not a directory"),
            (["device.sh"], {"BUILD_DIR": str(user_file)}, "is not a directory"),
            (["device.sh", "peers"], {"BUILD_DIR": str(user_file)}, "is not a directory"),
            (["device.sh"], {"JOBS": "abc"}, "JOBS 'abc'"),
            (["device.sh", "library"], {"STEPS": "bogus"}, "unknown library step 'bogus'"),
            (["device.sh", "mixed_precision"], {"SANITIZE_SIZES": "0"}, "SANITIZE_SIZES item '0'"),
            (["device.sh", "multi_gpu"], {"GPU_COUNTS": "1,two"}, "GPU_COUNTS '1,two'"),
        ]:
            case("bad input", argv, 2, env=env, needle=needle)

        # With a GPU (a stand-in nvidia-smi naming an H100): the results go to results/h100,
        # each file written whole, and nothing else changes.
        gpu_bin = work / "gpu_bin"
        executable(gpu_bin / "nvidia-smi", "#!/bin/sh\necho 'NVIDIA H100 80GB HBM3'\n")
        with_gpu = {"PATH": f"{gpu_bin}{os.pathsep}{BASE_ENV['PATH']}"}
        table_build = sandbox / "table_build"
        executable(
            table_build / "reduction" / "reduce",
            '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --csv ] && printf "key,gbs\\n01,1\\n" > "$2"; shift; done\n'
            'echo "01 reduce table"\n')
        h100 = repo / "results" / "h100"
        case("a GPU: device.sh table", ["device.sh", "table"], 0, env={**with_gpu, "TABLE_SIZES": "20",
             "BUILD_DIR": str(table_build), "REDUCTION_COMMIT": "abc1234"},
             writes=(h100 / "reduce_2p20.csv", h100 / "reduce_2p20.txt", table_build), tools=True)
        check((h100 / "reduce_2p20.txt").read_text() == "# commit: abc1234\n01 reduce table\n" and
              (h100 / "reduce_2p20.csv").read_text() == "key,gbs\n01,1\n",
              "device.sh table on an H100 writes results/h100/reduce_2p20.csv and .txt")
        # A failed build: exit 1, no step runs, nothing written (the folders the configure made removed).
        code, out, _ = case("a GPU: a failed build", ["device.sh", "occupancy"], 1, env={
            **with_gpu, "BUILD_DIR": str(sandbox / "ob"), "CMAKE_ARGS": "-DCMAKE_CUDA_ARCHITECTURES=bogus"}, tools=True,
            one_sentence=False)
        check("the build failed" in out and "no step ran" in out and "=== occupancy" not in out,
              f"device.sh stops after a failed build, saying so: {out[-300:]!r}")

        # ---- 3. No tracebacks: outputs that cannot be written -------------------------------
        a, b = str(sandbox / "results" / "a.csv"), str(sandbox / "results" / "b.csv")
        case("diagrams", ["diagrams.py", "--out", "/dev/full"], 2, needle="is not a directory")
        case("diagrams", ["diagrams.py", "--out", str(user_file)], 2, needle="is not a directory")
        case("diagrams", ["diagrams.py", "--out", str(user_file / "sub")], 2, needle="is not a directory")
        case("plot_access", ["plot_access.py", "--out", "/dev/full"], 2, needle="is not a directory")
        case("plot_access", ["plot_access.py", "--out", str(user_file)], 2, needle="is not a directory")
        for out, needle in [("/dev/full", "is not a regular file"), (str(sandbox / "notbuild"), "is a directory"),
                            (str(read_only), "is a read-only file"), ("", "is not a file name"),
                            (str(sandbox / "none" / "x.txt"), "does not exist")]:
            code, stdout, _ = case("compare_bits", ["compare_bits.py", a, b, "--out", out], 2, needle=needle)
            check(stdout == "", f"compare_bits.py --out {out!r}: refused before the report is printed")
        check(read_only.read_text() == "a,b\n1,2\n", "the read-only CSV is as it was")
        case("compare_bits writes", ["compare_bits.py", a, b, "--out", str(sandbox / "report.txt")], 0,
             writes=(sandbox / "report.txt",))
        check((sandbox / "report.txt").read_text().endswith("2 of 2 sizes give the same bits\n"),
              "compare_bits.py --out writes the report")

        # ---- 4. Typos that used to do nothing, or the wrong thing, and exit 0 ----------------
        case("plot --results", ["plot.py", "--results", str(sandbox / "none")], 2, needle="does not exist")
        case("plot --results file", ["plot.py", "--results", str(user_file)], 2, needle="is not a directory")
        case("plot --out ''", ["plot.py", "--out", ""], 2, needle="is not a directory name")
        case("plot --results ''", ["plot.py", "--results", ""], 2, needle="is not a directory name")
        case("update_docs --results", ["update_docs.py", "--results", str(sandbox / "none")], 2, needle="does not exist")
        case("update_docs --check --results", ["update_docs.py", "--check", "--results", str(sandbox / "none")], 2,
             needle="does not exist")
        case("update_docs --results file", ["update_docs.py", "--results", str(user_file)], 2, needle="is not a directory")
        case("diagrams --only ''", ["diagrams.py", "--only", ""], 2, needle="names no figure")
        case("diagrams --only ,", ["diagrams.py", "--only", ","], 2, needle="names no figure")
        case("diagrams --out ''", ["diagrams.py", "--out", ""], 2, needle="is not a directory name")
        case("diagrams --only bogus", ["diagrams.py", "--only", "bogus.png"], 2, needle="is not a figure")
        case("plot_access --out ''", ["plot_access.py", "--out", ""], 2, needle="is not a directory name")
        case("plot_access --results", ["plot_access.py", "--results", str(sandbox / "none")], 2, needle="does not exist")
        case("resource_usage --bogus", ["resource_usage.sh", "--bogus"], 2, needle="takes no arguments")
        for args, needle in [(["--bogus-ctest-flag"], "is not a ctest option"), (["-L"], "-L needs a value"),
                             (["-L", "-R", "x"], "-L needs a value"), (["-R"], "-R needs a value"),
                             (["-j", "0"], "-j '0'"), (["-jx"], "is not a ctest option"),
                             (["--timeout", "soon"], "--timeout 'soon'"), (["--repeat", "3"], "--repeat '3'"),
                             (["host"], "is not a ctest option")]:
            case("test.sh", ["test.sh", *args], 2, env={"BUILD_DIR": str(sandbox / "tb")}, needle=needle)
        for script in ("profile.sh", "book.sh"):
            case(script, [script, "--bogus"], 2, needle="unknown option '--bogus'")
        # book.sh: bad usage, and nothing installed or built under REDUCTION_NO_INSTALL.
        case("book.sh two options", ["book.sh", "--serve", "--setup"], 2, needle="one option at most")
        case("book.sh PORT", ["book.sh", "--serve"], 2, env={"PORT": "0"}, needle="PORT '0'")
        case("book.sh, nothing installed", ["book.sh"], 2, needle="REDUCTION_NO_INSTALL")
        code, out, _ = case("book.sh --help", ["book.sh", "--help"], 0)
        check("build/book/" in out and "--serve" in out, f"book.sh --help says where the site goes and how to serve it: "
                                                          f"{out[:200]!r}")
        case("book.py no folder", ["book.py"], 2, needle="staging folder")
        case("book.py outside build", ["book.py", str(sandbox / "site")], 2, needle="not under a folder named build")
        staging = sandbox / "build" / "book-src"
        case("book.py stages", ["book.py", str(staging)], 0, writes=(sandbox / "build",), one_sentence=False)
        check((staging / "index.md").is_file() and (staging / "chapters" / "14_tagged_slots.md").is_file()
              and (staging / "reduction" / "14_tagged_slots.cu.md").is_file(),
              "book.py stages the README as index.md, the chapters and the source files they link to")
        case("profile.sh --out", ["profile.sh", "--out", str(user_file), "--build", str(stand_in_build(sandbox / "pb"))],
             2, needle="is not a directory")
        # profile.sh, which takes a build: exit 3 before its folders or files exist.
        listing_build = sandbox / "listing_build"
        executable(
            listing_build / "reduction" / "reduce",
            "#!/bin/sh\ncase \" $* \" in *\" --list \"*) printf '13\\tlast_block\\tstage\\tx\\ty\\tz\\n'; exit 0 ;; esac\n"
            "echo 'reduce: No CUDA device was found.' >&2\nexit 3\n")
        case("profile.sh no GPU", ["profile.sh", "13", "--build", str(listing_build), "--out", str(sandbox / "prof")], 3,
             env={"NCU": str(sanitizer)}, needle=NO_GPU)
        for argv in (["plot.py"], ["plot_access.py"], ["compare_bits.py", a, b], ["diagrams.py"], ["update_docs.py"],
                     ["run_doc_commands.py"], ["ncu_table.py", "stage=export.csv"], ["prose_words.py"], ["book.py"]):
            case(f"{argv[0]} --bogus", [*argv, "--bogus"], 2, needle="--bogus")

        # ---- 5. Right reasons, no side effects ------------------------------------------------
        # Names up to the file system's limit are written; one past it is refused by length.
        for length in (246, 250, 255):
            target = sandbox / ("n" * length)
            case(f"a {length}-byte name", ["compare_bits.py", a, b, "--out", str(target)], 0, writes=(target,))
            check(target.is_file(), f"compare_bits.py --out NAME of {length} bytes writes it")
        case("a 256-byte name", ["compare_bits.py", a, b, "--out", str(sandbox / ("n" * 256))], 2,
             needle="its name is 256 bytes long")
        for length in (246, 255):
            target = sandbox / ("c" * length)
            case(f"a {length}-byte figure folder", ["plot_access.py", "--results", str(repo / "results" / "h200"),
                                                   "--out", str(target)], 0, writes=(target,), one_sentence=False)
        # run_doc_commands.py wants a build directory.
        case("run_doc_commands missing", ["run_doc_commands.py", "--check-programs", str(sandbox / "none")], 2,
             needle="is not a directory")
        case("run_doc_commands not a build", ["run_doc_commands.py", "--check-programs", str(sandbox / "notbuild")], 2,
             needle="is not a build directory")
        case("run_doc_commands --out", ["run_doc_commands.py", "--out", str(read_only)], 2, needle="read-only")
        # Environment values, as the programs check theirs.
        case("ARCH", ["resource_usage.sh"], 2, env={"ARCH": "sm_bogus"}, needle="ARCH 'sm_bogus'")
        case("NVCC", ["resource_usage.sh"], 2, env={"NVCC": str(sandbox / "none")}, needle="nvcc was not found")
        for jobs in ("abc", "0", "-3", "5000"):
            case("JOBS", ["run_all.sh"], 2, env={"JOBS": jobs, "BUILD_DIR": str(sandbox / "jb")}, needle=f"JOBS '{jobs}'")
            case("JOBS", ["test.sh", "-L", "host"], 2, env={"JOBS": jobs, "BUILD_DIR": str(sandbox / "jb")},
                 needle=f"JOBS '{jobs}'")
        # An empty value means the default, as ${VAR:-default} reads it.
        case("JOBS ''", ["run_all.sh"], 3, env={"JOBS": "", "BUILD_DIR": str(sandbox / "jb")}, writes=(sandbox / "jb",),
             tools=True, one_sentence=False, needle="No CUDA device")
        case("PRESET", ["run_all.sh"], 2, env={"PRESET": "nosuch"}, needle="PRESET 'nosuch' is not a configure preset")
        case("PRESET", ["test.sh"], 2, env={"PRESET": "nosuch"}, needle="PRESET 'nosuch' is not a configure preset")

        # ---- 6. Set-up: the cache follows CMAKE_ARGS; the working commands still work -------
        build = sandbox / "cache_build"
        case("first run", ["run_all.sh"], 3, env={"BUILD_DIR": str(build)}, writes=(build,), tools=True,
             needle="No CUDA device")
        case("a bad CMAKE_ARGS", ["run_all.sh"], 1, env={"BUILD_DIR": str(build),
                                                       "CMAKE_ARGS": "-DCMAKE_CUDA_ARCHITECTURES=bogus"},
             writes=(build,), tools=True, one_sentence=False)
        case("the next plain run", ["run_all.sh"], 3, env={"BUILD_DIR": str(build)}, writes=(build,), tools=True,
             one_sentence=False, needle="No CUDA device")
        configures = [c for c in calls() if c.startswith("cmake -S")]
        cache = (build / "CMakeCache.txt").read_text() if (build / "CMakeCache.txt").exists() else ""
        check(len(configures) == 1 and "--fresh" in configures[0] and "bogus" not in cache,
              f"the run after a dropped CMAKE_ARGS value configures afresh and the value is gone: {configures}, "
              f"cache {cache!r}")
        case("the same CMAKE_ARGS again", ["run_all.sh"], 3, env={"BUILD_DIR": str(build)}, writes=(build,), tools=True,
             needle="No CUDA device")
        configures = [c for c in calls() if c.startswith("cmake -S")]
        check(len(configures) == 1 and "--fresh" not in configures[0],
              f"an unchanged CMAKE_ARGS keeps the cache: {configures}")
        for args in (["-L", "host"], ["-L", "gpu"], ["-j4", "-R", "scripts", "--output-on-failure"]):
            case("test.sh works", ["test.sh", *args], 0, env={"BUILD_DIR": str(sandbox / "tb")},
                 writes=(sandbox / "tb",), tools=True, one_sentence=False)
            check(f"ctest --output-on-failure --no-tests=error {' '.join(args)}" in calls(),
                  f"test.sh {' '.join(args)} passes its options to ctest: {calls()}")
        case("PRESET=ci test.sh", ["test.sh"], 0, env={"PRESET": "ci"}, writes=(repo / "build-ci",), tools=True,
             one_sentence=False)
        check(any("--preset ci" in c for c in calls()), f"PRESET=ci configures through the preset: {calls()}")
        code, out, _ = case("test.sh --help", ["test.sh", "--help"], 0)
        check("counts a skipped test as passed" in " ".join(out.split()),
              "test.sh --help says ctest counts a skipped test as passed")
        readme = " ".join((SOURCE / "README.md").read_text().split())
        check("counts a skipped test as passed" in readme, "the README says ctest counts a skipped test as passed")
        stray = [n for n in tracked_files(SOURCE) if "/" not in n and n.endswith(".log")]
        check(stray == [], f"no log is committed at the repository's root: {stray}")

    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def replayed():
    replay()
    for f in failures:
        print("FAILED:", f)
    print(f"{invocations} invocations of the scripts replayed")
    print(f"{passed} passed, {len(failures)} failed")


def test_script_promises(replayed):
    assert invocations > 100 and passed > 100, f"{invocations} invocations, {passed} checks passed"
    assert not failures, "\n".join(failures)


def test_programs_help_column():
    """Every program's --help: the --help, -h line in the options' column."""
    if BUILD is None:
        pytest.skip("no BUILD_DIR given, so no program's --help was checked")
    problems = []
    programs = []
    for folder in ("reduction", "mixed_precision", "occupancy", "access_patterns", "lab", "peers",
                   "multi_gpu", "scan"):
        d = BUILD / folder
        if d.is_dir():
            programs += sorted(p for p in d.iterdir() if p.is_file() and os.access(p, os.X_OK)
                               and not p.name.startswith(("lib", "cmake")) and p.suffix == "")
    aligned = 0
    for p in programs:
        r = subprocess.run([str(p), "--help"], capture_output=True, text=True, timeout=60)
        lines = r.stdout.splitlines()
        if r.returncode != 0 or not any(line.startswith("usage:") for line in lines):
            continue
        # The options' help text starts in column 24 (common/cli.cpp); so must --help's.
        help_line = [line for line in lines if line.lstrip().startswith("--help, -h")]
        options = [line for line in lines if line.startswith("  --") and not line.lstrip().startswith("--help")]
        text_columns = {len(line) - len(line[2:].split("  ", 1)[1].lstrip())
                        for line in options if "  " in line[2:].strip()}
        column = {len(line) - len(line[12:].lstrip()) for line in help_line}
        ok = len(help_line) == 1 and column == {24} and text_columns <= {24}
        if not ok:
            problems.append(f"{p.relative_to(BUILD)} --help: '--help, -h' is in the options' column: {help_line}")
        aligned += ok
    assert not problems, "\n".join(problems)
    assert aligned >= 5, (f"--help was checked on {aligned} programs of {BUILD} (expected the runner, the stages, "
                          "the other programs)")


if __name__ == "__main__":
    env = {"SOURCE_DIR": sys.argv[1]} if len(sys.argv) > 1 else {}
    if len(sys.argv) > 2:
        env["BUILD_DIR"] = sys.argv[2]
    sys.exit(run_as_script(__file__, env))
