#!/usr/bin/env bash
# One call on a GPU machine for the single-pass library (single_pass/): its GPU tests, the
# sanitizer over it, and its table against CUB, into results/<gpu>/ (<gpu> from the
# device's name: h200, h100, ...).
#   scripts/device_library.sh
# Steps, each under `timeout`:
#   1. configure and build the library's tests, its example and the runner (sm_90);
#   2. ctest for gpu_generic_tests, gpu_single_pass_two_files, gpu_single_pass_large and
#      single_pass_example (each also under its ctest TIMEOUT) -> library_ctest.txt;
#   3. scripts/sanitize_library.sh -> sanitize_library.txt and sanitize_library/;
#   4. reduce --sweep SWEEP --stages library,cub -> library_sweep.csv / .txt (the runner's
#      measuring core; the CSV carries the device, driver, commit and date).
# Environment: OUT (default results/<gpu>), BUILD_DIR (default /tmp/build-library), SWEEP
# (default 2^10:2^30), STEPS (default "build test sanitize sweep"). Exit code: 0 when every
# step succeeded, 1 when one failed, 2 bad usage, 3 no GPU.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh
if [ $# -gt 0 ]; then
  refuse device_library.sh "it takes no arguments ('$1'); set OUT, BUILD_DIR, SWEEP or STEPS instead."
fi
export BUILD_DIR=${BUILD_DIR:-/tmp/build-library}
SWEEP=${SWEEP:-2^10:2^30}
STEPS=${STEPS:-build test sanitize sweep}
for step in $STEPS; do
  case "$step" in
    build | test | sanitize | sweep) ;;
    *) refuse device_library.sh "STEPS: unknown step '$step' (allowed: build test sanitize sweep)." ;;
  esac
done
PRESET="" check_build_env device_library.sh
[ -z "${OUT:-}" ] || check_output_dir device_library.sh OUT "$OUT"
detect_gpu device_library.sh
OUT=${OUT:-results/$gpu}
check_output_dir device_library.sh OUT "$OUT"
mkdir -p "$OUT"
status=0
started=$SECONDS
echo "device_library.sh on $gpu_name: results into $OUT, build in $BUILD_DIR"

for step in $STEPS; do
  echo "=== $step ($((SECONDS - started)) s) ==="
  case "$step" in
    build)
      if ! { timeout 300 bash -c 'source scripts/common.sh && configure_for_device' &&
        timeout 600 cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target gpu_generic_tests \
          gpu_single_pass_two_files gpu_single_pass_large single_pass_example reduce; } \
        >/tmp/device_library_build.log 2>&1; then
        tail -40 /tmp/device_library_build.log
        echo "device_library.sh: the build failed (log above)."
        exit 1
      fi
      ;;
    test)
      timeout 1800 ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 600 \
        -R '^(gpu_generic_tests|gpu_single_pass_two_files|gpu_single_pass_large|single_pass_example)$' 2>&1 |
        tee_atomic "$OUT/library_ctest.txt" | tail -25
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
    sanitize)
      timeout 3600 scripts/sanitize_library.sh "$OUT" --build "$BUILD_DIR" || status=1
      ;;
    sweep)
      timeout 900 "$BUILD_DIR/reduction/reduce" --sweep "$SWEEP" --stages library,cub --csv "$OUT/library_sweep.csv" \
        2>&1 | tee_atomic "$OUT/library_sweep.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
    *)
      echo "device_library.sh: unknown step '$step' (allowed: build test sanitize sweep)" >&2
      exit 2
      ;;
  esac
done
echo "=== done in $((SECONDS - started)) s (exit $status)"
exit $status
