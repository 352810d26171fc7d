#!/usr/bin/env bash
# The histogram ladder (histogram/) on a GPU machine, in one call:
#   1. configure and build (Release, sm_90) the runner and its tests in BUILD_DIR, or only
#      bring an existing build of them up to date;
#   2. the host and GPU tests (every stage and CUB, every input and histogram, odd sizes
#      and misalignments, counts exact) and the runner's command-line refusals;
#   3. the sweep, CUB in the same process on the same buffer, into RESULTS (results/<gpu>,
#      from the GPU's name: h200, h100, ...):
#        histogram_256.csv    uniform, skewed and one-value bytes, 256 bins, every power of
#                             two from 2^10 to 2^30 bytes and a few odd sizes
#        histogram_4096.csv   uniform 16-bit values, 4,096 bins, 2^9 to 2^29 values (the
#                             same bytes) and odd sizes
#        histogram_torch.csv  torch.bincount on the same bytes (scripts/time_torch_histogram.py;
#                             skipped, saying so, without torch)
#      each with its table as printed (.txt);
#   4. compute-sanitizer memcheck, racecheck and synccheck over every stage at small sizes
#      and a misaligned input (histogram --run-once): histogram_sanitize.txt.
# Everything printed also goes to RESULTS/histogram_device.txt. When OUT is set (the
# folder a device machine hands back), every file written is also packed into
# OUT/histogram_results.tgz (paths from the repository root; repacked after each step).
# Every step runs under a timeout; the steps after a failed one still run.
#   scripts/device_histogram.sh
# Environment: OUT (above), BUILD_DIR (default /tmp/build-histogram), REPS (timed
# repetitions per row, default 30), BUDGET_MS (per row, default 300), SANITIZER (the
# compute-sanitizer to use; default: found as scripts/common.sh finds it).
# Exit codes: 0 every step passed; 1 a step failed; 2 a bad argument or value of the
# environment (one sentence, nothing written); 3 no GPU (checked before anything is
# built or written).
set -uo pipefail
program=device_histogram.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh
case "${1:-}" in -h | --help) script_help "${BASH_SOURCE[0]}" && exit 0 ;; esac
[ $# -eq 0 ] || refuse "$program" "it takes no arguments ('$1' given); set OUT, BUILD_DIR, REPS or BUDGET_MS instead."
BUILD_DIR=${BUILD_DIR:-/tmp/build-histogram}
REPS=${REPS:-30}
BUDGET_MS=${BUDGET_MS:-300}
check_whole_number "$program" REPS "$REPS" 3 100000
check_whole_number "$program" BUDGET_MS "$BUDGET_MS" 1 1000000
PRESET="" check_build_env "$program"
[ -z "${OUT:-}" ] || check_output_dir "$program" OUT "$OUT"
detect_gpu "$program"
RESULTS=results/$gpu
check_output_dir "$program" RESULTS "$RESULTS"
mkdir -p "$RESULTS" || exit 1
[ -z "${OUT:-}" ] || mkdir -p "$OUT" || exit 1
log_to "$RESULTS/histogram_device.txt"
status=0
start=$SECONDS
bin=$BUILD_DIR/histogram/histogram
written=("$RESULTS/histogram_device.txt")
fail() {
  echo "FAILED: $*"
  status=1
}
pack() {
  [ -n "${OUT:-}" ] || return 0
  local present=()
  for f in "${written[@]}"; do [ -f "$f" ] && present+=("$f"); done
  [ ${#present[@]} -gt 0 ] || return 0
  tar -czf "$OUT/histogram_results.tgz.part" "${present[@]}" && mv "$OUT/histogram_results.tgz.part" "$OUT/histogram_results.tgz"
}
step() { echo "=== $* ($((SECONDS - start)) s)"; }

step "build ($BUILD_DIR) on $gpu_name"
log=$(scratch_file device_histogram_build) && remove_at_exit "$log" || exit 1
# At exit: the scratch files go and the log is put in place (common.sh's trap), then
# everything is packed.
trap '_on_exit; pack' EXIT
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  BUILD_DIR=$BUILD_DIR timeout 300 bash -c 'source scripts/common.sh && configure_for_device' >"$log" 2>&1 || {
    tail -40 "$log"
    exit 1
  }
fi
timeout 900 cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target histogram histogram_host_tests \
  histogram_gpu_tests >>"$log" 2>&1 || {
  tail -40 "$log"
  exit 1
}
if grep -iE "warning" "$log" | grep -qE "histogram|ptxas"; then
  echo "build warnings:"
  grep -iE -A3 "warning" "$log" | head -40
  status=1
fi

step "tests"
for t in histogram_host_tests histogram_gpu_tests; do
  timeout 600 "$BUILD_DIR/tests/$t" 2>&1 | tail -3
  rc=${PIPESTATUS[0]}
  # 77 means no GPU was found: on this machine that is a failure, not a skip.
  [ "$rc" -eq 0 ] || fail "$t: exit code $rc"
done
timeout 120 ctest --test-dir "$BUILD_DIR" -R '^histogram_cli_' 2>&1 | tail -2
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "the command-line refusals (ctest -R histogram_cli_)"

# Every power of two from LO to HI, then the odd sizes, comma-separated.
sizes() {
  local out="" k
  for ((k = $1; k <= $2; k++)); do out+="2^$k,"; done
  echo "$out$3"
}
# --min-reps 1: a row slower than the budget (stage 01 on one value at 2^30) is timed once.
timing=(--reps "$REPS" --min-reps 1 --budget-ms "$BUDGET_MS")
step "sweep: 256 bins, uniform, skewed and one value"
timeout 600 "$bin" --n "$(sizes 10 30 1000003,16777259,100000007)" --input uniform,skewed,one --bins 256 \
  "${timing[@]}" --csv "$RESULTS/histogram_256.csv" | tee_atomic "$RESULTS/histogram_256.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "histogram --bins 256"
written+=("$RESULTS/histogram_256.csv" "$RESULTS/histogram_256.txt")
pack
step "sweep: 4096 bins, uniform"
timeout 300 "$bin" --n "$(sizes 9 29 500001,50000017)" --input uniform --bins 4096 "${timing[@]}" \
  --csv "$RESULTS/histogram_4096.csv" | tee_atomic "$RESULTS/histogram_4096.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "histogram --bins 4096"
written+=("$RESULTS/histogram_4096.csv" "$RESULTS/histogram_4096.txt")
pack

step "torch.bincount"
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  timeout 300 python3 scripts/time_torch_histogram.py --n "$(sizes 10 30 1000003,16777259,100000007)" \
    --input uniform,skewed,one "${timing[@]}" --csv "$RESULTS/histogram_torch.csv" |
    tee_atomic "$RESULTS/histogram_torch.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "time_torch_histogram.py"
  written+=("$RESULTS/histogram_torch.csv" "$RESULTS/histogram_torch.txt")
else
  echo "torch with CUDA is not installed here: no torch.bincount rows."
fi
pack

step "compute-sanitizer"
sanitizer=$(find_cuda_tool compute-sanitizer "${SANITIZER:-}")
if [ -z "$sanitizer" ] || [ ! -x "$sanitizer" ]; then
  fail "compute-sanitizer was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin; or set SANITIZER)"
else
  : >"$RESULTS/histogram_sanitize.txt.part"
  for tool in memcheck racecheck synccheck; do
    for bins in 256 4096; do
      # Small sizes, one of them odd, and an input 6 bytes past a 16-byte boundary.
      stages=1-6
      [ "$tool" != memcheck ] || stages=all # CUB's own kernels under memcheck only
      args=(--run-once --n "1,4099,100003" --input "uniform,skewed,one" --bins "$bins" --offset 6 --stages "$stages")
      text=$(timeout 300 "$sanitizer" --tool "$tool" --error-exitcode 99 "$bin" "${args[@]}" 2>&1)
      rc=$?
      {
        echo "--- $tool, $bins bins: exit code $rc"
        echo "$text" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAIL" || true
      } | tee -a "$RESULTS/histogram_sanitize.txt.part"
      [ "$rc" -eq 0 ] || fail "compute-sanitizer --tool $tool, $bins bins (exit code $rc)"
    done
  done
  mv "$RESULTS/histogram_sanitize.txt.part" "$RESULTS/histogram_sanitize.txt"
  written+=("$RESULTS/histogram_sanitize.txt")
fi

step "done: $([ "$status" -eq 0 ] && echo 'every step passed' || echo 'a step FAILED')"
[ -z "${OUT:-}" ] || echo "packed into $OUT/histogram_results.tgz at exit (unpack at the repository root)"
exit "$status"
