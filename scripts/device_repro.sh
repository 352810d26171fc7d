#!/usr/bin/env bash
# One call on a GPU machine: stage 16 against stage 15 and CUB over the sweep, and stage
# 16's GPU tests, into results/<gpu>/repro_* (<gpu> from the device's name: h200, h100, ...).
#   scripts/device_repro.sh
# Steps, each under `timeout`:
#   1. configure and build build/reduction/reduce and the stage 16 GPU tests.
#   2. tests   gpu_reproducible_tests (bits across block sizes, grids, offsets and the
#              host replay of the order) -> repro_tests.txt; skipped with TESTS=0.
#   3. sweep   reduce --sweep SWEEP --stages 15,16,cub -> repro_sweep.csv / .txt
# Environment: OUT (default results/<gpu>), BUILD_DIR (default build), SWEEP (default
# 2^10:2^30), TESTS (default 1). Exit code: 0 when every step that ran succeeded, else 1;
# 2 for an argument; 3 when no GPU is visible.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
if [ $# -gt 0 ]; then
  echo "device_repro.sh: it takes no arguments ('$1'); set OUT, BUILD_DIR, SWEEP or TESTS instead." >&2
  exit 2
fi
TESTS=${TESTS:-1}
if [ "$TESTS" != 0 ] && [ "$TESTS" != 1 ]; then
  echo "device_repro.sh: TESTS is '$TESTS'; it must be 0 or 1." >&2
  exit 2
fi
# shellcheck source=scripts/common.sh
source scripts/common.sh
detect_gpu device_repro.sh
OUT=${OUT:-results/$gpu}
BUILD_DIR=${BUILD_DIR:-build}
SWEEP=${SWEEP:-2^10:2^30}
mkdir -p "$OUT"
status=0
started=$SECONDS
echo "device_repro.sh on $gpu_name: results into $OUT, sweep $SWEEP"

step() { echo "=== $1 ($((SECONDS - started)) s) ==="; }

step "build"
targets=(reduce)
[ "$TESTS" = 1 ] && targets+=(gpu_reproducible_tests)
# The device configure of scripts/common.sh (tests on, Catch2 from .deps/ when there).
export BUILD_DIR
if ! timeout 300 bash -c 'source scripts/common.sh && configure_for_device' >/tmp/device_repro_build.log 2>&1 ||
  ! timeout 300 cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target "${targets[@]}" \
    >>/tmp/device_repro_build.log 2>&1; then
  tail -40 /tmp/device_repro_build.log
  echo "device_repro.sh: the build failed (log above)."
  exit 1
fi

if [ "$TESTS" = 1 ]; then
  step "tests"
  timeout 400 "$BUILD_DIR/tests/gpu_reproducible_tests" 2>&1 | tee "$OUT/repro_tests.txt" | tail -20
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    echo "device_repro.sh: gpu_reproducible_tests exited with $rc$([ "$rc" -eq 124 ] && echo " (timed out)")."
    status=1
  fi
fi

step "sweep"
timeout 300 "$BUILD_DIR/reduction/reduce" --sweep "$SWEEP" --stages 15,16,cub --csv "$OUT/repro_sweep.csv" 2>&1 |
  tee "$OUT/repro_sweep.txt"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
  echo "device_repro.sh: the sweep exited with $rc$([ "$rc" -eq 124 ] && echo " (timed out)")."
  status=1
fi
echo "=== done in $((SECONDS - started)) s: $(find "$OUT" -maxdepth 1 -name 'repro_*' | sort | tr '\n' ' ')"
exit $status
