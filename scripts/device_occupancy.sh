#!/usr/bin/env bash
# The occupancy programs on a GPU machine, in one call:
#   1. configure and build (Release, sm_90) the three programs and their tests;
#   2. run the host and GPU tests, and the refusals that need the device's limits;
#   3. run compute-sanitizer (memcheck; racecheck and synccheck on the kernels with
#      shared memory) over small runs of the three programs;
#   4. write the results:
#        $OUT/occupancy_01_summary.txt         01_thread_hierarchy, one wave and four waves
#        $OUT/occupancy_02_resource_usage.csv  02_resource_usage (+ .txt, the printed table)
#        $OUT/occupancy_03_sweep.csv           03_occupancy_sweep (+ .txt)
# Everything printed also goes to $OUT/occupancy_device.txt (written whole when the
# run ends).
#   scripts/device_occupancy.sh
# Environment: OUT (default results/<gpu>, from the GPU's name: h200, h100, ...),
# BUILD_DIR (default /tmp/build-occ), and CMAKE_PREFIX_PATH if Catch2 lives somewhere
# unusual (a .deps/ folder in the repository is used automatically).
# Exit codes: 0 every step passed; 1 a step failed; 2 an argument or a bad value of the
# environment (one sentence, nothing written); 3 no GPU (checked before anything is
# built or written).
set -uo pipefail
program=device_occupancy.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh
case "${1:-}" in -h | --help) script_help "${BASH_SOURCE[0]}" && exit 0 ;; esac
[ $# -eq 0 ] || refuse "$program" "it takes no arguments ('$1'); set OUT or BUILD_DIR instead."
BUILD_DIR=${BUILD_DIR:-/tmp/build-occ}
PRESET="" check_build_env "$program"
[ -z "${OUT:-}" ] || check_output_dir "$program" OUT "$OUT"
detect_gpu "$program"
OUT=${OUT:-results/$gpu}
check_output_dir "$program" OUT "$OUT"
mkdir -p "$OUT"
log_to "$OUT/occupancy_device.txt"
status=0
start=$SECONDS
bin=$BUILD_DIR/occupancy

echo "=== build ($BUILD_DIR)"
log=$(scratch_file device_occupancy_build) && remove_at_exit "$log" || exit 1
if ! { configure_for_device >"$log" 2>&1 &&
  cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target 01_thread_hierarchy 02_resource_usage \
    03_occupancy_sweep occupancy_host_tests occupancy_gpu_tests >>"$log" 2>&1; }; then
  tail -40 "$log"
  exit 1
fi
if grep -iE "warning" "$log" | grep -qE "occupancy|test_occ_|ptxas"; then
  echo "build warnings:"
  grep -iE -A3 "warning" "$log" | head -40
  status=1
fi
echo "built in $((SECONDS - start)) s"

echo "=== tests"
for t in occupancy_host_tests occupancy_gpu_tests; do
  "$BUILD_DIR/tests/$t" 2>&1 | tail -4
  rc=${PIPESTATUS[0]}
  # 77 means no GPU was found: on this machine that is a failure, not a skip.
  [ "$rc" -eq 0 ] || { echo "$t: exit code $rc"; status=1; }
done
ctest --test-dir "$BUILD_DIR" -R '^occupancy_cli_' 2>&1 | tail -3
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# Refusals that need the device's limits: exit code 2, one sentence, no output file.
expect_usage_error() {
  local csv=$BUILD_DIR/refused.csv
  rm -f "$csv"
  "$@" --csv "$csv" >/dev/null 2>"$BUILD_DIR/refused.err"
  local rc=$?
  if [ "$rc" -eq 2 ] && [ ! -e "$csv" ]; then
    echo "refused as expected: $(basename "$1") ${*:2} -> $(head -1 "$BUILD_DIR/refused.err")"
  else
    echo "NOT refused properly (exit $rc): $*"
    status=1
  fi
}
expect_usage_error "$bin/01_thread_hierarchy" --block 2048
expect_usage_error "$bin/01_thread_hierarchy" --grid 20000 --block 1024
expect_usage_error "$bin/03_occupancy_sweep" --blocks 2048
expect_usage_error "$bin/03_occupancy_sweep" --per-sm 64
expect_usage_error "$bin/03_occupancy_sweep" --n 2^36

echo "=== compute-sanitizer"
sanitize() {
  local tool=$1
  shift
  local text rc errors verdict=ok
  text=$(compute-sanitizer --tool "$tool" "$@" 2>&1)
  rc=$?
  errors=$(printf '%s\n' "$text" | sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' | tail -1)
  # racecheck ends with its own summary: "RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)";
  # a hazard of either kind is a failure here.
  if [ -z "$errors" ] && [ "$tool" = racecheck ]; then
    errors=$(printf '%s\n' "$text" | sed -n 's/.*RACECHECK SUMMARY: \([0-9][0-9]*\) hazard.*/\1/p' | tail -1)
  fi
  if [ -z "$errors" ] || [ "$errors" -ne 0 ] || [ "$rc" -ne 0 ]; then
    verdict=FAIL
    status=1
  fi
  printf 'sanitize %-9s errors=%-3s exit=%-2s %-4s %s\n' "$tool" "${errors:-?}" "$rc" "$verdict" "$(basename "$1") ${*:2}"
  [ "$verdict" = ok ] || printf '%s\n' "$text" | tail -30
}
small02=(--size 200 --check-size 70 --samples 64 --reps 2 --warm-l2)
small03=(--n 1000003 --blocks "32,1024" --per-sm "1,2" --reps 2 --warm-l2)
sanitize memcheck "$bin/01_thread_hierarchy" --grid 5 --block 100
sanitize memcheck "$bin/02_resource_usage" "${small02[@]}"
sanitize racecheck "$bin/02_resource_usage" "${small02[@]}"
sanitize synccheck "$bin/02_resource_usage" "${small02[@]}"
sanitize memcheck "$bin/03_occupancy_sweep" "${small03[@]}"
sanitize racecheck "$bin/03_occupancy_sweep" "${small03[@]}"
sanitize synccheck "$bin/03_occupancy_sweep" "${small03[@]}"

echo "=== 01_thread_hierarchy"
{
  rc=0
  for args in "--grid 264 --block 256" "--grid 1056 --block 1024"; do
    echo "\$ 01_thread_hierarchy $args"
    # shellcheck disable=SC2086
    "$bin/01_thread_hierarchy" $args || rc=1
    echo
  done
  exit $rc
} | tee_atomic "$OUT/occupancy_01_summary.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "=== 02_resource_usage"
"$bin/02_resource_usage" --csv "$OUT/occupancy_02_resource_usage.csv" |
  tee_atomic "$OUT/occupancy_02_resource_usage.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "=== 03_occupancy_sweep"
# Progress lines go to stderr (the log only); the table and the verdict to the .txt.
"$bin/03_occupancy_sweep" --csv "$OUT/occupancy_03_sweep.csv" | tee_atomic "$OUT/occupancy_03_sweep.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "=== done in $((SECONDS - start)) s: $([ $status -eq 0 ] && echo all passed || echo FAILURES above)"
exit $status
