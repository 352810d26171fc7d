#!/usr/bin/env python3
"""scripts/device.sh without a GPU.

- --help exits 0 and prints the header; an unknown step exits 2 with one sentence and
  writes nothing; a real run on a machine with no GPU (nvidia-smi is a stand-in that finds
  none, so this holds on a GPU machine too) exits 3 with one sentence, before anything is
  built or written.
- For every step, the files its --dry-run says it writes ("writes PATH" lines) are exactly
  the names written out below. They were read from the scripts the driver replaced (the
  former scripts/device_*.sh, scripts/sanitize.sh and scripts/sanitize_library.sh, removed
  when the driver took over their steps), not from device.sh; a name missing from the
  driver, or one too many, fails the test.
- Every row of results/MANIFEST.md for results/h200 (with its history/ and ncu/ folders)
  and results/h200x4 that a step made is among the files the driver's dry run of that
  step writes, with the environment the manifest names (TABLE_SIZES=30,
  LAB_EXPERIMENTS=bulk, ...). Rows made by hand or by other tools are left out, each kind
  with its reason (MANIFEST_EXCLUDED).
- Real runs on stand-in tools (nvidia-smi naming an H100, cmake, ctest, compute-sanitizer
  and the programs): the files written are the files the dry run names, and the steps'
  verdicts (warp_tools: hazards only in the volatile variant pass; one in a corrected
  variant fails, naming it).

usage: python3 -m pytest tests/host/test_device_driver.py
"""
import hashlib
import os
import re
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT

DRIVER = ROOT / "scripts" / "device.sh"


def _stand_in_path(folder: Path) -> str:
    """A PATH whose nvidia-smi finds no GPU (exit 9, as nvidia-smi does without a driver)."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the driver.' >&2\n"
                   "exit 9\n")
    smi.chmod(0o755)
    return f"{bin_dir}:{os.environ['PATH']}"


def run_driver(args, env=None, folder=None):
    full = {k: v for k, v in os.environ.items()
            if not re.match(r"^(OUT|BUILD_DIR|RESULTS_DIR|PACK|TABLE_SIZES|ARCHS|LAB_EXPERIMENTS|EXPERIMENTS|AB_.*|"
                            r"STEPS|SWEEP.*|GPU_COUNTS|DEVICE_GPUS?|SANITIZE_.*|REPS|BUDGET_.*|SCAN_SIZES|"
                            r"BOUND_SIZES|TORCH_SWEEP|MULTI_GPU_SWEEP|REDUCTION_COMMIT)$", k)}
    if folder is not None:
        full["PATH"] = _stand_in_path(folder)
    full.update(env or {})
    return subprocess.run(["bash", str(DRIVER), *args], cwd=ROOT, env=full, capture_output=True, text=True,
                          timeout=120)


def tree_hash(path: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        h.update(str(p.relative_to(path)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


# ---- (a) help, bad usage, no GPU ----------------------------------------------------------------

def test_help():
    r = run_driver(["--help"])
    assert r.returncode == 0, r.stderr
    assert "--dry-run" in r.stdout and "Exit codes" in r.stdout and "multi_gpu" in r.stdout
    assert not r.stdout.lstrip().startswith("!"), "the help is the header comment, not the shebang"


@pytest.mark.parametrize("args", [["tabel"], ["table", "--n"], ["--dry-run", "nosuchstep"]])
def test_unknown_step_is_refused_and_nothing_is_written(args):
    before = tree_hash(ROOT / "results")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out, build = tmp / "out", tmp / "build"
        r = run_driver(args, {"OUT": str(out), "BUILD_DIR": str(build)}, folder=tmp)
        assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("device.sh: unknown step"), r.stderr
        assert r.stdout == ""
        assert not out.exists() and not build.exists()
    assert tree_hash(ROOT / "results") == before


@pytest.mark.parametrize("args,env,needle", [
    (["table"], {"TABLE_SIZES": "24 x"}, "TABLE_SIZES item 'x'"),
    (["--dry-run", "table"], {"TABLE_SIZES": "24 x"}, "TABLE_SIZES item 'x'"),
    (["ab"], {}, "AB_BASE"),
    (["library"], {"STEPS": "test bogus"}, "unknown library step 'bogus'"),
    (["--dry-run", "table"], {"DEVICE_GPU": "../x"}, "DEVICE_GPU '../x'"),
    (["--dry-run", "multi_gpu"], {"DEVICE_GPUS": "0"}, "DEVICE_GPUS '0'"),
    (["multi_gpu"], {"GPU_COUNTS": "1,two"}, "GPU_COUNTS '1,two'"),
    (["sanitize"], {"SANITIZE_STAGES": "12,99"}, "SANITIZE_STAGES item '99'"),
    (["--dry-run", "sanitize"], {"SANITIZE_STAGES": "12 13"}, "SANITIZE_STAGES item '12 13'"),
])
def test_bad_environment_is_refused(args, env, needle):
    with tempfile.TemporaryDirectory() as tmp:
        r = run_driver(args, {**env, "OUT": f"{tmp}/out", "BUILD_DIR": f"{tmp}/build"}, folder=Path(tmp))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert needle in r.stderr and r.stdout == ""
        assert not Path(tmp, "out").exists() and not Path(tmp, "build").exists()


@pytest.mark.parametrize("steps", [["table"], ["build", "test", "table"], ["histogram", "scan", "multi_gpu"]])
def test_no_gpu_exits_3_before_building_or_writing(steps):
    before = tree_hash(ROOT / "results")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out, build, pack = tmp / "out", tmp / "build", tmp / "pack"
        r = run_driver(steps, {"OUT": str(out), "BUILD_DIR": str(build), "PACK": str(pack)}, folder=tmp)
        assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "no NVIDIA GPU" in lines[0], r.stderr
        assert not out.exists() and not build.exists() and not pack.exists()
    assert tree_hash(ROOT / "results") == before


# ---- (b) the dry run's files against the names of the scripts the driver replaced ---------------

def dry_run(steps, env=None):
    with tempfile.TemporaryDirectory() as tmp:
        r = run_driver(["--dry-run", *steps], env, folder=Path(tmp))
    assert r.returncode == 0, (r.stdout, r.stderr)
    return r.stdout


def written(steps, env=None):
    """The files (and folders, ending in /) a dry run says it writes."""
    files = [line[len("writes "):] for line in dry_run(steps, env).splitlines() if line.startswith("writes ")]
    assert len(files) == len(set(files)), f"a file is announced twice: {files}"
    return set(files)


def _pair(*names):
    return {f"{n}.{ext}" for n in names for ext in ("csv", "txt")}


ACCESS = sorted(p.stem for p in (ROOT / "access_patterns").glob("[0-9][0-9]_*.cu"))
LAB = ["finish", "lastblock", "critical", "phases", "bulk", "shapes", "tiles", "one_block", "stream"]
MULTI = ({"topology.txt", "nccl_transports.txt", "multi_gpu_test.txt", "multi_gpu_mpi_test.txt",
          "multi_gpu_sanitize.txt"} | _pair("multi_gpu", "multi_gpu_mpi", "multi_gpu_mpi_net"))

# What each former script wrote, read from it (default environment, <gpu> = h200), per
# step of device.sh: FOLDER -> names, relative to results/h200 unless a folder is given.
EXPECTED = {
    # the former scripts/device_check.sh, step by step
    "build": {"build.log"},
    "test": {"ctest.txt"},
    "table": _pair("reduce_2p24", "reduce_2p28"),  # TABLE_SIZES "24 28"
    "sweep": _pair("sweep"),
    "sanitize": {"sanitize.txt"},  # the former scripts/sanitize.sh --out OUT/sanitize.txt
    # scripts/profile.sh --out OUT/profile (its reports and exports), then the three tables copied
    "profile": {"profile/"} | _pair("ncu_metrics", "ncu_metrics_mixed_precision", "ncu_metrics_occupancy"),
    "flush": _pair("reduce_2p28_write_flush", "reduce_2p30_write_flush"),
    "lab": _pair(*(f"experiment_{e}" for e in LAB)),  # build/lab/list.txt
    "arch": {"build_arch_80.log", "ctest_gpu_arch_80.txt", "build_arch_80-virtual.log",
             "ctest_gpu_arch_80-virtual.txt"},  # ARCHS "80 80-virtual"
    "ab": {"build_ab.log", "history/ab_base.csv"},  # AB_TAG base
    # the former scripts/device_peers.sh
    "peers": _pair("peers_ceiling", "peers_cub_modes", "peers_torch_cupy"),
    # the former scripts/device_library.sh (its build step is the driver's build) and sanitize_library.sh
    "library": {"library_ctest.txt", "sanitize_library.txt", "sanitize_library/"} | _pair("library_sweep"),
    # the former scripts/device_mixed_precision.sh: the tables have no .txt; the log holds the printout
    "mixed_precision": {"mixed_precision_2p24.csv", "mixed_precision_2p28.csv", "mixed_precision_device.txt"},
    # the former scripts/device_occupancy.sh
    "occupancy": {"occupancy_01_summary.txt", "occupancy_device.txt"}
    | _pair("occupancy_02_resource_usage", "occupancy_03_sweep"),
    # the former scripts/device_warp_tools.sh
    "warp_tools": _pair("experiment_warp_tools", "racecheck_volatile_warp"),
    # the former scripts/device_access_patterns.sh
    "access": _pair(*(f"access_{p}" for p in ACCESS), "access_ncu")
    | {"access_sass_index.txt", "access_stride.png", "access_banks.png", "access_device.txt"},
    # the former scripts/device_histogram.sh
    "histogram": _pair("histogram_256", "histogram_4096", "histogram_torch")
    | {"histogram_sanitize.txt", "histogram_device.txt"},
    # the former scripts/device_scan.sh
    "scan": _pair("scan_int_inclusive", "scan_int_exclusive", "scan_float_inclusive", "scan_torch")
    | {"scan_tests.txt", "scan_sanitize.txt"}
    # added by the driver, not the former script: scan --bounds (scan/bounds.cu)
    | _pair("scan_bounds_int_exclusive", "scan_bounds_int_inclusive"),
}


def expected_paths(step):
    return {f"results/h200/{name}" for name in EXPECTED[step]}


def test_every_step_is_in_the_table():
    help_steps = re.search(r'all_steps="([^"]*)"\nall_steps\+=" ([^"]*)"', DRIVER.read_text())
    steps = set((help_steps.group(1) + " " + help_steps.group(2)).split())
    assert steps == set(EXPECTED) | {"multi_gpu"}


@pytest.mark.parametrize("step", sorted(EXPECTED))
def test_dry_run_writes_what_the_former_scripts_wrote(step):
    env = {"AB_BASE": str(ROOT)} if step == "ab" else {}
    assert written([step], env) == expected_paths(step)


@pytest.mark.parametrize("gpus", [1, 2, 4])
def test_dry_run_multi_gpu(gpus):
    # the former scripts/device_multi_gpu.sh: results/<gpu>x<N> with N GPUs, results/<gpu> and _1gpu with one
    # (all but topology.txt, which it names alike in both cases).
    if gpus == 1:
        want = {f"results/h200/{n if n == 'topology.txt' else n.replace('.', '_1gpu.', 1)}" for n in MULTI}
    else:
        want = {f"results/h200x{gpus}/{n}" for n in MULTI}
    assert written(["multi_gpu"], {"DEVICE_GPUS": str(gpus)}) == want


def test_dry_run_follows_the_environment():
    assert written(["table"], {"TABLE_SIZES": "30", "DEVICE_GPU": "h100"}) == {
        "results/h100/reduce_2p30.csv", "results/h100/reduce_2p30.txt"}
    assert written(["lab"], {"LAB_EXPERIMENTS": "bulk stream", "OUT": "/tmp/x"}) == {
        f"/tmp/x/experiment_{e}.{x}" for e in ("bulk", "stream") for x in ("csv", "txt")}
    # several steps in one call: the union, each file once
    assert written(["table", "sweep", "scan"]) == expected_paths("table") | expected_paths("sweep") | \
        expected_paths("scan")


def test_dry_run_prints_each_step_and_its_commands():
    text = dry_run(["table", "sanitize", "histogram"])
    assert "run: /tmp/build-device/reduction/reduce --n 2^24 --csv results/h200/reduce_2p24.csv" in text
    assert "--tool racecheck" in text and "--stages KEY" in text
    # one configure and one build for all the steps
    assert text.count("run: configure_for_device") == 1 and text.count("run: cmake --build") == 1
    # the sanitizer's stages: those reduce --stages SANITIZE_STAGES --list names (default all)
    assert "run: /tmp/build-device/reduction/reduce --stages all --list" in text
    assert "reduce --stages 13,cub --list" in dry_run(["sanitize"], {"SANITIZE_STAGES": "13,cub"})


# ---- the manifest's rows ------------------------------------------------------------------------

# Rows that no step wrote under that name, and why they are left out.
MANIFEST_EXCLUDED = [
    (r"^by hand", "made by hand (the commands head the file or the manifest names them)"),
    (r"^`by hand: ", "made by hand, as the file's own command line says"),
    (r"^an earlier or A/B run kept in history/", "an older file renamed into history/ by hand"),
    (r"^`SANITIZE_STAGES=STAGES scripts/device\.sh sanitize`", "the sanitize step over chosen stages, its file"
     " renamed by hand"),
    (r"^`scripts/plot\.py", "drawn by scripts/plot.py from the CSVs, not by a device script"),
    (r"^`scripts/run_doc_commands\.py", "written by scripts/run_doc_commands.py"),
    (r"^`scripts/compare_result_files\.py", "a run's files compared with the committed ones by"
     " scripts/compare_result_files.py"),
    (r"^`reduce ", "a runner command line run by hand"),
    (r"^`scripts/profile\.sh --program reduce --n 2\^24 14,16,18`",
     "scripts/profile.sh over chosen stages, by hand (ncu_metrics_stage18)"),
    (r"^`scripts/profile\.sh --program \w+`: its export of",
     "profile.sh's per-item exports: the driver writes them into results/<gpu>/profile/ (its 'writes .../profile/'"
     " line), committed under results/h200/ncu/"),
    (r"^`scripts/nvcc|^`nvcc ", "compiled by hand"),
    (r"^`ncu ", "Nsight Compute run by hand (its command line heads the file)"),
]
# The command a result file records itself ('# command:'), written by the former script of a
# step (access_ncu.csv/.txt), and that step.
RECORDED_COMMAND_STEP = {"scripts/device_access_patterns.sh": "access"}
# The console log the former scripts/device_multi_gpu.sh kept in its OUT (the folder a device
# machine hands back, not a results folder); the driver prints it and packs files into PACK.
MULTI_GPU_CONSOLE = "device_multi_gpu.log"


def manifest_rows():
    """(section, file, made by) for the sections the device scripts write into."""
    section, rows = None, []
    for line in (ROOT / "results" / "MANIFEST.md").read_text().splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        m = re.match(r"^\| \[([^\]]+)\]\([^)]*\) \| (.*) \| [^|]* \|$", line)
        if m and section in ("h200", "h200/history", "h200/ncu", "h200x4"):
            rows.append((section, m.group(1), m.group(2)))
    return rows


def step_and_env(made_by):
    """The driver's step and environment for a manifest row, or None when it is left out."""
    for pattern, _reason in MANIFEST_EXCLUDED:
        if re.search(pattern, made_by):
            return None
    m = re.search(r"`((?:[A-Z_]+=\S+ )*)scripts/device\.sh (\w+)`", made_by)
    if m:
        return m.group(2), dict(kv.split("=", 1) for kv in m.group(1).split())
    m = re.match(r"^`(scripts/device_\w+\.sh): ", made_by)
    if m:
        return RECORDED_COMMAND_STEP[m.group(1)], {}
    m = re.match(r"^`scripts/profile\.sh --program (reduce --n 2\^24 all|mixed_precision --n 2\^24 all|occupancy)", made_by)
    if m:
        return "profile", {}
    raise AssertionError(f"a manifest row no rule places: {made_by!r} (add it to a step or to MANIFEST_EXCLUDED)")


def test_manifest_rows_are_written_by_the_driver():
    rows = manifest_rows()
    assert len(rows) > 150, "the manifest's tables were not read"
    groups = {}
    for section, name, made_by in rows:
        placed = step_and_env(made_by)
        if placed is None or name == MULTI_GPU_CONSOLE:
            continue
        step, env = placed
        if step == "ab":
            env = {**env, "AB_BASE": str(ROOT)}
        if section == "h200x4":
            env = {**env, "DEVICE_GPUS": "4"}
        groups.setdefault((step, tuple(sorted(env.items()))), []).append((section, name))
    assert {step for step, _ in groups} >= set(EXPECTED) - {"build", "sanitize"} | {"multi_gpu"}, groups.keys()
    missing = []
    for (step, env), files in sorted(groups.items()):
        announced = written([step], dict(env))
        basenames = {p.rsplit("/", 1)[-1] for p in announced}
        for section, name in files:
            path = f"results/{section}/{name}"
            if section == "h200/history" and step != "ab":
                if re.search(r"_[0-9a-f]{7,}\.\w+$", name):
                    continue  # an older run's file, renamed by hand with its commit when kept in history/
                # written into results/h200 by the step, moved into history/ by hand later
                ok = name in basenames
            else:
                ok = path in announced
            if not ok:
                missing.append(f"{path} ({step}, {dict(env)})")
    assert not missing, "files the manifest's steps made that the driver does not write: " + ", ".join(missing)


# ---- a real run on stand-ins: the files written are the files the dry run names ----------------

FAKE_PROGRAM = r'''#!/bin/sh
# A stand-in for the project's programs: --list prints two registry rows, --csv writes a table;
# each call is logged in FAKE_LOG.
echo "$(basename "$0") $*" >>"$FAKE_LOG"
case " $* " in # the refusals the occupancy step expects
  *" --block 2048 "* | *" --grid 20000 "* | *" --blocks 2048 "* | *" --per-sm 64 "* | *" 2^36 "*)
    echo "$(basename "$0"): refused." >&2
    exit 2 ;;
esac
csv="" list=0 fmt="" variant=""
while [ $# -gt 0 ]; do
  case "$1" in --csv) csv=$2; shift ;; --list) list=1 ;; --format) fmt=$2; shift ;; --variant) variant=$2; shift ;; esac
  shift
done
[ -z "$variant" ] || echo "$variant: sum 32, ok"
if [ "$list" = 1 ]; then
  if [ "$fmt" = csv ]; then
    printf '# registry\nkey,id,kind,title,source,chapter\n11,a,stage,t,s,c\n12,b,stage,t,s,c\ncub,cub,baseline,t,s,c\n'
  else
    printf '12\tb\tstage\tt\ts\tc\ncub\tcub\tbaseline\tt\ts\tc\n'
  fi
  exit 0
fi
[ -z "$csv" ] || printf 'key,median_us\n12,1.5\n' >"$csv"
echo "$(basename "$0") ran"
'''
FAKE_TOOLS = {
    # one H100, or FAKE_GPUS of them when not asked for GPU 0 alone
    "nvidia-smi": r'''
case "$*" in
  *"-i 0"*name* | *name*"-i 0"*) echo "NVIDIA H100 80GB HBM3" ;;
  *name*) for i in $(seq 1 "${FAKE_GPUS:-1}"); do echo "NVIDIA H100 80GB HBM3"; done ;;
  *topo* | *nvlink*) echo "GPU0 X" ;;
  *) echo "999.1" ;;
esac
''',
    # Open MPI's mpirun: --version, else the program after the options, once
    "mpirun": r'''
[ "$1" = --version ] && { echo "mpirun (Open MPI) 5.0.3"; exit 0; }
while [ $# -gt 0 ]; do case "$1" in -np | -x | --bind-to) shift 2 ;; --*) shift ;; *) break ;; esac; done
exec "$@"
''',
    "ctest": 'echo "ctest $*"; echo "100% tests passed, 0 tests failed out of 3"\n',
    "compute-sanitizer": r'''
[ "$1" = --version ] && { echo "NVIDIA (R) Compute Sanitizer"; echo "Version 2099.1.0"; exit 0; }
tool=$2; shift 2
while [ "${1#--}" != "$1" ]; do shift 2; done
"$@" || exit $?
if [ "$tool" = racecheck ]; then
  # hazards: FAKE_VOLATILE_HAZARDS and FAKE_SYNCWARP_HAZARDS for those variants, else none
  case " $* " in
    *" --variant volatile "*) h=${FAKE_VOLATILE_HAZARDS:-0} ;;
    *" --variant syncwarp "*) h=${FAKE_SYNCWARP_HAZARDS:-0} ;;
    *) h=0 ;;
  esac
  echo "========= RACECHECK SUMMARY: $h hazards displayed ($h errors, 0 warnings)"
else echo "========= ERROR SUMMARY: 0 errors"; fi
''',
    # configure: a build system, lab/list.txt and every program the steps below run; --build: nothing to do
    "cmake": r'''
if [ "$1" = --build ]; then echo "cmake $*"; exit 0; fi
while [ $# -gt 0 ]; do [ "$1" = -B ] && build=$2; shift; done
mkdir -p "$build/reduction" "$build/lab" "$build/tests" "$build/single_pass/example"
touch "$build/build.ninja" "$build/CMakeCache.txt"
printf 'finish\nstream\n' >"$build/lab/list.txt"
mkdir -p "$build/mixed_precision" "$build/occupancy" "$build/histogram" "$build/multi_gpu"
for p in reduction/reduce lab/finish lab/stream tests/gpu_single_pass_two_files single_pass/example/single_pass_example \
  mixed_precision/mixed_precision tests/mp_host_tests tests/mp_gpu_tests occupancy/01_thread_hierarchy \
  occupancy/02_resource_usage occupancy/03_occupancy_sweep tests/occupancy_host_tests tests/occupancy_gpu_tests \
  lab/warp_tools lab/volatile_last_warp tests/gpu_warp_tools_tests histogram/histogram tests/histogram_host_tests \
  tests/histogram_gpu_tests multi_gpu/multi_gpu_sum multi_gpu/multi_gpu_mpi tests/gpu_multi_gpu_tests; do
  cp "$FAKE_PROGRAM" "$build/$p" && chmod +x "$build/$p"
done
''',
}


def stand_ins(tmp: Path, out: Path, build: Path, **extra) -> dict:
    """The environment of a real run on stand-ins: nvidia-smi naming an H100, cmake, ctest,
    compute-sanitizer and the programs (FAKE_PROGRAM), every call logged in calls.log."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    fake = tmp / "fake_program"
    fake.write_text(FAKE_PROGRAM)
    fake.chmod(0o755)
    for name, body in FAKE_TOOLS.items():
        (bin_dir / name).write_text("#!/usr/bin/env bash\n" + body)
        (bin_dir / name).chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_PROGRAM": str(fake), "FAKE_LOG": str(tmp / "calls.log"),
            "OUT": str(out), "BUILD_DIR": str(build), "TMPDIR": str(tmp), "REDUCTION_COMMIT": "abc1234", **extra}


def test_real_run_of_the_logged_steps_on_stand_ins():
    steps = ["mixed_precision", "occupancy", "warp_tools", "histogram"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out, build = tmp / "out", tmp / "build"
        r = run_driver(steps, stand_ins(tmp, out, build))
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        announced = written(steps, {"OUT": str(out), "BUILD_DIR": str(build)})
        torch = subprocess.run(["python3", "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"],
                               capture_output=True).returncode == 0
        if not torch:  # the histogram step skips torch.bincount, saying so
            announced -= {f"{out}/histogram_torch.csv", f"{out}/histogram_torch.txt"}
            assert "torch with CUDA is not installed here" in r.stdout
        on_disk = {str(p) for p in out.rglob("*") if p.is_file()}
        assert on_disk == announced, on_disk ^ announced
        log = (out / "occupancy_device.txt").read_text()
        # a step's log and a captured table each begin with the commit they came from
        assert log.startswith("# commit: abc1234\n")
        assert (out / "occupancy_03_sweep.txt").read_text().startswith("# commit: abc1234\n")
        assert log.count("refused as expected") == 5 and log.count("sanitize ") == 7 and "FAILED" not in log
        mp = (out / "mixed_precision_device.txt").read_text()
        # 2 sizes x 2 variants x 4 tools, each clean
        assert len(re.findall(r"^sanitize \S+ .* ok$", mp, re.M)) == 16, mp
        race = (out / "racecheck_volatile_warp.csv").read_text().splitlines()
        assert race[-4:] == ["key,hazards,errors,warnings,sum_check,exit_code", "volatile,0,0,0,ok,0",
                             "syncwarp,0,0,0,ok,0", "shuffle,0,0,0,ok,0"]
        hist = (out / "histogram_sanitize.txt").read_text()
        assert hist.count("--- ") == 6 and hist.count("ERROR SUMMARY: 0 errors") == 4 and hist.count("RACECHECK SUMMARY") == 2


@pytest.mark.parametrize("syncwarp_hazards", [0, 2])
def test_warp_tools_verdicts_on_stand_ins(syncwarp_hazards):
    """Hazards in the volatile variant are the finding (exit 0); one in a corrected variant fails
    the step (exit 1), naming the variant and its summary."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out, build = tmp / "out", tmp / "build"
        env = stand_ins(tmp, out, build, FAKE_VOLATILE_HAZARDS="5", FAKE_SYNCWARP_HAZARDS=str(syncwarp_hazards))
        r = run_driver(["warp_tools"], env)
        assert r.returncode == (1 if syncwarp_hazards else 0), r.stdout[-3000:] + r.stderr
        failed = [line for line in r.stdout.splitlines() if line.startswith("FAILED")]
        if syncwarp_hazards:
            assert len(failed) == 1 and failed[0].startswith("FAILED: the corrected syncwarp variant must give 0") \
                and "2 hazards displayed" in failed[0], failed
        else:
            assert failed == [], failed
        assert sorted(p.name for p in out.iterdir()) == ["experiment_warp_tools.csv", "experiment_warp_tools.txt",
                                                         "racecheck_volatile_warp.csv", "racecheck_volatile_warp.txt"]
        h = syncwarp_hazards
        rows = (out / "racecheck_volatile_warp.csv").read_text().splitlines()
        assert rows[-4:] == ["key,hazards,errors,warnings,sum_check,exit_code", "volatile,5,5,0,ok,0",
                             f"syncwarp,{h},{h},0,ok,0", "shuffle,0,0,0,ok,0"], rows
        text = (out / "racecheck_volatile_warp.txt").read_text()
        for needle in ("# volatile: RACECHECK SUMMARY: 5 hazards displayed (5 errors, 0 warnings)",
                       f"# syncwarp: RACECHECK SUMMARY: {h} hazards", "--tool racecheck",
                       "volatile_last_warp --variant volatile", "volatile_last_warp --variant shuffle"):
            assert needle in text, (needle, text)


def test_warp_tools_without_compute_sanitizer_fails_saying_so():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out, build = tmp / "out", tmp / "build"
        r = run_driver(["warp_tools"], stand_ins(tmp, out, build, COMPUTE_SANITIZER=str(tmp / "none")))
        assert r.returncode == 1 and "FAILED: compute-sanitizer was not found" in r.stdout, r.stdout[-3000:] + r.stderr
        assert not (out / "racecheck_volatile_warp.csv").exists() and not (out / "racecheck_volatile_warp.txt").exists()


def test_real_run_of_multi_gpu_on_stand_ins():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out, build, results = tmp / "out", tmp / "build", tmp / "h100x2"
        env = stand_ins(tmp, out, build, FAKE_GPUS="2", RESULTS_DIR=str(results), NCCL_ROOT=str(tmp))
        r = run_driver(["multi_gpu"], env)
        # tests/gpu/test_multi_gpu_mpi.py needs the real programs and a GPU: on the stand-ins it does not
        # pass (77 where it finds no CUDA device), and it is the only part that fails
        failed = [line for line in r.stdout.splitlines() if line.startswith("FAILED")]
        assert r.returncode == 1 and len(failed) == 1 and failed[0].startswith("FAILED: multi_gpu_mpi_test (exit "), \
            r.stdout[-3000:] + r.stderr
        announced = written(["multi_gpu"], {"OUT": str(out), "BUILD_DIR": str(build), "DEVICE_GPUS": "2",
                                            "RESULTS_DIR": str(results)})
        assert {str(p) for p in results.rglob("*")} == announced
        calls = (tmp / "calls.log").read_text().splitlines()
        for line in (f"multi_gpu_sum --gpus 1,2 --sweep 2^20:2^28:4 --csv {results}/multi_gpu.csv",
                     f"multi_gpu_mpi --gpus 1,2 --sweep 2^20:2^28:4 --csv {results}/multi_gpu_mpi.csv",
                     "multi_gpu_mpi --gpus 1,2 --sweep 2^20:2^28:4 --methods shard_then_one_float,"
                     f"shard_then_fixed_order,allreduce_one_float --csv {results}/multi_gpu_mpi_net.csv",
                     "gpu_multi_gpu_tests --durations yes", "gpu_multi_gpu_tests [peer_sanitize]"):
            assert line in calls, (line, calls)
        assert (results / "multi_gpu_sanitize.txt").read_text().count("# compute-sanitizer --tool") == 4
        assert (results / "nccl_transports.txt").read_text().count("\n## ") == 3


def test_real_run_on_stand_ins_writes_the_dry_runs_files():
    steps = ["build", "test", "table", "sweep", "flush", "sanitize", "lab", "library"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out, build, pack = tmp / "out", tmp / "build", tmp / "pack"
        env = stand_ins(tmp, out, build, PACK=str(pack), TABLE_SIZES="20")
        before = tree_hash(ROOT / "results")
        r = run_driver(steps, env)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        assert tree_hash(ROOT / "results") == before
        announced = written(steps, {"OUT": str(out), "BUILD_DIR": str(build), "TABLE_SIZES": "20"})
        files = {p for p in announced if not p.endswith("/")}
        on_disk = {str(p) for p in out.rglob("*") if p.is_file() and p.parent == out}
        assert on_disk == files, (on_disk ^ files)
        # the sanitizer's table: every stage --list named, four tools, all runs clean
        text = (out / "sanitize.txt").read_text().splitlines()
        assert text[0].startswith("# compute-sanitizer over the registered stages:") and "Version 2099.1.0" in text[0]
        assert text[2].split() == ["stage", "tool", "errors", "hazards", "result"]
        rows = [line.split() for line in text[3:-1]]
        assert [(r[0], r[1]) for r in rows] == [(k, t) for k in ("12", "cub")
                                                for t in ("memcheck", "racecheck", "synccheck", "initcheck")]
        assert all(r[2] == "0" and r[-1] == "ok" for r in rows) and text[-1] == "# all 32 runs clean"
        lib = (out / "sanitize_library.txt").read_text().splitlines()
        assert len(lib) == 11 and lib[-1] == "# all runs clean" and all(line.endswith(" ok") for line in lib[2:10])
        assert len(list((out / "sanitize_library").glob("*.log"))) == 8
        # the table step's files are the runner's, whole
        assert (out / "reduce_2p20.csv").read_text() == "key,median_us\n12,1.5\n"
        # the printout, after the commit it came from (REDUCTION_COMMIT, as the programs record it)
        assert (out / "reduce_2p20.txt").read_text() == "# commit: abc1234\nreduce ran\n"
        # the sweep and the flush tables take the stages from 12 on (reduce --list) and cub
        calls = (tmp / "calls.log").read_text().splitlines()
        assert f"reduce --sweep 2^10:2^30 --stages 12,cub --csv {out}/sweep.csv" in calls, calls
        for k in (28, 30):
            assert f"reduce --n 2^{k} --stages 12,cub --flush write --csv {out}/reduce_2p{k}_write_flush.csv" in calls
        assert f"reduce --sweep 2^10:2^30 --stages library,cub --csv {out}/library_sweep.csv" in calls
        assert f"finish --csv {out}/experiment_finish.csv" in calls and f"stream --csv {out}/experiment_stream.csv" in calls
        assert "reduce --stages 12 --n 1048583 --run-once" in calls and "reduce --stages cub --n 1 --run-once" in calls
        with tarfile.open(pack / "device_results.tgz") as tar:
            names = set(tar.getnames())
        assert {f.lstrip("/") for f in files} <= names, files
        # nothing left in TMPDIR but what the test made
        assert sorted(p.name for p in tmp.iterdir()) == ["bin", "build", "calls.log", "fake_program", "out", "pack"]
