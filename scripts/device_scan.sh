#!/usr/bin/env bash
# The scan ladder (scan/) on a GPU machine, in one call, printing its progress:
#   1. configure and build (Release, sm_90) the runner and its tests in BUILD_DIR;
#   2. the host and GPU tests and the command lines (tests/host/test_scan_cli.py)
#        -> RESULTS/scan_tests.txt
#   3. the sweep: every power of two from 2^10 to 2^30 elements and a few odd sizes, for
#      int inclusive, int exclusive and float inclusive, each row beside CUB's DeviceScan
#      and the copy bound measured in the same run (fewer repetitions at large sizes:
#      --reps 50 with a budget of 150 ms per row)
#        -> RESULTS/scan_<type>_<kind>.csv and .txt
#   4. torch.cumsum, int32 and float32, over the powers of two up to 2^28
#      (scripts/time_torch_scan.py; skipped, saying so, without torch)
#        -> RESULTS/scan_torch.csv and .txt
#   5. compute-sanitizer memcheck, racecheck and synccheck on every stage at small sizes
#      (--run-once)  -> RESULTS/scan_sanitize.txt
# RESULTS is results/<gpu>, from the GPU's name (h200, h100, ...). When OUT is set, every
# file this run wrote is also packed, with its path from the repository's root, into
# OUT/scan_results.tgz. The steps after a failed one still run.
#   scripts/device_scan.sh
# Environment: OUT (above), BUILD_DIR (default /tmp/build-scan), SCAN_SIZES (default the
# sweep's: 2^10 .. 2^30 and 1000, 1000003, 10000019), TORCH_SWEEP (default 2^10:2^28; the
# script checks every output in numpy, which is slow at 2^30), SANITIZER (default: found as scripts/common.sh finds it), REDUCTION_COMMIT (the commit
# recorded when the tree has no .git).
# Exit codes: 0 every step passed; 1 a step failed; 2 a bad argument or value of the
# environment (one sentence, nothing written); 3 no GPU (checked before anything is
# built or written).
set -uo pipefail
program=device_scan.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh
case "${1:-}" in -h | --help) script_help "${BASH_SOURCE[0]}" && exit 0 ;; esac
[ $# -eq 0 ] || refuse "$program" "it takes no arguments ('$1' given); see --help for its environment."
BUILD_DIR=${BUILD_DIR:-/tmp/build-scan}
PRESET="" check_build_env "$program"
[ -z "${OUT:-}" ] || check_output_dir "$program" OUT "$OUT"
powers=""
for k in $(seq 10 30); do powers+="2^$k,"; done
SCAN_SIZES=${SCAN_SIZES:-${powers}1000,1000003,10000019}
[[ $SCAN_SIZES =~ ^[0-9^KMG,]+$ ]] || refuse "$program" "SCAN_SIZES '$SCAN_SIZES' is not a comma-separated list of sizes."
[[ ${TORCH_SWEEP:-2^10:2^28} =~ ^[0-9^KMG]+:[0-9^KMG]+(:[0-9]+)?$ ]] ||
  refuse "$program" "TORCH_SWEEP '${TORCH_SWEEP:-}' is not a sweep such as 2^10:2^30."
detect_gpu "$program"
# shellcheck disable=SC2154  # gpu: set by detect_gpu
RESULTS=results/$gpu
check_output_dir "$program" RESULTS "$RESULTS"
mkdir -p "$RESULTS" || exit 1
status=0
start=$SECONDS
written=()
fail() {
  echo "FAILED: $*"
  status=1
}
step() { echo "=== $* ($((SECONDS - start)) s)"; }

step "build ($BUILD_DIR)"
log=$(scratch_file device_scan_build) && remove_at_exit "$log" || exit 1
if ! BUILD_DIR=$BUILD_DIR timeout 300 bash -c 'source scripts/common.sh && configure_for_device' >"$log" 2>&1 ||
  ! timeout 900 cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target scan scan_host_tests scan_gpu_tests \
    >>"$log" 2>&1; then
  tail -40 "$log"
  exit 1
fi
bin=$BUILD_DIR/scan/scan

step "tests"
{
  for t in scan_host_tests scan_gpu_tests; do
    echo "--- $t"
    timeout 600 "$BUILD_DIR/tests/$t" 2>&1 | tail -60
    rc=${PIPESTATUS[0]}
    # 77 means no GPU was found: on this machine that is a failure, not a skip.
    [ "$rc" -eq 0 ] || echo "FAILED: $t: exit code $rc"
  done
  echo "--- test_scan_cli.py"
  python3 tests/host/test_scan_cli.py "$bin" scripts/time_torch_scan.py 2>&1 | tail -4
  [ "${PIPESTATUS[0]}" -eq 0 ] || echo "FAILED: test_scan_cli.py"
} | tee_atomic "$RESULTS/scan_tests.txt"
grep -q "^FAILED" "$RESULTS/scan_tests.txt" && status=1
written+=("$RESULTS/scan_tests.txt")

for config in "int inclusive" "int exclusive" "float inclusive"; do
  read -r type kind <<<"$config"
  name=scan_${type}_$kind
  step "sweep: $type $kind -> $RESULTS/$name.csv"
  timeout 900 "$bin" --n "$SCAN_SIZES" --type "$type" --kind "$kind" --reps 50 --budget-ms 150 \
    --csv "$RESULTS/$name.csv" 2>&1 | tee_atomic "$RESULTS/$name.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "$name: exit code ${PIPESTATUS[0]}"
  written+=("$RESULTS/$name.csv" "$RESULTS/$name.txt")
done

step "torch.cumsum"
if python3 -c "import torch, numpy" 2>/dev/null; then
  timeout 600 python3 scripts/time_torch_scan.py --sweep "${TORCH_SWEEP:-2^10:2^28}" --reps 50 --budget-ms 150 \
    --csv "$RESULTS/scan_torch.csv" 2>&1 | tee_atomic "$RESULTS/scan_torch.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "time_torch_scan.py"
  written+=("$RESULTS/scan_torch.csv" "$RESULTS/scan_torch.txt")
else
  echo "torch or numpy is not installed here: torch.cumsum is not timed"
fi

step "compute-sanitizer"
sanitizer=$(find_cuda_tool compute-sanitizer "${SANITIZER:-}")
if [ -z "$sanitizer" ] || [ ! -x "$sanitizer" ]; then
  fail "compute-sanitizer was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin; or set SANITIZER)"
else
  {
    for tool in memcheck racecheck synccheck; do
      for config in "int inclusive" "float exclusive"; do
        read -r type kind <<<"$config"
        echo "--- $tool, $type $kind"
        timeout 600 "$sanitizer" --tool "$tool" --error-exitcode 9 "$bin" --run-once --n 1,33,4097,70001 \
          --type "$type" --kind "$kind" 2>&1 | tail -25
        rc=${PIPESTATUS[0]}
        [ "$rc" -eq 0 ] || echo "FAILED: $tool $type $kind: exit code $rc"
      done
    done
  } | tee_atomic "$RESULTS/scan_sanitize.txt"
  grep -q "^FAILED" "$RESULTS/scan_sanitize.txt" && status=1
  written+=("$RESULTS/scan_sanitize.txt")
fi

if [ -n "${OUT:-}" ]; then
  if mkdir -p "$OUT" && tar czf "$OUT/scan_results.tgz" "${written[@]}"; then
    echo "packed ${#written[@]} files into $OUT/scan_results.tgz"
  else
    fail "packing $OUT/scan_results.tgz"
  fi
fi
step "done, exit status $status"
exit $status
