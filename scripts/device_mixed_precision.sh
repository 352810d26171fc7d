#!/usr/bin/env bash
# Mixed-precision dot products on a GPU machine, in one call:
#   1. configure and build (Release, sm_90) the runner, the per-variant programs and
#      the mixed-precision tests;
#   2. run the host and GPU tests;
#   3. print the table at n = 2^24 and 2^28 and write
#      $OUT/mixed_precision_2p24.csv and $OUT/mixed_precision_2p28.csv;
#   4. run compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over every
#      registered variant with --run-once at small sizes, one line per variant, size
#      and tool with its error count.
# Everything printed also goes to $OUT/mixed_precision_device.txt (written whole when
# the run ends).
#   scripts/device_mixed_precision.sh
# Environment: OUT (default results/<gpu>, from the GPU's name: h200, h100, ...),
# BUILD_DIR (default /tmp/build-mp), TABLE_SIZES (default "24 28"), SANITIZE_SIZES
# (default "1025 1048579", that is 2^10 + 1 and 2^20 + 3: both leave a tail past the
# last 16-byte chunk of every type).
# Exit codes: 0 every step passed; 1 a step failed; 2 an argument or a bad value of the
# environment (one sentence, nothing written); 3 no GPU (checked before anything is
# built or written).
set -uo pipefail
program=device_mixed_precision.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh
case "${1:-}" in -h | --help) script_help "${BASH_SOURCE[0]}" && exit 0 ;; esac
[ $# -eq 0 ] || refuse "$program" "it takes no arguments ('$1'); set OUT, BUILD_DIR, TABLE_SIZES or SANITIZE_SIZES" \
  "instead."
for k in ${TABLE_SIZES:-24 28}; do check_whole_number "$program" "TABLE_SIZES item" "$k" 1 40; done
for n in ${SANITIZE_SIZES:-1025 1048579}; do check_whole_number "$program" "SANITIZE_SIZES item" "$n" 1 1073741824; done
BUILD_DIR=${BUILD_DIR:-/tmp/build-mp}
PRESET="" check_build_env "$program"
[ -z "${OUT:-}" ] || check_output_dir "$program" OUT "$OUT"
detect_gpu "$program"
OUT=${OUT:-results/$gpu}
check_output_dir "$program" OUT "$OUT"
mkdir -p "$OUT"
log_to "$OUT/mixed_precision_device.txt"
status=0
start=$SECONDS

echo "=== build ($BUILD_DIR)"
log=$(scratch_file device_mixed_precision_build) && remove_at_exit "$log" || exit 1
configure_for_device >"$log" 2>&1 || {
  tail -40 "$log"
  exit 1
}
runner=$BUILD_DIR/mixed_precision/mixed_precision
cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target mixed_precision >>"$log" 2>&1 || {
  tail -40 "$log"
  exit 1
}
# The per-variant programs are named after their source files (mixed_precision --list).
targets=(mp_host_tests mp_gpu_tests)
while IFS=$'\t' read -r _ _ _ _ _ source _; do
  targets+=("mixed_precision_$(basename "$source" .cu)")
done < <("$runner" --list)
cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target "${targets[@]}" >>"$log" 2>&1 || {
  tail -40 "$log"
  exit 1
}
# Warnings from this part of the project (host compiler, nvcc or ptxas spills).
if grep -iE "warning" "$log" | grep -qE "mixed_precision|test_mp_|ptxas"; then
  echo "build warnings:"
  grep -iE -A3 "warning" "$log" | head -40
  status=1
fi
echo "built in $((SECONDS - start)) s"
# Registers, shared memory and spills of each variant's kernel, for the record.
if command -v cuobjdump >/dev/null 2>&1; then
  cuobjdump --dump-resource-usage "$BUILD_DIR/mixed_precision/libmixed_precision_variants.a" 2>/dev/null |
    grep -A1 "dot_product" | grep -E "Function|REG" | sed -e 's/^[[:space:]]*//' | cut -c1-160
fi

echo "=== tests"
for t in mp_host_tests mp_gpu_tests; do
  "$BUILD_DIR/tests/$t" 2>&1 | tail -4
  rc=${PIPESTATUS[0]}
  # 77 means no GPU was found: on this machine that is a failure, not a skip.
  [ "$rc" -eq 0 ] || { echo "$t: exit code $rc"; status=1; }
done

echo "=== table"
for k in ${TABLE_SIZES:-24 28}; do
  "$runner" --n "2^$k" --csv "$OUT/mixed_precision_2p$k.csv" || status=1
  echo
done

echo "=== compute-sanitizer"
sizes=${SANITIZE_SIZES:-1025 1048579}
if ! command -v compute-sanitizer >/dev/null 2>&1; then
  echo "compute-sanitizer was not found on PATH: the sanitizer step cannot run."
  sizes=""
  status=1
fi
mapfile -t keys < <("$runner" --list | cut -f1,2)
logs=$(mktemp -d)
# One job per size and variant runs the four tools in turn; up to 8 jobs share the GPU.
sanitize_one() {
  local n=$1 key=$2 id=$3 tool text rc errors hazards verdict extra
  for tool in memcheck racecheck synccheck initcheck; do
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    text=$(timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 99 "${extra[@]}" \
      "$runner" --run-once --variants "$key" --n "$n" 2>&1)
    rc=$?
    errors=$(printf '%s\n' "$text" | sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' | tail -1)
    hazards=$(printf '%s\n' "$text" | sed -n 's/.*RACECHECK SUMMARY: \([0-9][0-9]*\) hazard.*/\1/p' | tail -1)
    # racecheck may print only its own summary: "N hazards displayed (E errors, W warnings)".
    [ -n "$errors" ] || errors=$(printf '%s\n' "$text" | sed -n 's/.*RACECHECK SUMMARY:.*(\([0-9][0-9]*\) error.*/\1/p' | tail -1)
    verdict=ok
    if [ -z "$errors" ] || [ "$errors" -ne 0 ] || [ "${hazards:-0}" -ne 0 ] || [ "$rc" -ne 0 ]; then verdict=FAIL; fi
    printf 'sanitize %s %-22s n=%-8s %-9s errors=%-3s exit=%-3s %s\n' "$key" "$id" "$n" "$tool" "${errors:-?}" "$rc" \
      "$verdict"
    [ "$verdict" = ok ] || printf '%s\n' "$text" | tail -30
  done
}
# Waits name their jobs: a bare `wait` would also wait for the tee above.
batch=()
for n in $sizes; do
  for entry in "${keys[@]}"; do
    key=${entry%%$'\t'*}
    sanitize_one "$n" "$key" "${entry#*$'\t'}" >"$logs/$n.$key.txt" &
    batch+=($!)
    if [ ${#batch[@]} -ge 8 ]; then
      wait "${batch[@]}"
      batch=()
    fi
  done
done
[ ${#batch[@]} -eq 0 ] || wait "${batch[@]}"
for n in $sizes; do
  for entry in "${keys[@]}"; do
    cat "$logs/$n.${entry%%$'\t'*}.txt"
  done
done
if grep -q "FAIL" "$logs"/*.txt 2>/dev/null; then status=1; fi
rm -rf "$logs"

echo "=== done in $((SECONDS - start)) s: $([ $status -eq 0 ] && echo all passed || echo FAILURES above)"
exit $status
