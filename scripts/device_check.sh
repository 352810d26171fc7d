#!/usr/bin/env bash
# One call on a GPU machine: build, run the GPU tests, print the tables, and write
# the result files. Steps (any subset, in this order): build test table sweep sanitize
# profile flush experiments.
#   OUT=results/h200 scripts/device_check.sh build test table
# Environment: OUT (where result files go, default results/h200), BUILD_DIR
# (default /tmp/build-gpu), TABLE_SIZES (default "24 28"), SWEEP (default 2^10:2^30),
# SWEEP_STAGES (default: every stage from 12 on, as reduce --list has them, and cub),
# PROFILE_N (default 2^24), EXPERIMENTS (default: every lab experiment, as CMake lists
# them in $BUILD_DIR/experiments/list.txt), and CMAKE_PREFIX_PATH if
# Catch2 lives somewhere unusual (a .deps/ folder in the repository is used
# automatically).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh
OUT=${OUT:-results/h200}
BUILD_DIR=${BUILD_DIR:-/tmp/build-gpu}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build test table)
status=0

# The stages the sweep and the write-flush tables compare: every stage from 12 on, read
# from the registry (reduce --list), so a new stage needs no edit here; then cub.
stages_from_12() {
  "$BUILD_DIR/reduction/reduce" --list --format csv | awk -F, '$3 == "stage" && $1 + 0 >= 12 { printf "%s,", $1 }'
  echo cub
}

for step in "${steps[@]}"; do
  echo "=== $step ==="
  case "$step" in
    build)
      configure_for_device >"$OUT/build.log" 2>&1 &&
        cmake --build "$BUILD_DIR" --parallel "$(nproc)" >>"$OUT/build.log" 2>&1 || {
        tail -40 "$OUT/build.log"
        exit 1
      }
      ;;
    test)
      ctest --test-dir "$BUILD_DIR" --output-on-failure 2>&1 | tee "$OUT/ctest.txt" | tail -25
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
    table)
      for k in ${TABLE_SIZES:-24 28}; do
        "$BUILD_DIR/reduction/reduce" --n "2^$k" --csv "$OUT/reduce_2p$k.csv" 2>&1 | tee "$OUT/reduce_2p$k.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
      ;;
    sweep)
      "$BUILD_DIR/reduction/reduce" --sweep "${SWEEP:-2^10:2^30}" --stages "${SWEEP_STAGES:-$(stages_from_12)}" \
        --csv "$OUT/sweep.csv" 2>&1 | tee "$OUT/sweep.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
    sanitize)
      scripts/sanitize.sh --build "$BUILD_DIR" --out "$OUT/sanitize.txt" || status=1
      ;;
    profile)
      # Nsight Compute over every stage and baseline, every mixed-precision variant and
      # a few occupancy configurations; reports and exports stay in $OUT/profile.
      scripts/profile.sh --build "$BUILD_DIR" --out "$OUT/profile" --n "${PROFILE_N:-2^24}" || status=1
      scripts/profile.sh --program mixed_precision --build "$BUILD_DIR" --out "$OUT/profile" \
        --n "${PROFILE_N:-2^24}" || status=1
      scripts/profile.sh --program occupancy --build "$BUILD_DIR" --out "$OUT/profile" || status=1
      for t in ncu_metrics ncu_metrics_mixed_precision ncu_metrics_occupancy; do
        for ext in csv txt; do [ -f "$OUT/profile/$t.$ext" ] && cp "$OUT/profile/$t.$ext" "$OUT/"; done
      done
      ;;
    flush)
      # The same stages with the old flush (a memset, which leaves dirty lines in L2),
      # to compare with the tables above (chapter 00, "How we time").
      for k in 28 30; do
        "$BUILD_DIR/reduction/reduce" --n "2^$k" --stages "$(stages_from_12)" --flush write \
          --csv "$OUT/reduce_2p${k}_write_flush.csv" 2>&1 | tee "$OUT/reduce_2p${k}_write_flush.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
      ;;
    experiments)
      list="$BUILD_DIR/experiments/list.txt"
      if [ -z "${EXPERIMENTS:-}" ] && [ ! -f "$list" ]; then
        echo "experiments: $list is missing; configure $BUILD_DIR first (the build step does)" >&2
        status=1
        continue
      fi
      for e in ${EXPERIMENTS:-$(cat "$list")}; do
        "$BUILD_DIR/experiments/$e" --csv "$OUT/experiment_$e.csv" 2>&1 |
          tee "$OUT/experiment_$e.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
      ;;
    *)
      echo "unknown step '$step' (allowed: build test table sweep sanitize profile flush experiments)" >&2
      exit 2
      ;;
  esac
done
exit $status
