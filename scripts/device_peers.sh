#!/usr/bin/env bash
# One call on a GPU machine: the peers and the ceiling over the sweep, into
# results/<gpu>/peers_*.csv and .txt (<gpu> from the device's name: h200, h100, ...).
#   scripts/device_peers.sh
# Steps, each under `timeout` (about 2 to 3 minutes in all; at most 5):
#   1. CCCL 3.5's headers: .deps/cccl/include when it is there (carry it to a machine
#      with no internet), else scripts/get_cccl.sh; without them cub_modes is skipped.
#   2. configure and build peers/ceiling and peers/cub_modes (no tests).
#   3. ceiling     --sweep SWEEP -> peers_ceiling.csv / .txt
#   4. cub_modes   --sweep SWEEP -> peers_cub_modes.csv / .txt
#   5. scripts/time_torch_cupy.py --sweep SWEEP -> peers_torch_cupy.csv / .txt (a library
#      that is not installed is skipped with a sentence; with neither, no CSV).
# Environment: OUT (default results/<gpu>), BUILD_DIR (default /tmp/build-peers), SWEEP
# (default 2^10:2^30). Exit code: 0 when every step that ran succeeded, else 1.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh
if [ $# -gt 0 ]; then
  refuse device_peers.sh "it takes no arguments ('$1'); set OUT, BUILD_DIR or SWEEP instead."
fi
BUILD_DIR=${BUILD_DIR:-/tmp/build-peers}
check_output_dir device_peers.sh BUILD_DIR "$BUILD_DIR"
[ -z "${OUT:-}" ] || check_output_dir device_peers.sh OUT "$OUT"
detect_gpu device_peers.sh
OUT=${OUT:-results/$gpu}
SWEEP=${SWEEP:-2^10:2^30}
check_output_dir device_peers.sh OUT "$OUT"
mkdir -p "$OUT"
status=0
started=$SECONDS
echo "device_peers.sh on $gpu_name: results into $OUT, sweep $SWEEP"

step() { echo "=== $1 ($((SECONDS - started)) s) ==="; }

step "CCCL headers"
cccl=.deps/cccl/include
if [ ! -f "$cccl/cub/device/device_reduce.cuh" ]; then
  timeout 30 scripts/get_cccl.sh || echo "device_peers.sh: no CCCL headers (carry .deps/cccl or run scripts/get_cccl.sh where PyPI is reachable); cub_modes is skipped."
fi
cccl_arg=()
[ -f "$cccl/cub/device/device_reduce.cuh" ] && cccl_arg=(-DREDUCTION_CCCL_INCLUDE="$PWD/$cccl")

step "build"
targets=(ceiling)
[ ${#cccl_arg[@]} -gt 0 ] && targets+=(cub_modes)
if ! timeout 100 bash -c 'cmake -S . -B "$0" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DREDUCTION_BUILD_TESTS=OFF "${@:1:$#-1}" && cmake --build "$0" --parallel "$(nproc)" --target ${@: -1}' \
      "$BUILD_DIR" "${cccl_arg[@]}" "${targets[*]}" >/tmp/device_peers_build.log 2>&1; then
  tail -40 /tmp/device_peers_build.log
  echo "device_peers.sh: the build failed (log above)."
  exit 1
fi

# run NAME SECONDS COMMAND...: the command's stdout and stderr into OUT/peers_NAME.txt
# (and on the screen); a failure or a timeout is reported and the next step still runs.
run() {
  local name=$1 limit=$2
  shift 2
  step "$name"
  timeout "$limit" "$@" 2>&1 | tee_atomic "$OUT/peers_$name.txt"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    echo "device_peers.sh: $name exited with $rc$([ "$rc" -eq 124 ] && echo " (timed out after $limit s)")."
    status=1
  fi
}

run ceiling 40 "$BUILD_DIR/peers/ceiling" --sweep "$SWEEP" --csv "$OUT/peers_ceiling.csv"
if [ -x "$BUILD_DIR/peers/cub_modes" ] && [ ${#cccl_arg[@]} -gt 0 ]; then
  run cub_modes 60 "$BUILD_DIR/peers/cub_modes" --sweep "$SWEEP" --csv "$OUT/peers_cub_modes.csv"
fi
run torch_cupy 90 python3 scripts/time_torch_cupy.py --sweep "$SWEEP" --csv "$OUT/peers_torch_cupy.csv"
echo "=== done in $((SECONDS - started)) s: $(ls "$OUT"/peers_* 2>/dev/null | tr '\n' ' ')"
exit $status
