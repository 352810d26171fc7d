#!/usr/bin/env python3
"""The command lines of build/lab/warp_tools and build/lab/volatile_last_warp:
--help, the refusals each makes before it looks for a GPU (exit code 2, one sentence on
stderr naming the value, no file written), exit code 3 for a device that is not there,
and with no GPU at all, exit 3 for a plain run with nothing written. Starts no
measurement, so it runs with or without a GPU.

Then scripts/device_warp_tools.sh: its refusals (a build without the programs, no
compute-sanitizer: exit 2, nothing written), and its verdicts with stand-in programs and a
stand-in compute-sanitizer: the result files written, and exit 1 when a corrected variant
shows a hazard.

usage: test_warp_tools_cli.py PATH/TO/warp_tools PATH/TO/volatile_last_warp
"""
import os
import subprocess
import sys
import tempfile

warp_tools, volatile_last_warp = sys.argv[1], sys.argv[2]
failures = []
passed = 0


def run(program, args):
    p = subprocess.run([program] + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def expect(label, ok, detail):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(f"{label}: {detail}")


def one_sentence(name, err):
    """One line on stderr, naming the program, ending with a full stop."""
    lines = err.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith(f"{name}: ") and lines[0].rstrip().endswith(".")


def check_refusals(program, cases, scratch):
    name = os.path.basename(program)
    for args, needle in cases:
        rc, out, err = run(program, args)
        expect(f"{name} {args}", rc == 2 and needle in err and one_sentence(name, err) and out == "",
               f"exit {rc} (expected 2), stdout {out!r}, stderr {err!r} (expected one sentence with {needle!r})")
    expect(f"{name}: no file written by a refused run", os.listdir(scratch) == [], f"found {os.listdir(scratch)}")


def check_no_device(program, args, scratch):
    name = os.path.basename(program)
    rc, out, err = run(program, ["--device", "1023"] + args)
    expect(f"{name} --device 1023", rc == 3 and one_sentence(name, err) and out == "",
           f"exit {rc} (expected 3), stdout {out!r}, stderr {err!r}")
    if "No CUDA device" in err:  # this machine has no GPU at all
        rc, out, err = run(program, args)
        expect(f"{name} without a GPU", rc == 3 and "No CUDA device" in err and one_sentence(name, err),
               f"exit {rc} (expected 3), stderr {err!r}")
    expect(f"{name}: no file written without a device", os.listdir(scratch) == [], f"found {os.listdir(scratch)}")


# ---- warp_tools ---------------------------------------------------------------------------

rc, out, err = run(warp_tools, ["--help"])
expect("warp_tools --help", rc == 0 and err == "", f"exit {rc}, stderr {err!r}")
for needle in ("usage: warp_tools", "--n N", "--csv FILE", "--json FILE", "--device D", "--reps R", "--warm-l2",
               "__reduce_add_sync", "__ballot_sync", "cooperative_groups::reduce", "u32-reduce-add", "f32-ballot",
               "chapters/08_warp_shuffles.md", "chapters/09_cooperative_groups.md", "Exit codes"):
    expect(f"warp_tools --help names {needle!r}", needle in out, f"output {out!r}")

with tempfile.TemporaryDirectory() as scratch:
    missing = os.path.join(scratch, "no", "such", "dir")
    check_refusals(warp_tools, [
        (["bogus"], "unexpected argument 'bogus'"),
        (["--bogus"], "unknown option '--bogus'"),
        (["--n"], "option --n needs a value"),
        (["--n", "0"], "--n"),
        (["--n", "2^31"], "--n"),
        (["--n", "-5"], "--n"),
        (["--n", "1e6"], "--n"),
        (["--reps", "0"], "--reps"),
        (["--csv", f"{missing}/x.csv"], f"{missing}/x.csv"),
        ([f"--json={missing}/x.json"], f"{missing}/x.json"),
        (["--csv", os.path.join(scratch, "a.csv"), "--json", os.path.join(scratch, "a.csv")], "a.csv"),
        (["--device", "x"], "--device 'x'"),
        # A bad option after a good output file: refused before anything is written.
        (["--csv", os.path.join(scratch, "a.csv"), "--n", "0"], "--n"),
    ], scratch)
    check_no_device(warp_tools, ["--n", "1000", "--csv", os.path.join(scratch, "r.csv")], scratch)

# ---- volatile_last_warp -------------------------------------------------------------------

rc, out, err = run(volatile_last_warp, ["--help"])
expect("volatile_last_warp --help", rc == 0 and err == "", f"exit {rc}, stderr {err!r}")
for needle in ("usage: volatile_last_warp", "--variant V", "volatile, syncwarp or shuffle", "--n N", "--device D",
               "racecheck", "chapters/08_warp_shuffles.md", "Exit codes"):
    expect(f"volatile_last_warp --help names {needle!r}", needle in out, f"output {out!r}")

with tempfile.TemporaryDirectory() as scratch:
    check_refusals(volatile_last_warp, [
        (["--variant", "lockstep"], "--variant 'lockstep'"),
        (["--variant"], "option --variant needs a value"),
        (["--n", "0"], "--n"),
        (["--n", "2^21"], "--n"),
        (["--bogus"], "unknown option '--bogus'"),
        (["extra"], "unexpected argument 'extra'"),
    ], scratch)
    check_no_device(volatile_last_warp, ["--variant", "syncwarp"], scratch)

# ---- scripts/device_warp_tools.sh --------------------------------------------------------

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "device_warp_tools.sh")
build = os.path.dirname(os.path.dirname(os.path.abspath(warp_tools)))
with tempfile.TemporaryDirectory() as scratch:
    out_dir = os.path.join(scratch, "out")
    os.mkdir(out_dir)
    for label, env, needle in [
        ("a build without the programs", {"BUILD_DIR": os.path.join(scratch, "nobuild")}, "nobuild/lab"),
        ("no compute-sanitizer", {"BUILD_DIR": build, "COMPUTE_SANITIZER": os.path.join(scratch, "none")},
         "compute-sanitizer was not found"),
    ]:
        p = subprocess.run([script], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "OUT": out_dir, **env})
        expect(f"device_warp_tools.sh: {label}", p.returncode == 2 and needle in p.stderr,
               f"exit {p.returncode} (expected 2), stderr {p.stderr!r}")
    expect("device_warp_tools.sh: nothing written by a refused run", os.listdir(out_dir) == [],
           f"found {os.listdir(out_dir)}")

STAND_IN_LAST_WARP = """#!/bin/sh
echo "volatile_last_warp on NVIDIA Stand-in (compute capability 9.0): n = 4096, one block of 256 threads"
echo "$2: sum 2047.5, reference 2047.5, ok"
"""
STAND_IN_WARP_TOOLS = """#!/bin/sh
echo "warp_tools table"
printf '# device: NVIDIA Stand-in\\nkey,n\\nf32-shfl,1000\\n' > "$2"
"""
# Runs the program it is given, then prints a summary: 5 hazards for the volatile variant,
# $SYNCWARP_HAZARDS (default 0) for syncwarp, 0 for shuffle.
STAND_IN_SANITIZER = """#!/bin/sh
[ "$1" = --version ] && { echo "Compute Sanitizer"; echo "Version 0.0 stand-in"; exit 0; }
shift 2
"$@"
case "$3" in
  volatile) h=5 ;;
  syncwarp) h=${SYNCWARP_HAZARDS:-0} ;;
  *) h=0 ;;
esac
echo "========= RACECHECK SUMMARY: $h hazards displayed ($h errors, 0 warnings)"
"""


def stand_in(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)


with tempfile.TemporaryDirectory() as scratch:
    os.makedirs(os.path.join(scratch, "build", "lab"))
    os.makedirs(os.path.join(scratch, "bin"))
    stand_in(os.path.join(scratch, "build", "lab", "volatile_last_warp"), STAND_IN_LAST_WARP)
    stand_in(os.path.join(scratch, "build", "lab", "warp_tools"), STAND_IN_WARP_TOOLS)
    stand_in(os.path.join(scratch, "compute-sanitizer"), STAND_IN_SANITIZER)
    # The script asks nvidia-smi for a GPU before it writes anything: a stand-in one.
    stand_in(os.path.join(scratch, "bin", "nvidia-smi"), "#!/bin/sh\necho 'NVIDIA Stand-in'\n")
    env = {**os.environ, "BUILD_DIR": os.path.join(scratch, "build"),
           "COMPUTE_SANITIZER": os.path.join(scratch, "compute-sanitizer"),
           "PATH": os.path.join(scratch, "bin") + os.pathsep + os.environ["PATH"]}

    out_dir = os.path.join(scratch, "clean")
    p = subprocess.run([script], capture_output=True, text=True, timeout=120, env={**env, "OUT": out_dir})
    expect("device_warp_tools.sh: hazards only in the volatile variant pass", p.returncode == 0,
           f"exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")
    written = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
    expect("device_warp_tools.sh: writes its four files", written == [
        "experiment_warp_tools.csv", "experiment_warp_tools.txt", "racecheck_volatile_warp.csv",
        "racecheck_volatile_warp.txt"], f"found {written}")
    if "racecheck_volatile_warp.csv" in written:
        with open(os.path.join(out_dir, "racecheck_volatile_warp.csv")) as f:
            rows = [line.strip() for line in f if not line.startswith("#")]
        expect("device_warp_tools.sh: one CSV row per variant", rows == [
            "key,hazards,errors,warnings,sum_check,exit_code", "volatile,5,5,0,ok,0", "syncwarp,0,0,0,ok,0",
            "shuffle,0,0,0,ok,0"], f"rows {rows}")
        with open(os.path.join(out_dir, "racecheck_volatile_warp.txt")) as f:
            text = f.read()
        for needle in ("# volatile: RACECHECK SUMMARY: 5 hazards displayed (5 errors, 0 warnings)",
                       "# syncwarp: RACECHECK SUMMARY: 0 hazards", "--tool racecheck",
                       "volatile_last_warp --variant volatile", "volatile_last_warp --variant shuffle"):
            expect(f"device_warp_tools.sh: the racecheck log holds {needle!r}", needle in text, text)

    out_dir = os.path.join(scratch, "hazard")
    p = subprocess.run([script], capture_output=True, text=True, timeout=120,
                       env={**env, "OUT": out_dir, "SYNCWARP_HAZARDS": "2"})
    expect("device_warp_tools.sh: a hazard in the syncwarp variant fails (exit 1) naming it",
           p.returncode == 1 and "syncwarp" in p.stderr and "2 hazards" in p.stderr,
           f"exit {p.returncode}, stderr {p.stderr!r}")

for f in failures:
    print("FAIL:", f)
print(f"warp tools command lines: {passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
