#!/usr/bin/env bash
# The warp-level tools of chapters 08 and 09 on a GPU machine, over a build that already
# exists (scripts/device_check.sh build makes one; this script builds nothing):
#   1. the GPU test of every warp-step design (tests/gpu_warp_tools_tests), when built;
#   2. build/lab/warp_tools: $OUT/experiment_warp_tools.csv and .txt (the table);
#   3. compute-sanitizer --tool racecheck over build/lab/volatile_last_warp, once
#      per variant (volatile, syncwarp, shuffle), each one small launch:
#        $OUT/racecheck_volatile_warp.txt   every command line and its whole output,
#                                           after one summary line per variant
#        $OUT/racecheck_volatile_warp.csv   per variant: hazards, errors, warnings, and
#                                           whether the program's own sum verified
#   scripts/device_warp_tools.sh
# Environment: OUT (where result files go, default results/<gpu>, from the name of the
# GPU the programs run on: h200, h100, ...), BUILD_DIR (default
# /tmp/build-gpu, device_check.sh's), COMPUTE_SANITIZER (default: the one on PATH, else
# in $CUDA_HOME/bin or /usr/local/cuda/bin).
# Exit codes: 0 every step passed; 1 the GPU test or a warp_tools check failed, or
# racecheck found a hazard in a corrected variant (syncwarp, shuffle) or gave no summary
# for a variant; 2 a missing program, tool or output folder; 3 no CUDA device. What
# racecheck says about the volatile variant is recorded, not judged.
set -uo pipefail
program=device_warp_tools.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
# shellcheck source=scripts/common.sh
source scripts/common.sh
case "${1:-}" in -h | --help) script_help "${BASH_SOURCE[0]}" && exit 0 ;; esac
[ $# -eq 0 ] || refuse "$program" "it takes no arguments ('$1'); set OUT, BUILD_DIR or COMPUTE_SANITIZER instead."
BUILD_DIR=${BUILD_DIR:-/tmp/build-gpu}
warp_tools=$BUILD_DIR/lab/warp_tools
last_warp=$BUILD_DIR/lab/volatile_last_warp
gpu_test=$BUILD_DIR/tests/gpu_warp_tools_tests

fail_usage() { # the arguments, joined by spaces, are one sentence
  echo "$program: $*" >&2
  exit 2
}
for p in "$warp_tools" "$last_warp"; do
  [ -x "$p" ] || fail_usage "'$p' was not found: build the project first (scripts/device_check.sh build, or" \
    "cmake --build BUILD_DIR --target experiment_$(basename "$p")) and set BUILD_DIR to its build directory."
done
sanitizer=$(find_cuda_tool compute-sanitizer "${COMPUTE_SANITIZER:-}")
if [ -z "$sanitizer" ] || [ ! -x "$sanitizer" ]; then
  fail_usage "compute-sanitizer was not found (looked on PATH, in \$CUDA_HOME/bin and /usr/local/cuda/bin); it comes" \
    "with the CUDA toolkit: add its bin directory to PATH or set COMPUTE_SANITIZER."
fi
[ -z "${OUT:-}" ] || check_output_dir "$program" OUT "$OUT"

# A GPU (nvidia-smi), and a plain run that finds it: with none, stop before any file or
# folder is written.
detect_gpu "$program"
probe=$("$last_warp" --variant shuffle 2>&1)
probe_rc=$?
if [ "$probe_rc" -eq 3 ]; then
  echo "$program: ${probe#volatile_last_warp: }" >&2
  exit 3
fi
device=$(sed -n 's/^volatile_last_warp on \(.*\) (compute capability.*/\1/p' <<<"$probe")
OUT=${OUT:-results/$gpu}
check_output_dir "$program" OUT "$OUT"
mkdir -p "$OUT" || exit 1
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null | head -1 || true)
status=0

echo "=== GPU test of the warp-step designs"
if [ -x "$gpu_test" ]; then
  "$gpu_test" || status=1
else
  echo "($gpu_test is not built: skipped; scripts/device_check.sh test runs it with the other tests)"
fi

echo "=== warp_tools"
"$warp_tools" --csv "$OUT/experiment_warp_tools.csv" 2>&1 | tee_atomic "$OUT/experiment_warp_tools.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "=== racecheck over volatile_last_warp"
work=$(mktemp -d "${TMPDIR:-/tmp}/warp_racecheck.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
sanitizer_version=$("$sanitizer" --version 2>&1 | grep -m1 -i version || true)
summaries=()
csv_rows=()
for variant in volatile syncwarp shuffle; do
  command=("$sanitizer" --tool racecheck "$last_warp" --variant "$variant")
  log=$work/$variant.log
  "${command[@]}" >"$log" 2>&1
  rc=$?
  echo "$ ${command[*]}" >"$work/$variant.section"
  cat "$log" >>"$work/$variant.section"
  echo "(exit code $rc)" >>"$work/$variant.section"
  summary=$(grep -oE 'RACECHECK SUMMARY: .*' "$log" | tail -1)
  number_before() { grep -oE "[0-9]+ $1" <<<"$summary" | grep -oE '^[0-9]+' || echo ""; }
  hazards=$(number_before hazard)
  errors=$(number_before error)
  warnings=$(number_before warning)
  sum_check=FAIL
  grep -qE "^$variant: sum .*, ok$" "$log" && sum_check=ok
  if [ -z "$summary" ] || [ -z "$hazards" ]; then
    summaries+=("# $variant: no RACECHECK SUMMARY line (exit code $rc)")
    echo "$program: racecheck gave no summary for the $variant variant (exit code $rc); its output:" >&2
    tail -n 20 "$log" >&2
    status=1
  else
    summaries+=("# $variant: $summary")
    csv_rows+=("$variant,$hazards,$errors,$warnings,$sum_check,$rc")
    if [ "$variant" != volatile ] && { [ "$hazards" -ne 0 ] || [ "$rc" -ne 0 ]; }; then
      echo "$program: the corrected $variant variant must give 0 hazards and exit 0; racecheck says '$summary'" \
        "(exit code $rc)." >&2
      status=1
    fi
  fi
  if [ "$variant" != volatile ] && [ "$sum_check" != ok ]; then
    echo "$program: the $variant variant's sum did not verify." >&2
    status=1
  fi
  echo "${summaries[-1]} (sum: $sum_check)"
done

commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
{
  echo "# compute-sanitizer --tool racecheck over build/lab/volatile_last_warp (lab/volatile_last_warp.cu)"
  echo "# device: ${device:-unknown}; ${sanitizer_version:-compute-sanitizer version unknown}; commit $commit; $date"
  printf '%s\n' "${summaries[@]}"
  for variant in volatile syncwarp shuffle; do
    echo
    cat "$work/$variant.section"
  done
} >"$work/racecheck.txt"
{
  echo "# device: ${device:-unknown}"
  [ -z "$driver" ] || echo "# driver: $driver"
  echo "# tool: ${sanitizer_version:-compute-sanitizer}"
  echo "# commit: $commit"
  echo "# date: $date"
  echo "key,hazards,errors,warnings,sum_check,exit_code"
  printf '%s\n' "${csv_rows[@]}"
} >"$work/racecheck.csv"
tee_atomic "$OUT/racecheck_volatile_warp.txt" <"$work/racecheck.txt" >/dev/null || status=1
tee_atomic "$OUT/racecheck_volatile_warp.csv" <"$work/racecheck.csv" >/dev/null || status=1
echo "wrote $OUT/experiment_warp_tools.csv, $OUT/experiment_warp_tools.txt, $OUT/racecheck_volatile_warp.txt and" \
  "$OUT/racecheck_volatile_warp.csv"
exit $status
