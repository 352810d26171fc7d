#!/usr/bin/env bash
# One call on a GPU machine: the multi-GPU sum (chapters/26_multi_gpu.md) built, its GPU
# test run, and multi_gpu_sum over the sweep for every GPU count up to the number present.
#   scripts/device_multi_gpu.sh
# Writes, with <gpu> from the device's name (h200, h100, ...) and N GPUs present:
#   N > 1:  results/<gpu>x<N>/multi_gpu.csv and .txt       (--gpus 1,2,...,N)
#   N = 1:  results/<gpu>/multi_gpu_1gpu.csv and .txt      (--gpus 1: NCCL with one rank)
#   and multi_gpu_test.txt beside them (the GPU test's output), and topology.txt (how the
#   GPUs are linked: nvidia-smi topo -m and, where there are links, nvidia-smi nvlink -s).
# Steps, each under `timeout`:
#   1. NCCL: the CUDA toolkit's, else NCCL_ROOT, else Python's nvidia-nccl-cu13 wheel.
#   2. configure and build multi_gpu_sum and its GPU test (the test when Catch2 is found).
#   3. the GPU test (every method on one GPU; on every GPU present too).
#   4. multi_gpu_sum --gpus COUNTS --sweep SWEEP --csv ... (stdout into the .txt).
# NCCL_NVLS_ENABLE=0 is exported for every step (NVLink multicast off).
# Environment: OUT (default above), BUILD_DIR (default /tmp/build-multi-gpu), SWEEP (n per
# GPU, default 2^20:2^30), GPU_COUNTS (default 1,2,...,N). Exit code: 0 when every step
# succeeded, 1 when one failed, 2 for arguments, 3 with no GPU.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
# shellcheck source=scripts/common.sh
source scripts/common.sh
if [ $# -gt 0 ]; then
  refuse device_multi_gpu.sh "it takes no arguments ('$1'); set OUT, BUILD_DIR, SWEEP or GPU_COUNTS instead."
fi
BUILD_DIR=${BUILD_DIR:-/tmp/build-multi-gpu}
check_output_dir device_multi_gpu.sh BUILD_DIR "$BUILD_DIR"
[ -z "${OUT:-}" ] || check_output_dir device_multi_gpu.sh OUT "$OUT"
detect_gpu device_multi_gpu.sh
export NCCL_NVLS_ENABLE=0
present=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -c .)
if [ "$present" -gt 1 ]; then
  OUT=${OUT:-results/${gpu}x$present}
  name=multi_gpu
else
  OUT=${OUT:-results/$gpu}
  name=multi_gpu_1gpu
fi
SWEEP=${SWEEP:-2^20:2^30}
GPU_COUNTS=${GPU_COUNTS:-$(seq -s, 1 "$present")}
check_output_dir device_multi_gpu.sh OUT "$OUT"
mkdir -p "$OUT"
status=0
started=$SECONDS
echo "device_multi_gpu.sh on $present x $gpu_name: results into $OUT/$name.*, GPU counts $GPU_COUNTS, sweep $SWEEP," \
  "NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"

step() { echo "=== $1 ($((SECONDS - started)) s) ==="; }

step "topology"
{
  echo "# nvidia-smi topo -m"
  timeout 30 nvidia-smi topo -m 2>&1
  if [ "$present" -gt 1 ]; then
    echo
    echo "# nvidia-smi nvlink -s (per-link speed; empty when the GPUs have no NVLink)"
    timeout 30 nvidia-smi nvlink -s 2>&1
  fi
} 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | tee_atomic "$OUT/topology.txt" >/dev/null # without the terminal's underline codes
head -n 12 "$OUT/topology.txt"

step "NCCL"
nccl_arg=()
cuda_root=$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")
if [ -f "$cuda_root/include/nccl.h" ]; then
  echo "NCCL from the CUDA toolkit ($cuda_root)"
elif [ -n "${NCCL_ROOT:-}" ]; then
  echo "NCCL from NCCL_ROOT ($NCCL_ROOT)"
elif wheel=$(timeout 20 python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null) &&
  [ -f "$wheel/include/nccl.h" ]; then
  echo "NCCL from Python's wheel ($wheel)"
  nccl_arg=(-DREDUCTION_NCCL_ROOT="$wheel")
else
  echo "device_multi_gpu.sh: no NCCL: not in the CUDA toolkit ($cuda_root), NCCL_ROOT is not set and Python has no" \
    "nvidia-nccl-cu13 wheel (pip install nvidia-nccl-cu13)." >&2
  exit 1
fi

step "build"
if ! timeout 600 cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  "${nccl_arg[@]}" >/tmp/device_multi_gpu_build.log 2>&1 ||
  ! timeout 600 cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target multi_gpu_sum \
    >>/tmp/device_multi_gpu_build.log 2>&1; then
  tail -40 /tmp/device_multi_gpu_build.log
  echo "device_multi_gpu.sh: the build failed (log above)."
  exit 1
fi
grep "multi_gpu" /tmp/device_multi_gpu_build.log | grep -i nccl
test_bin=$BUILD_DIR/tests/gpu_multi_gpu_tests
if cmake --build "$BUILD_DIR" --target help 2>/dev/null | grep -q "gpu_multi_gpu_tests"; then
  timeout 600 cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target gpu_multi_gpu_tests \
    >>/tmp/device_multi_gpu_build.log 2>&1 || { tail -40 /tmp/device_multi_gpu_build.log; status=1; }
else
  echo "device_multi_gpu.sh: the tests are not configured (no Catch2; scripts/test.sh installs it): GPU test skipped."
  status=1
fi

step "GPU test"
if [ -x "$test_bin" ]; then
  timeout 300 "$test_bin" 2>&1 | tee_atomic "$OUT/multi_gpu_test.txt"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    echo "device_multi_gpu.sh: the GPU test exited with $rc$([ "$rc" -eq 124 ] && echo " (timed out)")."
    status=1
  fi
fi

step "multi_gpu_sum --gpus $GPU_COUNTS --sweep $SWEEP"
timeout 1200 "$BUILD_DIR/multi_gpu/multi_gpu_sum" --gpus "$GPU_COUNTS" --sweep "$SWEEP" --csv "$OUT/$name.csv" 2>&1 |
  tee_atomic "$OUT/$name.txt"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
  echo "device_multi_gpu.sh: multi_gpu_sum exited with $rc$([ "$rc" -eq 124 ] && echo " (timed out after 1200 s)")."
  status=1
fi
echo "=== done in $((SECONDS - started)) s: $(ls "$OUT"/multi_gpu* 2>/dev/null | tr '\n' ' ')"
exit $status
